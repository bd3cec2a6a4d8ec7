import {
  WorkflowNotFoundError,
  WorkflowUpdateFailedError,
  type Client,
  type WorkflowExecutionDescription,
} from '@temporalio/client';
import { randomUUID } from 'node:crypto';
import { setTimeout as sleep } from 'node:timers/promises';
import {
  approveUpdate,
  pauseSignal,
  progressQuery,
  promoteUpdate,
  resumeSignal,
  rollbackSignal,
} from '../workflows/messages';
import { rootMessage } from '../core/failures';
import type { AnyProgress } from '../core/progress';
import type { Approval, Request } from '../core/control';
import type { RunMemo } from '../core/plan/specs';
import { canaryWorkflowId } from '../core/plan/names';
import { chartMessageAtRun, type ObjectRef } from '../core/plan/run-objects';
import { holdsLockOnly, type RunState } from '../core/bridge/decide-run';
import { formatProgress } from './progress';
import type { SteeringSigner } from './steering-key';
import { noRun, type Route, type Verb } from './targets';

/** The progress of a run (a manifest's or a canary's), read by the query; a clear error when there is no such run. */
export async function progressOf(client: Client, workflowId: string): Promise<AnyProgress> {
  try {
    return await client.workflow.getHandle(workflowId).query(progressQuery);
  } catch (err) {
    if (err instanceof WorkflowNotFoundError) throw noRun(workflowId, err);
    throw err;
  }
}

/** The latest run of a workflow ID and its progress, as `status --output json` prints it. */
export interface RunStatus {
  workflowId: string;
  runId: string;
  /** Temporal's status of the run: RUNNING, COMPLETED, FAILED, CONTINUED_AS_NEW, ... */
  status: string;
  specs: string | null;
  progress: AnyProgress;
}

/** The latest run of a workflow ID (describe) with its progress (query). */
export async function statusOf(client: Client, workflowId: string): Promise<RunStatus> {
  let description;
  try {
    description = await client.workflow.getHandle(workflowId).describe();
  } catch (err) {
    if (err instanceof WorkflowNotFoundError) throw noRun(workflowId, err);
    throw err;
  }
  const { runId, status, memo } = description;
  const progress = await progressOf(client, workflowId);
  return {
    workflowId,
    runId,
    status: status.name,
    specs: (memo as RunMemo | undefined)?.specs ?? null,
    progress,
  };
}

/** The control commands, as armadactl and the action annotation name them. */
export const CONTROL_COMMANDS = ['pause', 'resume', 'approve', 'promote', 'rollback', 'cancel'] as const;
export type ControlCommand = (typeof CONTROL_COMMANDS)[number];

/** A command that went nowhere, or that the run refused; the message says why and what to do. */
export class ControlRefused extends Error {
  override name = 'ControlRefused';
}

/** What a control command did: the run that took it, and its answer. */
export interface ControlResult {
  workflowId: string;
  answer: string;
}

/**
 * Sends a control command along its route (runs/targets.ts, routeOf) to the first run on it
 * that is running. Approve and promote are Updates: the run's refusal comes back as
 * ControlRefused. Pause and resume are checked against the run's progress first (pausing a
 * paused run, resuming one that is not paused), so nothing is sent that would do nothing.
 * Cancel is Temporal's cancellation (cancelRun). With `signer` (the bridge), every message carries
 * the bridge's proof: the run records it as the API server's authenticated user's.
 */
export async function control(
  client: Client,
  route: Route,
  command: ControlCommand,
  unsigned: Approval,
  signer?: SteeringSigner,
): Promise<ControlResult> {
  if ('refused' in route) throw new ControlRefused(route.refused);
  const workflowId = await firstRunning(client, route.workflowIds, command);
  const named = route.target ? { ...unsigned, target: route.target } : unsigned;
  const fields = command === 'approve' ? { ...named, gate: unsigned.gate ?? route.gate } : named;
  // Signed for the run it goes to (core/plan/steering.ts); cancel is Temporal's own, with no payload.
  const req: Approval =
    signer && command !== 'cancel' ? { ...fields, proof: signer.prove(workflowId, command, fields) } : fields;
  const handle = client.workflow.getHandle(workflowId);
  const refused = (why: string) => new ControlRefused(`${command} refused by ${workflowId}: ${why}`);
  try {
    switch (command) {
      case 'approve': {
        const answer = await handle.executeUpdate(approveUpdate, { args: [req] });
        return { workflowId, answer };
      }
      case 'promote':
        return { workflowId, answer: await handle.executeUpdate(promoteUpdate, { args: [req] }) };
      case 'pause':
      case 'resume': {
        const progress = await handle.query(progressQuery).catch(() => undefined);
        const paused = progress?.paused;
        if (command === 'pause' && paused)
          throw refused(`paused already since ${paused.since}${paused.by ? ` by ${paused.by}` : ''}`);
        if (command === 'resume' && paused === undefined) throw refused('it is not paused');
        const landing = await chartLanding(client, command, route.target, workflowId, progress);
        await handle.signal(command === 'pause' ? pauseSignal : resumeSignal, req);
        const answer = command === 'pause' ? 'pausing at the next safe point' : 'resumed';
        return { workflowId, answer: answer + landing };
      }
      case 'rollback': {
        const progress = route.target && (await handle.query(progressQuery).catch(() => undefined));
        const landing = await chartLanding(client, command, route.target, workflowId, progress);
        await handle.signal(rollbackSignal, req);
        const answer = 'rolling back: no more charts or steps start, then this run is undone';
        return { workflowId, answer: answer + landing };
      }
      case 'cancel':
        await cancelRun(client, workflowId, req);
        return {
          workflowId,
          answer: 'cancelling: running Helm calls finish, nothing new starts, then the run ends cancelled',
        };
    }
  } catch (err) {
    if (err instanceof WorkflowUpdateFailedError) throw refused(rootMessage(err));
    throw err;
  }
}

