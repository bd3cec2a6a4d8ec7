import {
  NativeConnection,
  Worker,
  type ActivityInterceptorsFactory,
  type WorkerOptions,
} from '@temporalio/worker';
import * as activities from '../activities';
import { policyInterceptor } from '../activities/policy';
import { DEFAULT_TASK_QUEUE } from '../runs/config';

export interface ArmadaWorkerOptions {
  connection: NativeConnection;
  namespace?: string;
  taskQueue?: string;
  /** A pre-built workflow bundle (tests build one per run); by default the worker bundles ../workflows. */
  workflowBundle?: WorkerOptions['workflowBundle'];
  /** Activities to register instead of the real ones (workflow tests stub them). */
  activities?: Partial<typeof activities>;
  /** See DEFAULT_STICKY_QUEUE_TIMEOUT. */
  stickyQueueTimeout?: WorkerOptions['stickyQueueScheduleToStartTimeout'];
  /** Activity interceptors (the worker process's metrics). */
  activityInterceptors?: ActivityInterceptorsFactory[];
  /** After `shutdown()`, how long running activities may go on before they are cancelled (default 0). */
  shutdownGraceTime?: WorkerOptions['shutdownGraceTime'];
  /** After `shutdown()`, when `run()` gives up waiting and throws (default: never). */
  shutdownForceTime?: WorkerOptions['shutdownForceTime'];
  /** Payload encryption (runs/codec.ts), when keys are configured. */
  dataConverter?: WorkerOptions['dataConverter'];
  /** Worker versioning: the Worker Deployment and this build's ID (see VERSIONING_BEHAVIOR). */
  deployment?: { name: string; buildId: string };
}

/**
 * Every workflow type is pinned: a run finishes on the build it started on, however long its
 * canary holds or its approval waits. A change that makes a saved history fail to replay is a
 * new build; no `patched()`. The policy: docs/how-to/scale-and-upgrade.md, "Worker upgrades".
 */
export const VERSIONING_BEHAVIOR = 'PINNED';

/**
 * How long a workflow task waits for the worker that ran the workflow last (its cached copy)
 * before any worker may take it. The SDK's default, 10 s, is also how late a durable timer's
 * step goes on after that worker was killed; with 500 ms the step after a hold starts about 1.2 s
 * after its deadline through a crash (the drills assert within 5 s), at the cost of a replay
 * when a busy worker is slower than that.
 */
export const DEFAULT_STICKY_QUEUE_TIMEOUT = '500ms';

/** A worker that runs armada's workflows and activities on one task queue. */
export function createWorker(opts: ArmadaWorkerOptions): Promise<Worker> {
  return Worker.create({
    connection: opts.connection,
    namespace: opts.namespace ?? 'default',
    taskQueue: opts.taskQueue ?? DEFAULT_TASK_QUEUE,
    activities: opts.activities ?? activities,
    stickyQueueScheduleToStartTimeout: opts.stickyQueueTimeout ?? DEFAULT_STICKY_QUEUE_TIMEOUT,
    // The real activities act on the cluster: every one is checked against the ArmadaPolicies first.
    interceptors: {
      activity: [...(opts.activities ? [] : [policyInterceptor]), ...(opts.activityInterceptors ?? [])],
    },
    // Absent, not undefined: the SDK's defaults would be overwritten by an undefined value.
    ...(opts.shutdownGraceTime !== undefined && { shutdownGraceTime: opts.shutdownGraceTime }),
    ...(opts.shutdownForceTime !== undefined && { shutdownForceTime: opts.shutdownForceTime }),
    ...(opts.dataConverter && { dataConverter: opts.dataConverter }),
    ...(opts.deployment && {
      workerDeploymentOptions: {
        version: { deploymentName: opts.deployment.name, buildId: opts.deployment.buildId },
        useWorkerVersioning: true,
        defaultVersioningBehavior: VERSIONING_BEHAVIOR,
      },
    }),
    ...(opts.workflowBundle
      ? { workflowBundle: opts.workflowBundle }
      : { workflowsPath: require.resolve('../workflows') }),
  });
}
