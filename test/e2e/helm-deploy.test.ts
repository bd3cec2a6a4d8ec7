import { CoreV1Api } from '@kubernetes/client-node';
import { armadaChartSpec } from '../../api/chart';
import { chartWorkflow } from '../../workflows';
import type { ChartRun } from '../../workflows/chart';
import { releaseWorkflowId } from '../../workflows/plan/names';
import { helm, kubeConfig, temporalHarness, uniqueName } from '../helpers/env';

describe('the chart workflow on the real stack (dev server, sandbox cluster, helm CLI)', () => {
  const release = uniqueName('hello');
  const namespace = uniqueName('e2e');
  const run = (values: Record<string, unknown>): ChartRun => ({
    chart: 'hello',
    release,
    namespace,
    spec: armadaChartSpec.parse({
      release,
      namespace,
      source: { type: 'local', location: 'examples/charts/hello' },
      values,
      wait: { timeout: 120, labels: { 'app.kubernetes.io/instance': release } },
    }),
  });
  let harness: Awaited<ReturnType<typeof temporalHarness>>;
  let running: Promise<void>;

  beforeAll(async () => {
    harness = await temporalHarness();
    running = harness.worker.run();
  });
  afterAll(async () => {
    harness.worker.shutdown();
    await running;
    await harness.close();
  });

  const execute = (input: ChartRun) =>
    harness.client.workflow.execute(chartWorkflow, {
      taskQueue: harness.taskQueue,
      workflowId: releaseWorkflowId(namespace, release),
      args: [input],
    });

  it('installs the example chart and its pods become Ready', async () => {
    const outcome = await execute(run({ replicaCount: 3 }));
    expect(outcome).toMatchObject({ release, namespace, action: 'installed', before: null, revision: 1 });

    const status = JSON.parse(await helm('status', release, '--namespace', namespace, '--output', 'json'));
    expect(status.info.status).toBe('deployed');

    const pods = await kubeConfig()
      .makeApiClient(CoreV1Api)
      .listNamespacedPod({ namespace, labelSelector: `app.kubernetes.io/instance=${release}` });
    expect(pods.items).toHaveLength(3);
    for (const pod of pods.items) {
      const ready = pod.status?.conditions?.find((c) => c.type === 'Ready');
      expect({ pod: pod.metadata?.name, ready: ready?.status }).toEqual({
        pod: pod.metadata?.name,
        ready: 'True',
      });
    }
  });

  it('leaves an unchanged release alone and upgrades a changed one', async () => {
    expect(await execute(run({ replicaCount: 3 }))).toMatchObject({ action: 'unchanged', revision: 1 });
    expect(await execute(run({ replicaCount: 2 }))).toMatchObject({
      action: 'upgraded',
      before: 1,
      revision: 2,
    });
  });
});
