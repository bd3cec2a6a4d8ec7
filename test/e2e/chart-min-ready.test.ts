import { AppsV1Api, CoreV1Api, type V1Pod } from '@kubernetes/client-node';
import type { WorkflowHandle } from '@temporalio/client';
import { armadaChartSpec } from '../../api/chart';
import type { ChartRun } from '../../core/contracts/workflows';
import { kubeConfig, sharedWorker, uniqueName } from '../helpers/env';
import { chartFailure, chartResult, startChart } from '../helpers/chart-runs';
import { helloChart } from '../helpers/kube';
import { eventually } from '../helpers/processes';

/**
 * A Deployment's pods are held Pending by a node selector no node matches; the test binds the ones
 * it wants Running, as the scheduler would, and kwok makes a bound pod Ready. So exactly as many
 * pods are ready as the test says, and the others stay Pending (not ready) for ever.
 */
const nowhere = { 'armada-test/nowhere': 'true' };
const REPLICAS = 4;

const kc = kubeConfig();
const apps = kc.makeApiClient(AppsV1Api);
const core = kc.makeApiClient(CoreV1Api);

const isReady = (pod: V1Pod) =>
  pod.status?.conditions?.some((c) => c.type === 'Ready' && c.status === 'True');

describe('a chart whose wait has min_ready "50%" waits for half the pods of its Deployment, and one with no resources not at all (dev server, real worker, helm, sandbox)', () => {
  const namespace = uniqueName('min-ready');
  const harness = sharedWorker();

  const podsOf = async (release: string) =>
    (await core.listNamespacedPod({ namespace, labelSelector: `app.kubernetes.io/instance=${release}` }))
      .items;
  const availableOf = async (release: string) =>
    (await apps.readNamespacedDeployment({ namespace, name: release })).status?.availableReplicas ?? 0;

  /** Starts the chart's run: 4 replicas, none schedulable, a wait for "50%" of the Deployment's pods (or `wait`). */
  async function start(
    release: string,
    timeoutSeconds: number,
    wait: Record<string, unknown> = {
      resources: [
        { type: 'deployment', labels: { 'app.kubernetes.io/instance': release }, min_ready: '50%' },
      ],
    },
  ): Promise<WorkflowHandle> {
    const run: ChartRun = {
      chart: release,
      release,
      namespace,
      spec: armadaChartSpec.parse(
        helloChart(release, namespace, {
          values: { replicaCount: REPLICAS, nodeSelector: nowhere },
          wait: { timeout: timeoutSeconds, ...wait },
        }).spec,
      ),
    };
    const handle = await startChart(harness(), run);
    await eventually(`${REPLICAS} pods of ${release}`, async () =>
      (await podsOf(release)).length === REPLICAS ? true : undefined,
    );
    return handle;
  }

  /** Binds one more Pending pod of `release` to a kwok node, then waits until the Deployment counts it available. */
  async function makeOneMoreReady(release: string): Promise<void> {
    const pods = await podsOf(release);
    const pending = pods.find((p) => !p.spec?.nodeName);
    const [node] = (await core.listNode({ labelSelector: 'type=kwok' })).items;
    if (!pending?.metadata?.name || !node?.metadata?.name)
      throw new Error(`no Pending pod of ${release}, or no node`);
    const available = pods.filter((p) => p.spec?.nodeName).length + 1;
    await core.createNamespacedBinding({
      namespace,
      body: { metadata: { name: pending.metadata.name }, target: { kind: 'Node', name: node.metadata.name } },
    });
    await eventually(`${available} available replicas of ${release}`, async () =>
      (await availableOf(release)) === available ? true : undefined,
    );
  }

  beforeAll(async () => {
    await core.createNamespace({ body: { metadata: { name: namespace } } });
    // Pods need the namespace's default ServiceAccount, which the controller-manager creates.
    await eventually(
      'the default ServiceAccount',
      async () =>
        (await core.listNamespacedServiceAccount({ namespace })).items.some(
          (a) => a.metadata?.name === 'default',
        ) || undefined,
    );
  });
  afterAll(async () => {
    await core.deleteNamespace({ name: namespace });
  });

  it('does not finish while fewer than half are ready: with 1 of 4 available, it times out needing 2', async () => {
    const release = uniqueName('quarter');
    const handle = await start(release, 15);
    await makeOneMoreReady(release);

    // It failed after the release was written (ChartFailedAfterWrite): the run's outcome keeps the release.
    const failure = await chartFailure(handle);
    expect(failure.written).toMatchObject({ release, namespace });
    const message = failure.error;
    expect(message).toContain('timed out after 15s');
    expect(message).toContain(`deployment/${release} (1/4 available, min_ready 50% needs 2)`);
  });

  it('finishes once half are ready, while the other half are not', async () => {
    const release = uniqueName('half');
    const handle = await start(release, 120);
    await makeOneMoreReady(release);
    // The wait holds with 1 of 4 available (as the test above shows it would until its timeout).
    await eventually('the run waiting for the Deployment', async () => {
      const { raw } = await handle.describe();
      return raw.pendingActivities?.some((a) => a.activityType?.name === 'waitForResources') || undefined;
    });
    expect((await handle.describe()).status.name).toBe('RUNNING');

    await makeOneMoreReady(release);
    expect(await chartResult(handle)).toMatchObject({ release, namespace, action: 'installed', revision: 1 });

    const pods = await podsOf(release);
    expect(pods.filter(isReady)).toHaveLength(2);
    expect(pods.filter((p) => !isReady(p)).map((p) => p.status?.phase)).toEqual(['Pending', 'Pending']);
    expect(await availableOf(release)).toBe(2);
  });

  it("skips the Armada wait when wait.resources is [] (Armada's wait for nothing): installed with no pod ready", async () => {
    const release = uniqueName('none');
    const handle = await start(release, 120, { resources: [] });
    expect(await chartResult(handle)).toMatchObject({ release, namespace, action: 'installed', revision: 1 });

    const { events } = await handle.fetchHistory();
    const scheduled = (events ?? []).map((e) => e.activityTaskScheduledEventAttributes?.activityType?.name);
    expect(scheduled).toContain('helmUpgradeInstall');
    expect(scheduled).not.toContain('waitForResources');
    expect((await podsOf(release)).filter(isReady)).toHaveLength(0);
  });
});
