import { DefaultLogger, NativeConnection, Runtime } from '@temporalio/worker';
import * as realActivities from '../activities';
import { fakeHelm } from '../test/workflows/fake-helm';
import { createWorker } from '../worker/worker';

/**
 * A worker process for the benchmarks: the product's worker (createWorker, its defaults) on a
 * task queue of the benchmark's, with activities that return at once instead of Helm and
 * Kubernetes calls, so what is measured is orchestration alone. A process of its own, so its
 * peak memory is the worker's and nothing else's.
 *
 * BENCH_WORKER_MODE:
 * - `helm`: every activity a chart run calls is an in-memory stub (test/workflows/fake-helm.ts);
 * - `canary`: scaling, readiness and status return at once;
 * - `kube`: the real activities except Helm's and the Armada wait (stubs): status is written to
 *   the custom resources for real.
 *
 * Env: TEMPORAL_ADDRESS, BENCH_TASK_QUEUE, BENCH_WORKFLOW_BUNDLE (a bundle built once by the
 * driver), BENCH_WORKER_METRICS (host:port for the SDK's Prometheus metrics, optional).
 * Prints `bench-worker: polling` once it runs; SIGTERM shuts it down.
 */
type Mode = 'helm' | 'canary' | 'kube';

function activitiesFor(mode: Mode): Partial<typeof realActivities> {
  const helm = fakeHelm().activities;
  switch (mode) {
    case 'helm':
      return helm;
    case 'kube':
      return {
        ...realActivities,
        helmObserve: helm.helmObserve,
        prepareChart: helm.prepareChart,
        helmUpgradeInstall: helm.helmUpgradeInstall,
        waitForResources: helm.waitForResources,
        helmTest: helm.helmTest,
        helmRollback: helm.helmRollback,
        helmUninstall: helm.helmUninstall,
        deleteResources: helm.deleteResources,
      };
    case 'canary':
      return {
        async scaleDeployment(req) {
          return req.replicas;
        },
        async waitForResources() {
          return { resources: [], summary: 'ready' };
        },
        async deleteDeployments() {},
        async checkAnalysis() {
          return { ok: true, message: 'ok' };
        },
        async reportStatus() {
          return { onCluster: false, tookMs: 0 };
        },
      };
  }
}

function required(name: string): string {
  const value = process.env[name];
  if (!value) throw new Error(`${name} is not set (the benchmark driver sets it)`);
  return value;
}

async function main(): Promise<void> {
  const mode = required('BENCH_WORKER_MODE') as Mode;
  const metrics = process.env.BENCH_WORKER_METRICS;
  Runtime.install({
    logger: new DefaultLogger('WARN'),
    ...(metrics && { telemetryOptions: { metrics: { prometheus: { bindAddress: metrics } } } }),
  });
  const connection = await NativeConnection.connect({ address: required('TEMPORAL_ADDRESS') });
  const worker = await createWorker({
    connection,
    taskQueue: required('BENCH_TASK_QUEUE'),
    workflowBundle: { codePath: required('BENCH_WORKFLOW_BUNDLE') },
    activities: activitiesFor(mode),
  });
  const stop = () => worker.shutdown();
  process.once('SIGTERM', stop);
  process.once('SIGINT', stop);
  console.log(`bench-worker: polling (${mode})`);
  await worker.run();
  await connection.close();
}

main().catch((err: unknown) => {
  console.error(`bench-worker: ${err instanceof Error ? err.message : String(err)}`);
  process.exit(1);
});
