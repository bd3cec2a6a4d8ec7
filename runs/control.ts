import { WorkflowNotFoundError, type Client } from '@temporalio/client';
import { setTimeout as sleep } from 'node:timers/promises';
import {
  approveSignal,
  pauseSignal,
  progressQuery,
  promoteSignal,
  resumeSignal,
  rollbackSignal,
  type Request,
} from '../workflows/messages';
import type { RunMemo } from '../workflows/plan/specs';
import { formatProgress, type AnyProgress } from './progress';
import { noRun } from './targets';

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

const signals = {
  pause: pauseSignal,
  resume: resumeSignal,
  approve: approveSignal,
  promote: promoteSignal,
  rollback: rollbackSignal,
};
export type ControlCommand = keyof typeof signals;

/** Sends pause/resume/approve/promote/rollback to a running manifest or canary. */
export async function control(
  client: Client,
  workflowId: string,
  command: ControlCommand,
  req: Request,
): Promise<void> {
  const handle = client.workflow.getHandle(workflowId);
  let status;
  try {
    status = (await handle.describe()).status.name;
  } catch (err) {
    if (err instanceof WorkflowNotFoundError)
      throw new Error(`no run of ${workflowId}; nothing to ${command}`, { cause: err });
    throw err;
  }
  if (status !== 'RUNNING')
    throw new Error(
      `the run of ${workflowId} is ${status.toLowerCase()}, not running; nothing to ${command}`,
    );
  await handle.signal(signals[command], req);
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

export interface RunState {
  runId: string;
  running: boolean;
  status: string;
  memo: RunMemo;
}

/** The latest run of a workflow ID, or null when there is none (never started, or forgotten). */
export async function latestRun(client: Client, workflowId: string): Promise<RunState | null> {
  try {
    const description = await client.workflow.getHandle(workflowId).describe();
    return {
      runId: description.runId,
      running: description.status.name === 'RUNNING',
      status: description.status.name,
      memo: (description.memo ?? {}) as unknown as RunMemo,
    };
  } catch (err) {
    if (err instanceof WorkflowNotFoundError) return null;
    throw err;
  }
}
