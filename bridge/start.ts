import { WorkflowExecutionAlreadyStartedError } from '@temporalio/client';
import { startRun, type RunRequest } from '../runs/requests';
import { freezeOf, startedFrozen } from './freeze';
import { parseKey } from './view';
import type { BridgeContext } from './context';

/**
 * Starts the run of `key`'s object and follows it: `follow` (that key unless told) is queued
 * again when the run ends. A start that lost the race to another (the workflow ID is the lock)
 * follows the winner instead. Logs `message` (default `started run`) with `fields`.
 */
export async function startObjectRun(
  ctx: BridgeContext,
  key: string,
  run: RunRequest,
  opts: { follow?: string; message?: string; fields?: Record<string, unknown> } = {},
): Promise<void> {
  let started = true;
  try {
    await startRun(
      ctx.client,
      ctx.taskQueue,
      startedFrozen(run, freezeOf(parseKey(key).namespace, ctx.policies())),
    );
  } catch (err) {
    if (!(err instanceof Error && err.cause instanceof WorkflowExecutionAlreadyStartedError)) throw err;
    started = false;
  }
  const { specs, mode } = run.memo;
  ctx.log('info', opts.message ?? 'started run', {
    key,
    workflowId: run.workflowId,
    specs,
    mode,
    ...opts.fields,
  });
  ctx.metrics.runStarted(key, mode);
  ctx.afterRun(run.workflowId, opts.follow ?? key, started ? run.memo : undefined);
}
