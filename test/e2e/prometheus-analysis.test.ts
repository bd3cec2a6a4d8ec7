import { AppsV1Api, type V1Pod } from '@kubernetes/client-node';
import { WorkflowFailedError } from '@temporalio/client';
import { mkdtemp, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import path from 'node:path';
import { stringify } from 'yaml';
import { VERSION_LABEL, CANARY_LABEL } from '../../core/labels';
import { armadaChartSpec, type ArmadaChartSpecInput } from '../../api/chart';
import { canaryProgressQuery } from '../../workflows/messages';
import { rootMessage } from '../../core/failures';
import { canaryWorkflowId, deployerRolloutWorkflowId } from '../../core/plan/names';
import { chartResult, startChart } from '../helpers/chart-runs';
import { armadactlHere as armadactl } from '../helpers/armadactl';
import { kubeConfig, releaseRevisions, sharedWorker, uniqueName } from '../helpers/env';
import { deploymentImages, installCrds, kubectl } from '../helpers/kube';
import { eventually } from '../helpers/processes';
import { startPodExporter, startPrometheus } from '../helpers/prometheus';

/**
 * Prometheus analysis on the real stack: Debian's prometheus on loopback scrapes an exporter
 * the test runs. kwok's pods run no process, so the exporter lists the pods from the API server
 * and serves a series per pod, `app_error_ratio{namespace, pod, app}`, whose value the test
 * steers. The canary's query selects its pods through the template ({{selector}} renders their
 * names, {{labels.…}} a label they share), so the stable pods, which the test keeps unhealthy
 * where it matters, show whether the rendering picked the right ones.
 */
describe('Prometheus analysis (real Prometheus, worker, helm, sandbox cluster)', () => {
  const namespace = uniqueName('prom');
  const crNamespace = uniqueName('prom-cr');
  const release = 'shop';
  const apps = kubeConfig().makeApiClient(AppsV1Api);
  const harness = sharedWorker();
  let prometheus: Awaited<ReturnType<typeof startPrometheus>>;
  let exporter: Awaited<ReturnType<typeof startPodExporter>>;
  /** Error ratios the exporter serves: a chart's canary pods carry `armada.airshipit.org/canary: "true"`. */
  const ratios = { canary: 0.01, stable: 0.01 };
  const chartRatio = (pod: V1Pod) =>
    pod.metadata?.labels?.[CANARY_LABEL] === 'true' ? ratios.canary : ratios.stable;
  const chartQuery = 'max(app_error_ratio{ {{selector}}, app="{{labels.app.kubernetes.io/name}}" })';

  const run = (tag: string, canary?: Partial<NonNullable<ArmadaChartSpecInput['canary']>>) =>
    startChart(harness(), {
      chart: release,
      release,
      namespace,
      resourceNamespace: crNamespace,
      spec: armadaChartSpec.parse({
        release,
        namespace,
        source: { type: 'local', location: 'examples/charts/hello' },
        values: { replicaCount: 4, image: { tag } },
        wait: { timeout: 60 },
        ...(canary && { canary }),
      }),
    });
  const analysis = (extra: object = {}) => ({
    prometheus: { address: prometheus.url, query: chartQuery, max: 0.1, interval: '2s' },
    ...extra,
  });
  const failureOf = (promise: Promise<unknown>) =>
    promise.then(
      () => undefined,
      (err: unknown) => err,
    );
  const revisions = () => releaseRevisions(release, namespace);
  const deployments = () => deploymentImages(namespace);

  beforeAll(async () => {
    await installCrds();
    await kubectl('create', 'namespace', crNamespace);
    await kubectl('create', 'namespace', namespace);
    exporter = await startPodExporter(namespace, chartRatio);
    prometheus = await startPrometheus(exporter.address);
    process.env.ARMADA_TASK_QUEUE = harness().taskQueue;
  });
  afterAll(async () => {
    await prometheus?.stop();
    await exporter?.stop();
    await kubectl('delete', 'namespace', namespace, crNamespace, '--wait=false');
  });

  it('Prometheus scrapes the exporter: a series per pod with its namespace and pod labels', async () => {
    expect((await chartResult(await run('1.0.0'))).action).toBe('installed');
    const values = await eventually('the release pods in Prometheus', async () => {
      const found = await prometheus.query(`app_error_ratio{namespace="${namespace}",pod=~"shop-.*"}`);
      return found.length === 4 ? found : undefined;
    });
    expect(values).toEqual([0.01, 0.01, 0.01, 0.01]);
  });

  it('a canary whose query passes is promoted; the unhealthy stable pods are not in its query', async () => {
    Object.assign(ratios, { canary: 0.01, stable: 0.9 });
    const outcome = await chartResult(
      await run('2.0.0', { steps: [{ percent: 50, sleep: 5 }], analysis: analysis() }),
    );
    expect(outcome).toMatchObject({ action: 'upgraded', before: 1, revision: 2 });
    expect(await deployments()).toEqual({ shop: '4 ghcr.io/stefanprodan/podinfo:2.0.0' });
  });

  it('healthy at the first step, failing during the second: rolled back, the release at its revision', async () => {
    Object.assign(ratios, { canary: 0.01, stable: 0.01 });
    const handle = await run('3.0.0', {
      steps: [
        { percent: 25, sleep: 3 },
        { percent: 50, sleep: 120 },
      ],
      analysis: analysis(),
    });
    const canary = harness().client.workflow.getHandle(canaryWorkflowId(crNamespace, release));
    // Step 1 passed its checks (the last before the step passes); now the canary turns bad.
    await eventually(
      'the canary holding step 2',
      async () => {
        const progress = await canary.query(canaryProgressQuery);
        return progress.step === 2 && progress.waitingOn === 'hold' ? true : undefined;
      },
      { pauseMs: 100 },
    );
    ratios.canary = 0.5;
    const failure = await failureOf(handle.result());
    expect(failure).toBeInstanceOf(WorkflowFailedError);
    expect(rootMessage(failure)).toMatch(
      new RegExp(
        String.raw`shop canary 50 %: analysis failed 1 time\(s\) \(failure_limit 0\): ` +
          String.raw`max\(app_error_ratio\{ namespace="${namespace}",pod=~"shop-canary-[a-z0-9]+-[a-z0-9]+\|shop-canary-[a-z0-9]+-[a-z0-9]+", app="hello" \}\) = 0\.5, above max 0\.1`,
      ),
    );
    expect(await revisions()).toEqual([1, 2]);
    expect(await deployments()).toEqual({ shop: '4 ghcr.io/stefanprodan/podinfo:2.0.0' });
  });

  it('compare_to_stable: a canary within max but worse than the stable by more than the margin rolls back', async () => {
    Object.assign(ratios, { canary: 0.06, stable: 0.01 });
    const handle = await run('4.0.0', {
      steps: [{ percent: 50, sleep: 10 }],
      analysis: analysis({ compare_to_stable: { margin: 0.02 } }),
    });
    const failure = await failureOf(handle.result());
    expect(failure).toBeInstanceOf(WorkflowFailedError);
    expect(rootMessage(failure)).toMatch(
      new RegExp(
        String.raw`canary max\(app_error_ratio\{ namespace="${namespace}",pod=~"shop-canary-[^"]+", app="hello" \}\) = 0\.06, ` +
          String.raw`stable max\(app_error_ratio\{ namespace="${namespace}",pod=~"shop-[a-z0-9]+-[a-z0-9]+\|shop-[a-z0-9]+-[a-z0-9]+", app="hello" \}\) = 0\.01: ` +
          String.raw`the canary is worse by 0\.05, more than margin 0\.02`,
      ),
    );
    expect(await revisions()).toEqual([1, 2]);
    expect(await deployments()).toEqual({ shop: '4 ghcr.io/stefanprodan/podinfo:2.0.0' });
  });

  describe('a Deployer: the same analysis, and approvals through armadactl', () => {
    /** Deployer pods carry their version: the canary's is the version being rolled out. */
    const deployerRatio = (canaryVersion: string) => (pod: V1Pod) =>
      pod.metadata?.labels?.[VERSION_LABEL] === canaryVersion ? ratios.canary : ratios.stable;
    const deployerFile = async (version: string, steps: object[]) => {
      const file = path.join(await mkdtemp(path.join(tmpdir(), 'armada-deployer-')), 'web.yaml');
      const doc = {
        apiVersion: 'armada.airshipit.org/v1alpha1',
        kind: 'Deployer',
        metadata: { name: 'web' },
        spec: {
          type: 'canary',
          deployment: {
            name: 'web',
            namespace,
            image: 'nginx',
            version,
            labels: { app: 'web' },
            replicas: 4,
          },
          steps,
          analysis: {
            prometheus: {
              address: prometheus.url,
              query: 'max(app_error_ratio{ {{selector}}, namespace="{{namespace}}", app="{{labels.app}}" })',
              max: 0.1,
              interval: '2s',
            },
          },
        },
      };
      await writeFile(file, stringify(doc));
      return file;
    };
    const replicas = async () =>
      Object.fromEntries(
        (await apps.listNamespacedDeployment({ namespace })).items
          .filter((d) => d.metadata!.name!.startsWith('web-'))
          .map((d) => [d.metadata!.name!, d.spec!.replicas]),
      );
    /** The Deployer's rollout: its run's child, where its canary steps (deployerRun's plan of one). */
    const deployerHandle = () =>
      harness().client.workflow.getHandle(deployerRolloutWorkflowId(crNamespace, 'web'));
    const waitForApproval = () =>
      eventually(
        'the Deployer waiting for approval',
        async () => {
          const progress = await deployerHandle().query(canaryProgressQuery);
          return progress.waitingOn === 'approval' ? progress : undefined;
        },
        { pauseMs: 100 },
      );

    it('a first deploy, then a version held for approval, checked while it waits, promoted by armadactl approve', async () => {
      Object.assign(ratios, { canary: 0.01, stable: 0.01 });
      exporter.state.errorRatio = deployerRatio('1.0.0');
      const first = await armadactl(
        'apply',
        '-f',
        await deployerFile('1.0.0', [{ percent: 50 }]),
        '--wait',
        '-n',
        crNamespace,
      );
      expect(first.printed).toContain('web: deployed, serving 1.0.0');
      expect(first.code).toBe(0);

      // The stable pods turn bad: only a query that selects the canary's pods passes.
      Object.assign(ratios, { canary: 0.01, stable: 0.9 });
      exporter.state.errorRatio = deployerRatio('2.0.0');
      const applied = armadactl(
        'apply',
        '-f',
        await deployerFile('2.0.0', [{ percent: 50, approval: true }]),
        '--wait',
        '-n',
        crNamespace,
      );
      const waiting = await waitForApproval();
      expect(waiting).toMatchObject({ step: 1, percent: 50 });
      expect(await replicas()).toEqual({ 'web-1.0.0': 2, 'web-2.0.0': 2 });
      // Approved once a check has run during the wait (a failed one would have rolled back: failure_limit 0).
      const checks = async () =>
        (await deployerHandle().fetchHistory()).events!.filter(
          (e) => e.activityTaskScheduledEventAttributes?.activityType?.name === 'checkPrometheus',
        ).length;
      await eventually('a check during the approval', async () => ((await checks()) >= 1 ? true : undefined));
      const approved = await armadactl(
        'approve',
        'dpl/web',
        '-n',
        crNamespace,
        '--reason',
        'metrics look fine',
        // Applied from a file, no bridge: a Temporal administrator steers it.
        '--as-temporal-admin',
      );
      expect(approved.code).toBe(0);
      const { code, printed } = await applied;
      expect(printed).toContain('web: promoted, serving 2.0.0');
      expect(code).toBe(0);
      expect(await replicas()).toEqual({ 'web-2.0.0': 4 });
    });

    it('a version whose query fails while it waits for approval is rolled back; the old version serves', async () => {
      Object.assign(ratios, { canary: 0.5, stable: 0.01 });
      exporter.state.errorRatio = deployerRatio('3.0.0');
      const { code, printed } = await armadactl(
        'apply',
        '-f',
        await deployerFile('3.0.0', [{ percent: 50, approval: true }]),
        '--wait',
        '-n',
        crNamespace,
      );
      expect(printed).toMatch(
        new RegExp(
          String.raw`web: rolled-back \(${namespace}/web-3\.0\.0 canary 50 %: analysis failed 1 time\(s\) \(failure_limit 0\): ` +
            String.raw`max\(app_error_ratio\{ namespace="${namespace}",pod=~"web-3\\\\\.0\\\\\.0-[^"]+", namespace="${namespace}", app="web" \}\) = 0\.5, above max 0\.1\), serving 2\.0\.0`,
        ),
      );
      expect(code).toBe(1);
      expect(await replicas()).toEqual({ 'web-2.0.0': 4 });
    });
  });
});
