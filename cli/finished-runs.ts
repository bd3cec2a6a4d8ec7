import type { Client } from '@temporalio/client';
import { connect, temporalTarget } from '../runs/connect';
import { retryRequest, undoRequest } from '../runs/day-two';
import { placeByName, placeFromCluster } from '../runs/places';
import { startRun, type RunRequest } from '../runs/requests';
import type { ObjectPlace, Target } from '../runs/targets';
import type { UndoOutcome } from '../core/contracts/workflows';
import { deployerOutcomeOf } from '../core/plan/finished-runs';
import { rootMessage } from '../core/failures';
import { UsageError, type CommandOption, type Print } from './command';

/**
 * armadactl's commands on an object's finished runs (docs/how-to/operate-runs.md, "Day-two operations"): undo one
 * (`rollback --to-run RUN_ID | --previous [--now]`) and retry a failed one (`retry`). Each
 * starts a run of its own, follows it to its end and prints what it did; exit 1 when it is
 * refused or fails, naming why.
 */

/** The rollback options that undo a finished run instead of steering the running one. */
export const UNDO_OPTIONS: Record<string, CommandOption> = {
  'to-run': {
    type: 'string',
    value: 'RUN_ID',
    description: 'undo that finished run (a run of `armadactl history TARGET`)',
  },
  previous: { type: 'boolean', description: 'undo the newest finished run that changed a release' },
  now: { type: 'boolean', description: 'a Deployer: go back at once, not through its canary steps' },
};

/** Whether a rollback command line asks to undo a finished run. */
export function undoAsked(values: Record<string, unknown>): boolean {
  if (values['to-run'] !== undefined && values.previous)
    throw new UsageError('--to-run RUN_ID and --previous: name one run to undo');
  if (values.now && values['to-run'] === undefined && !values.previous)
    throw new UsageError('--now goes with --to-run RUN_ID or --previous (a Deployer back at once)');
  return values['to-run'] !== undefined || Boolean(values.previous);
}

/**
 * Builds the run for `target` (where it sits: from the cluster when one answers, else by name),
 * starts it, prints what started and follows it to its end: its outcome, or why it failed.
 */
async function onObject(
  target: Target,
  verb: string,
  out: Print,
  build: (client: Client, place: ObjectPlace) => Promise<RunRequest>,
): Promise<unknown> {
  const { kind, namespace, name } = target;
  const { client, close } = await connect();
  try {
    const place = (await placeFromCluster(kind, namespace, name)) ?? placeByName(kind, namespace, name);
    const req = await build(client, place);
    const workflowId = await startRun(client, temporalTarget().taskQueue, req);
    out(`${verb}: started ${req.options.staticSummary} (workflow ${workflowId})`);
    return await client.workflow.getHandle(workflowId).result();
  } catch (err) {
    throw new Error(rootMessage(err), { cause: err });
  } finally {
    await close();
  }
}

/** `rollback --to-run RUN_ID | --previous [--now]` on `target` (as written on the command line). */
export async function undoFinishedRun(
  target: Target,
  written: string,
  values: Record<string, unknown>,
  by: string,
  out: Print,
): Promise<number> {
  const runId = values['to-run'] as string | undefined;
  const now = Boolean(values.now);
  const ended = await onObject(target, 'rollback', out, (client, place) =>
    undoRequest(client, place, { runId, now, by, target: written }),
  );
  if (target.kind === 'Deployer')
    out(`rollback: ${written} runs version ${deployerOutcomeOf(ended)?.version}`);
  else {
    const { undid, rolledBack } = ended as UndoOutcome;
    out(`rollback: run ${undid} undone; put back: ${rolledBack.join(', ')}`);
  }
  return 0;
}

/** `retry TARGET`: takes up the object's failed latest run at the step that failed. */
export async function retryFailedRun(target: Target, written: string, out: Print): Promise<number> {
  await onObject(target, 'retry', out, (client, place) => retryRequest(client, place, written));
  out(`retry: ${written} done`);
  return 0;
}
