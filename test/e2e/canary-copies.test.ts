import { ApiException, AppsV1Api, CoreV1Api, type V1Deployment } from '@kubernetes/client-node';
import { mkdir, mkdtemp, rm, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import path from 'node:path';
import { createCanaryCopies, deleteDeployments } from '../../activities/kube/canary-copies';
import { CANARY_LABEL, CANARY_OF_LABEL } from '../../kube/labels';
import { scaleDeployment } from '../../activities/kube/scale';
import { NonRetryable } from '../../workflows/failures';
import { helm, kubeConfig, uniqueName } from '../helpers/env';

const CHART = 'examples/charts/hello';

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

  beforeAll(async () => {
    await helm(
      'upgrade',
      '--install',
      release,
      CHART,
      '--namespace',
      namespace,
      '--create-namespace',
      '--set',
      'replicaCount=4',
    );
  });
  afterAll(() => core.deleteNamespace({ name: namespace }));

  it('copies the new revision’s Deployment beside the stable one, at 0 replicas', async () => {
    const pairs = await createCanaryCopies({ release, namespace, chart: CHART, values: newRevision });
    expect(pairs).toEqual([{ canary, stable: release, replicas: 4, stableReplicas: 4 }]);

    const copy = await read(canary);
    expect(copy.spec?.replicas).toBe(0);
    expect(copy.spec?.template.spec?.containers[0].image).toBe('registry.local/hello:2.0.0');
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
    expect(stable.spec?.template.spec?.containers[0].image).toBe('registry.local/hello:1.0.0');
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
    expect(manifest).toContain('registry.local/hello:1.0.0');
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
    expect(copy.spec?.template.spec?.containers[0].image).toBe('registry.local/hello:2.0.1');
    expect(copy.spec?.replicas).toBe(2);
  });

  it('pairs a Deployment the revision adds with no stable one', async () => {
    const other = uniqueName('added');
    const pairs = await createCanaryCopies({ release: other, namespace, chart: CHART, values: newRevision });
    expect(pairs).toEqual([{ canary: `${other}-canary`, stable: null, replicas: 4, stableReplicas: 0 }]);
    await deleteDeployments({ namespace, names: [`${other}-canary`] });
  });

  it('returns no pairs for a chart without Deployments', async () => {
    const chart = await mkdtemp(path.join(tmpdir(), 'no-deployments-'));
    try {
      await mkdir(path.join(chart, 'templates'));
      await writeFile(path.join(chart, 'Chart.yaml'), 'apiVersion: v2\nname: config\nversion: 0.1.0\n');
      await writeFile(
        path.join(chart, 'templates', 'config.yaml'),
        'apiVersion: v1\nkind: ConfigMap\nmetadata:\n  name: {{ .Release.Name }}\ndata:\n  a: b\n',
      );
      expect(await createCanaryCopies({ release, namespace, chart })).toEqual([]);
    } finally {
      await rm(chart, { recursive: true, force: true });
    }
  });

  it('lets a helm failure through, classified', async () => {
    // `./`: without it helm reads `examples/charts/...` as `<repo>/<chart>` ("repo examples not found").
    await expect(
      createCanaryCopies({ release, namespace, chart: './examples/charts/no-such-chart' }),
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
