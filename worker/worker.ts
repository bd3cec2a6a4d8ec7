import { NativeConnection, Worker, type WorkerOptions } from '@temporalio/worker';
import * as activities from '../activities';

export const DEFAULT_TASK_QUEUE = 'armada';

export interface ArmadaWorkerOptions {
  connection: NativeConnection;
  namespace?: string;
  taskQueue?: string;
  /** A pre-built workflow bundle (tests build one per run); by default the worker bundles ../workflows. */
  workflowBundle?: WorkerOptions['workflowBundle'];
  /** Activities to register instead of the real ones (workflow tests stub them). */
  activities?: Partial<typeof activities>;
}

/** A worker that runs armada's workflows and activities on one task queue. */
export function createWorker(opts: ArmadaWorkerOptions): Promise<Worker> {
  return Worker.create({
    connection: opts.connection,
    namespace: opts.namespace ?? 'default',
    taskQueue: opts.taskQueue ?? DEFAULT_TASK_QUEUE,
    activities: opts.activities ?? activities,
    ...(opts.workflowBundle
      ? { workflowBundle: opts.workflowBundle }
      : { workflowsPath: require.resolve('../workflows') }),
  });
}
