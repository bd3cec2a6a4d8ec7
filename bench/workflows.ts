import { executeChild, sleep, workflowInfo } from '@temporalio/workflow';

/**
 * The workflows of the benchmarks' stub workers: the product's, and beside them baselines that
 * do nothing but what is being measured (benchmark 3: the canary's timers; benchmark 1: workflow
 * tasks one after another), so what the engine itself costs on this machine can be told apart
 * from what our workflows add. Bundled by the benchmarks only (benchBundle); the product's worker
 * never registers them.
 */
export * from '../workflows';

/** `steps` durable timers of `holdSeconds` each, one after the other: a canary's holds, nothing else. */
export async function timersOnlyWorkflow(steps: number, holdSeconds: number): Promise<void> {
  for (let i = 0; i < steps; i++) await sleep(holdSeconds * 1000);
}

/** Does nothing: the child each step of roundTripsWorkflow starts. */
export async function noopWorkflow(): Promise<void> {}

/**
 * `steps` child workflows that do nothing, one after another, and nothing else: its workflow
 * tasks (each scheduled by a child's start or close, then run by the worker) are the engine's
 * own round trips, and a child's close → the next child's start the least a step from one
 * workflow to the next can cost (what a transition between charts or groups is made of).
 */
export async function roundTripsWorkflow(steps: number): Promise<void> {
  const { workflowId } = workflowInfo();
  for (let i = 1; i <= steps; i++) await executeChild(noopWorkflow, { workflowId: `${workflowId}-${i}` });
}
