import {
  ApiException,
  AppsV1Api,
  AutoscalingV2Api,
  CoreV1Api,
  type V1Deployment,
  type V2CrossVersionObjectReference,
} from '@kubernetes/client-node';
import { mkdir, mkdtemp, rm, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import path from 'node:path';
import { createCanaryCopies, deleteDeployments } from '../../activities/kube/canary-copies';
import { CANARY_LABEL, CANARY_OF_LABEL } from '../../core/labels';
import { scaleDeployment } from '../../activities/kube/scale';
import { NonRetryable } from '../../core/failures';
import { stepScales } from '../../core/plan/canary';
import { helm, kubeConfig, uniqueName } from '../helpers/env';
import { kubectl } from '../helpers/kube';

/** The example chart, as a run passes it: by source (a `local` one is read in place). */
const CHART = { source: { type: 'local' as const, location: 'examples/charts/hello' } };

/** Installs the example chart as `release`, revision 1: 4 replicas of the chart's image, podinfo 6.9.2. */
const installAt4 = (release: string, namespace: string) =>
  helm(
    'upgrade',
    '--install',
    release,
    CHART.source.location,
    '--namespace',
    namespace,
    '--create-namespace',
    '--set',
    'replicaCount=4',
  );

/** Whether every `key: value` of a selector's matchLabels is among `labels`. */
function selects(selector: Record<string, string> | undefined, labels: Record<string, string> | undefined) {
  return Object.entries(selector ?? {}).every(([key, value]) => labels?.[key] === value);
}

describe('createCanaryCopies and deleteDeployments on the real sandbox cluster and helm', () => {
  const namespace = uniqueName('canary-copies');
  const release = uniqueName('hello');
  const canary = `${release}-canary`;
  const newRevision = { replicaCount: 4, image: { tag: '2.0.0' } };
  const kc = kubeConfig();
  const apps = kc.makeApiClient(AppsV1Api);
  const core = kc.makeApiClient(CoreV1Api);
  const read = (name: string) => apps.readNamespacedDeployment({ namespace, name });

  beforeAll(() => installAt4(release, namespace));
  afterAll(() => core.deleteNamespace({ name: namespace }));

  it('copies the new revision’s Deployment beside the stable one, at 0 replicas', async () => {
    const pairs = await createCanaryCopies({ release, namespace, chart: CHART, values: newRevision });
    expect(pairs).toEqual([{ canary, stable: release, replicas: 4, stableReplicas: 4 }]);

    const copy = await read(canary);
    expect(copy.spec?.replicas).toBe(0);
    expect(copy.spec?.template.spec?.containers[0].image).toBe('ghcr.io/stefanprodan/podinfo:2.0.0');
    expect(copy.spec?.selector.matchLabels?.[CANARY_LABEL]).toBe('true');
    expect(copy.spec?.template.metadata?.labels?.[CANARY_LABEL]).toBe('true');
    expect(copy.metadata?.labels?.[CANARY_OF_LABEL]).toBe(release);
    expect(copy.metadata?.labels?.['app.kubernetes.io/managed-by']).toBeUndefined();
    expect(
      Object.keys(copy.metadata?.annotations ?? {}).filter((k) => k.startsWith('meta.helm.sh/')),
    ).toEqual([]);

    // The stable one is Helm's (helm wrote its ownership at install) and runs the old image.
    const stable = await read(release);
    expect(stable.metadata?.annotations?.['meta.helm.sh/release-name']).toBe(release);
    expect(stable.spec?.template.spec?.containers[0].image).toBe('ghcr.io/stefanprodan/podinfo:6.9.2');
  });

  it('labels the copy’s pods so the chart’s Service selects them, and only the copy selects its own', async () => {
    const service = await core.readNamespacedService({ namespace, name: release });
    const copy = await read(canary);
    const stable = await read(release);
    const copyPods = copy.spec?.template.metadata?.labels;
    const stablePods = stable.spec?.template.metadata?.labels;

    expect(service.spec?.selector).toBeDefined();
    expect(selects(service.spec?.selector, copyPods)).toBe(true);
    expect(selects(service.spec?.selector, stablePods)).toBe(true);
    expect(selects(stable.spec?.selector.matchLabels, copyPods)).toBe(true);
    expect(selects(copy.spec?.selector.matchLabels, stablePods)).toBe(false);
  });

  it('leaves the release untouched: still revision 1, with the old image and no copy', async () => {
    const [listed] = JSON.parse(
      await helm('list', '--namespace', namespace, '--filter', `^${release}$`, '--output', 'json'),
    ) as { revision: string | number; status: string }[];
    expect(String(listed.revision)).toBe('1');
    expect(listed.status).toBe('deployed');

    const manifest = await helm('get', 'manifest', release, '--namespace', namespace);
    expect(manifest).toContain('ghcr.io/stefanprodan/podinfo:6.9.2');
    expect(manifest).not.toContain('2.0.0');
    expect(manifest).not.toContain(canary);
    expect(manifest).not.toContain(CANARY_LABEL);
  });

  it('keeps the copy’s live replicas when run again (a retried attempt)', async () => {
    expect(await scaleDeployment({ namespace, name: canary, replicas: 2 })).toBe(2);

    const pairs = await createCanaryCopies({ release, namespace, chart: CHART, values: newRevision });
    expect(pairs).toEqual([{ canary, stable: release, replicas: 4, stableReplicas: 4 }]);
    expect((await read(canary)).spec?.replicas).toBe(2);
  });

  it('replaces an existing copy’s spec with the rendered one, replicas still kept', async () => {
    await createCanaryCopies({
      release,
      namespace,
      chart: CHART,
      values: { replicaCount: 4, image: { tag: '2.0.1' } },
    });
    const copy = await read(canary);
    expect(copy.spec?.template.spec?.containers[0].image).toBe('ghcr.io/stefanprodan/podinfo:2.0.1');
    expect(copy.spec?.replicas).toBe(2);
  });

  it('pairs a Deployment the revision adds with no stable one', async () => {
    const other = uniqueName('added');
    const pairs = await createCanaryCopies({ release: other, namespace, chart: CHART, values: newRevision });
    expect(pairs).toEqual([{ canary: `${other}-canary`, stable: null, replicas: 4, stableReplicas: 0 }]);
    await deleteDeployments({ namespace, names: [`${other}-canary`] });
  });

  it('returns no pairs for a chart without Deployments', async () => {
    // A local chart resolves under the charts root only: this one is the root's `config`.
    const root = await mkdtemp(path.join(tmpdir(), 'no-deployments-'));
    const chart = path.join(root, 'config');
    const savedRoot = process.env.ARMADA_CHARTS_ROOT;
    process.env.ARMADA_CHARTS_ROOT = root;
    try {
      await mkdir(path.join(chart, 'templates'), { recursive: true });
      await writeFile(path.join(chart, 'Chart.yaml'), 'apiVersion: v2\nname: config\nversion: 0.1.0\n');
      await writeFile(
        path.join(chart, 'templates', 'config.yaml'),
        'apiVersion: v1\nkind: ConfigMap\nmetadata:\n  name: {{ .Release.Name }}\ndata:\n  a: b\n',
      );
      expect(
        await createCanaryCopies({
          release,
          namespace,
          chart: { source: { type: 'local', location: 'config' } },
        }),
      ).toEqual([]);
    } finally {
      if (savedRoot === undefined) delete process.env.ARMADA_CHARTS_ROOT;
      else process.env.ARMADA_CHARTS_ROOT = savedRoot;
      await rm(root, { recursive: true, force: true });
    }
  });

  it('lets a helm failure through, classified', async () => {
    await expect(
      createCanaryCopies({
        release,
        namespace,
        chart: { source: { type: 'local', location: 'examples/charts/no-such-chart' } },
      }),
    ).rejects.toMatchObject({ type: NonRetryable.ChartNotFound, nonRetryable: true });
  });

  it('deletes the copy, and deleting it again is fine', async () => {
    await deleteDeployments({ namespace, names: [canary] });
    await expect(read(canary)).rejects.toMatchObject({ code: 404 });
    await expect(deleteDeployments({ namespace, names: [canary] })).resolves.toBeUndefined();
    const stable: V1Deployment = await read(release);
    expect(stable.spec?.replicas).toBe(4);
  });

  it('names the namespace and Deployment when the API refuses', async () => {
    const missing = uniqueName('missing');
    const error = await createCanaryCopies({ release, namespace: missing, chart: CHART }).catch(
      (err: unknown) => err,
    );
    expect(error).toBeInstanceOf(Error);
    expect(error).not.toBeInstanceOf(ApiException);
    expect((error as Error).message).toMatch(
      new RegExp(`^create Deployment ${missing}/${canary}: HTTP 404: `),
    );
  });
});

describe('createCanaryCopies sizes R from the live stable and its HPA, never below the live count', () => {
  const namespace = uniqueName('canary-capacity');
  const release = uniqueName('scaled');
  const canary = `${release}-canary`;
  /** The chart renders 4 replicas, before and after. */
  const newRevision = { replicaCount: 4, image: { tag: '2.0.0' } };
  const kc = kubeConfig();
  const apps = kc.makeApiClient(AppsV1Api);
  const autoscaling = kc.makeApiClient(AutoscalingV2Api);
  const replicasOf = async (name: string) =>
    (await apps.readNamespacedDeployment({ namespace, name })).spec?.replicas;
  const createHpa = (name: string, minReplicas: number, scaleTargetRef: V2CrossVersionObjectReference) =>
    autoscaling.createNamespacedHorizontalPodAutoscaler({
      namespace,
      body: { metadata: { name }, spec: { scaleTargetRef, minReplicas, maxReplicas: 20 } },
    });

  beforeAll(() => installAt4(release, namespace));
  afterAll(() => kc.makeApiClient(CoreV1Api).deleteNamespace({ name: namespace }));

  it('takes R from a stable scaled above the chart (rendered 4, live 10), so the first step keeps 10', async () => {
    await kubectl('scale', 'deployment', release, '--namespace', namespace, '--replicas=10');

    const pairs = await createCanaryCopies({ release, namespace, chart: CHART, values: newRevision });
    expect(pairs).toEqual([{ canary, stable: release, replicas: 10, stableReplicas: 10 }]);

    // The first step (10 %) as the canary workflow runs it: the copy up first, then the stable down.
    const first = stepScales(pairs, 10);
    for (const scale of [...first.canary, ...first.stable]) {
      await scaleDeployment({ namespace, name: scale.name, replicas: scale.replicas });
    }
    expect([await replicasOf(canary), await replicasOf(release)]).toEqual([1, 9]);
  });

  it('takes R from the minReplicas of the HPA that targets the stable (6, over rendered 4 and live 4)', async () => {
    await kubectl('scale', 'deployment', release, '--namespace', namespace, '--replicas=4');
    await createHpa(release, 6, { apiVersion: 'apps/v1', kind: 'Deployment', name: release });
    // HPAs of something else: another Deployment, and a StatefulSet of the stable's name.
    await createHpa(`${release}-other`, 8, {
      apiVersion: 'apps/v1',
      kind: 'Deployment',
      name: `${release}-other`,
    });
    await createHpa(`${release}-sts`, 9, { apiVersion: 'apps/v1', kind: 'StatefulSet', name: release });

    const [pair, ...rest] = await createCanaryCopies({
      release,
      namespace,
      chart: CHART,
      values: newRevision,
    });
    expect(rest).toEqual([]);
    expect(pair).toMatchObject({ canary, stable: release, replicas: 6 });
    // The sandbox's controller-manager runs the HPA controller, which lifts the stable to its
    // minReplicas as soon as it sees the HPA: the live count read may be either.
    expect([4, 6]).toContain(pair.stableReplicas);
    const first = stepScales([pair], 10);
    expect([first.canary[0].replicas, first.stable[0].replicas]).toEqual([1, 5]);
  });
});