/**
 * What the answer to a pause, resume or rollback naming a chart (`target`, a manifest's chart)
 * adds when the run deploying the chart takes it rather than the chart's canary: that the run
 * passes it on to the canary, or takes it as a whole (chartMessageAtRun); refused, before it is
 * sent, for a chart the run's plan (its progress) does not hold. Nothing for a canary's own.
 */
async function chartLanding(
  client: Client,
  verb: 'pause' | 'resume' | 'rollback',
  target: ObjectRef | undefined,
  workflowId: string,
  progress: AnyProgress | undefined,
): Promise<string> {
  if (target?.kind !== 'ArmadaChart') return '';
  const canary = canaryWorkflowId(target.namespace, target.name);
  if (workflowId === canary) return '';
  const planned =
    progress && 'groups' in progress
      ? progress.groups.flatMap((g) => g.charts.map((c) => c.chart))
      : undefined;
  const running = (await latestRun(client, canary))?.running ?? false;
  const landing = chartMessageAtRun(verb, target, workflowId, planned, { workflowId: canary, running });
  if ('refused' in landing) throw new ControlRefused(`${verb} refused: ${landing.refused}`);
  return `; ${landing.note}`;
}

/**
 * Cancels the latest run of a workflow ID (Temporal's cancellation), which every armada workflow
 * takes as a clean stop (workflows/control.ts, RunControl): Helm calls in flight finish, nothing
 * new starts, `on_failure: rollback` undoes the run, and it ends cancelled. Who asked and why
 * stand in its history: the identity and the cause of its WorkflowExecutionCancelRequested event
 * (the SDK's handle.cancel() sends neither).
 */
export async function cancelRun(client: Client, workflowId: string, req: Request): Promise<void> {
  try {
    await client.workflowService.requestCancelWorkflowExecution({
      namespace: client.options.namespace,
      workflowExecution: { workflowId },
      identity: req.by ?? client.options.identity,
      reason: req.reason ?? '',
      requestId: randomUUID(),
    });
  } catch (err) {
    throw new Error(`cannot cancel ${workflowId}: ${(err as Error).message}`, { cause: err });
  }
}

/** The first of `workflowIds` with a running run; ControlRefused, naming what was found, when none runs. */
export async function firstRunning(client: Client, workflowIds: string[], verb: Verb): Promise<string> {
  const found: string[] = [];
  for (const workflowId of workflowIds) {
    const run = await latestRun(client, workflowId);
    // A drift repair or an undo holding the owner's ID takes no steering (its progress and a cancel, yes): say so
    // rather than send it a message it drops.
    if (run?.running && verb !== 'cancel' && verb !== 'progress' && holdsLockOnly(run.type))
      throw new ControlRefused(
        `nothing to ${verb}: ${workflowId} runs ${run.type} run ${run.runId} (a drift repair or an undo of a release it owns), not a deploy; it ends in seconds to minutes, try again then`,
      );
    if (run?.running) return workflowId;
    found.push(run ? `${workflowId} is ${run.status.toLowerCase()}` : `${workflowId} has never run`);
  }
  throw new ControlRefused(`nothing to ${verb}: ${found.join('; ') || 'no run drives it'}`);
}

/**
 * Follows a run until it ends, printing each change of its progress; returns the outcome, or
 * throws the run's failure.
 */
export async function follow<Outcome>(
  client: Client,
  workflowId: string,
  print: (line: string) => void,
): Promise<Outcome> {
  const handle = client.workflow.getHandle(workflowId);
  const result = handle.result() as Promise<Outcome>;
  let ended = false;
  const settled = result.then(
    () => (ended = true),
    () => (ended = true),
  );
  let last = '';
  while (!ended) {
    const text = await handle
      .query(progressQuery)
      .then((p) => formatProgress(p).join('\n'))
      .catch(() => last);
    if (text !== last) {
      print(text);
      last = text;
    }
    await Promise.race([settled, sleep(1000)]);
  }
  return result;
}

/** The latest run of a workflow ID, or null when there is none (never started, or forgotten). */
export async function latestRun(client: Client, workflowId: string): Promise<RunState | null> {
  const description = await describeLatest(client, workflowId);
  return description && runStateOf(description);
}

/** Temporal's description of the latest run of a workflow ID, or null when there is none. */
export async function describeLatest(
  client: Client,
  workflowId: string,
): Promise<WorkflowExecutionDescription | null> {
  try {
    return await client.workflow.getHandle(workflowId).describe();
  } catch (err) {
    if (err instanceof WorkflowNotFoundError) return null;
    throw err;
  }
}

/** A run as the bridge decides by it (RunState), from Temporal's description. */
export function runStateOf(description: WorkflowExecutionDescription): RunState {
  return {
    runId: description.runId,
    type: description.type,
    running: description.status.name === 'RUNNING',
    status: description.status.name,
    memo: (description.memo ?? {}) as unknown as RunMemo,
    startedAt: description.startTime.getTime(),
  };
}
