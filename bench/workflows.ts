import { sleep } from '@temporalio/workflow';

/**
 * The workflows of benchmark 3's worker: the product's, and beside them a baseline that does
 * nothing but the canary's timers, so the canary's timer lateness can be told apart from what
 * the engine and the worker themselves add on this machine. Bundled by the benchmark only; the
 * product's worker never registers the baseline.
 */
export * from '../workflows';

/** `steps` durable timers of `holdSeconds` each, one after the other: a canary's holds, nothing else. */
export async function timersOnlyWorkflow(steps: number, holdSeconds: number): Promise<void> {
  for (let i = 0; i < steps; i++) await sleep(holdSeconds * 1000);
}
