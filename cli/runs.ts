import { WorkflowExecutionAlreadyStartedError, WorkflowNotFoundError, type Client } from '@temporalio/client';
import { TypedSearchAttributes } from '@temporalio/common';
import { setTimeout as sleep } from 'node:timers/promises';
import type { ManifestOutcome } from '../workflows/manifest';
import {
  approveSignal,
  pauseSignal,
  progressQuery,
  resumeSignal,
  rollbackSignal,
  type Progress,
  type Request,
} from '../workflows/messages';
import { planManifest, type ManifestDocuments } from '../workflows/plan/manifest';
import { objectWorkflowId } from '../workflows/plan/names';
import { ArmadaKind, ArmadaName, ArmadaNamespace, ArmadaPhase } from '../workflows/search-attributes';

/** The workflow of a manifest: its ID is its lock, so one manifest has one run at a time. */
export function manifestWorkflowId(namespace: string, name: string): string {
  return objectWorkflowId('ArmadaManifest', namespace, name);
}

/** Starts a manifest run. Refuses, naming the run, when one is already in progress. */
export async function startManifest(
  client: Client,
  docs: ManifestDocuments,
  taskQueue: string,
  mode: 'deploy' | 'uninstall' = 'deploy',
): Promise<string> {
  const plan = planManifest(docs);
  const workflowId = manifestWorkflowId(plan.namespace, plan.manifest);
  const charts = plan.groups.reduce((n, g) => n + g.charts.length, 0);
  try {
    await client.workflow.start('manifestWorkflow', {
      taskQueue,
      workflowId,
      args: [{ plan, mode }],
      staticSummary: `ArmadaManifest ${plan.namespace}/${plan.manifest}: ${plan.groups.length} groups × ${charts} charts`,
      typedSearchAttributes: new TypedSearchAttributes([
        { key: ArmadaKind, value: 'ArmadaManifest' },
        { key: ArmadaName, value: plan.manifest },
        { key: ArmadaNamespace, value: plan.namespace },
        { key: ArmadaPhase, value: 'Pending' },
      ]),
    });
  } catch (err) {
    if (err instanceof WorkflowExecutionAlreadyStartedError) {
      throw new Error(
        `manifest ${plan.namespace}/${plan.manifest} already has a run in progress (workflow ${workflowId}); ` +
          `follow it with \`armadactl status ${plan.manifest}\` or stop it with \`armadactl rollback ${plan.manifest}\``,
        { cause: err },
      );
    }
    throw err;
  }
  return workflowId;
}

/** The progress of a run, read by the query; a clear error when there is no such run. */
export async function progressOf(client: Client, workflowId: string): Promise<Progress> {
  try {
    return await client.workflow.getHandle(workflowId).query(progressQuery);
  } catch (err) {
    if (err instanceof WorkflowNotFoundError)
      throw new Error(`no run of ${workflowId}; start one with \`armadactl apply\``, { cause: err });
    throw err;
  }
}

const signals = {
  pause: pauseSignal,
  resume: resumeSignal,
  approve: approveSignal,
  rollback: rollbackSignal,
};
export type ControlCommand = keyof typeof signals;

/** Sends pause/resume/approve/rollback to a running manifest. */
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

/** Progress as plain lines: one per group, one per chart under it. */
export function formatProgress(p: Progress): string[] {
  const lines = [
    `phase: ${p.phase}${p.waitingOn ? ` (waiting on ${p.waitingOn})` : ''}${p.paused ? ` — paused since ${p.paused.since}${p.paused.by ? ` by ${p.paused.by}` : ''}` : ''}`,
  ];
  for (const g of p.groups) {
    lines.push(`group ${g.name} (${g.sequenced ? 'sequenced' : 'parallel'}): ${g.state}`);
    for (const c of g.charts) {
      const rev = c.revision ? ` rev ${c.revision}` : '';
      lines.push(
        `  ${c.chart.padEnd(20)} ${`${c.namespace}/${c.release}`.padEnd(32)} ${c.state}${rev}${c.error ? `: ${c.error.split('\n')[0]}` : ''}`,
      );
    }
  }
  return lines;
}

/**
 * Follows a run until it ends, printing each change of its progress; returns the outcome, or
 * throws the run's failure.
 */
export async function follow(
  client: Client,
  workflowId: string,
  print: (line: string) => void,
): Promise<ManifestOutcome> {
  const handle = client.workflow.getHandle(workflowId);
  const result = handle.result() as Promise<ManifestOutcome>;
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
