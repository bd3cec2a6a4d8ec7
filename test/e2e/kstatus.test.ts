import { GROUP, VERSION } from '../../api/common';
import { sharedWorker, uniqueName } from '../helpers/env';
import { applyObjects, helloChart, installCrds, kubectl } from '../helpers/kube';
import { eventually, startBridge, type ProductProcess } from '../helpers/processes';

const API_VERSION = `${GROUP}/${VERSION}`;

interface Condition {
  type: string;
  status: string;
  reason: string;
  observedGeneration?: number;
}

/** The real `kubectl wait` a user or a CD tool runs: its exit code and what it printed. */
async function kubectlWait(...args: string[]): Promise<{ code: number; out: string }> {
  try {
    return { code: 0, out: await kubectl('wait', ...args) };
  } catch (err) {
    const { code, stdout, stderr } = err as { code?: unknown; stdout?: string; stderr?: string };
    if (typeof code !== 'number') throw err; // kubectl did not run
    return { code, out: `${stdout ?? ''}${stderr ?? ''}` };
  }
}

describe('kstatus conditions: kubectl wait gates on every kind (bridge process, real worker, helm, sandbox)', () => {
  const crs = uniqueName('kstatus');
  const releases = uniqueName('kstatus-rel');
  const harness = sharedWorker();
  let bridge: ProductProcess;

  const statusOf = async (resource: string) =>
    JSON.parse(await kubectl('get', resource, '-n', crs, '-o', 'json')) as {
      metadata: { generation: number };
      status?: { observedGeneration?: number; conditions?: Condition[] };
    };
  /** Type → status of an object's conditions. */
  const conditionsOf = async (resource: string) =>
    Object.fromEntries(((await statusOf(resource)).status?.conditions ?? []).map((c) => [c.type, c.status]));

  beforeAll(async () => {
    await installCrds();
    await kubectl('create', 'namespace', crs);
    bridge = startBridge(crs, { ARMADA_TASK_QUEUE: harness().taskQueue });
  });
  afterAll(async () => {
    await bridge?.stop();
    await kubectl('delete', 'namespace', releases, '--wait=false').catch(() => '');
    await kubectl('delete', 'namespace', crs, '--wait=false');
  });

  it('kubectl wait --for=condition=Ready returns for a manifest, its group and chart, a standalone chart and a Deployer', async () => {
    await applyObjects(crs, [
      {
        apiVersion: API_VERSION,
        kind: 'ArmadaManifest',
        metadata: { name: 'site' },
        spec: { release_prefix: 'k', chart_groups: ['apps'] },
      },
      {
        apiVersion: API_VERSION,
        kind: 'ArmadaChartGroup',
        metadata: { name: 'apps' },
        spec: { sequenced: true, chart_group: ['web'] },
      },
      helloChart('web', releases),
      helloChart('alone', releases),
      {
        apiVersion: API_VERSION,
        kind: 'Deployer',
        metadata: { name: 'nginx' },
        spec: {
          type: 'canary',
          deployment: {
            name: 'nginx',
            namespace: releases,
            image: 'nginx',
            version: '1.25.3',
            labels: { app: 'nginx' },
            replicas: 2,
          },
          steps: [{ percent: 50, sleep: 1 }],
        },
      },
    ]);
    const resources = ['amf/site', 'acg/apps', 'act/web', 'act/alone', 'dpl/nginx'];
    const { code, out } = await kubectlWait(
      '--for=condition=Ready',
      '--timeout=120s',
      '-n',
      crs,
      ...resources,
    );
    expect({ code, out }).toMatchObject({ code: 0 });
    expect(
      out
        .trim()
        .split('\n')
        .filter((line) => line.endsWith(' condition met')),
    ).toHaveLength(resources.length);

    for (const resource of resources) {
      const { metadata, status } = await statusOf(resource);
      // kubectl wait and kstatus trust a condition only at the object's current generation.
      const at = (value: string | undefined) => `${value} at generation ${metadata.generation}`;
      const kstatus = (type: string) => {
        const c = status?.conditions?.find((found) => found.type === type);
        return c && `${c.status} at generation ${c.observedGeneration}`;
      };
      expect({
        resource,
        Ready: kstatus('Ready'),
        Reconciling: kstatus('Reconciling'),
        Stalled: kstatus('Stalled'),
        observed: `${status?.observedGeneration} at generation ${metadata.generation}`,
      }).toEqual({
        resource,
        Ready: at('True'),
        Reconciling: at('False'),
        Stalled: at('False'),
        observed: at(String(metadata.generation)),
      });
    }
  });

  it('a chart whose run failed is Stalled and not Ready, and kubectl wait for Stalled returns', async () => {
    await applyObjects(crs, [
      helloChart('lost', releases, { source: { type: 'local', location: 'examples/charts/no-such-chart' } }),
    ]);
    const { code, out } = await kubectlWait(
      '--for=condition=Stalled',
      '--timeout=120s',
      '-n',
      crs,
      'act/lost',
    );
    expect({ code, out }).toMatchObject({ code: 0 });
    expect(await conditionsOf('act/lost')).toMatchObject({
      Ready: 'False',
      Reconciling: 'False',
      Stalled: 'True',
      Failed: 'True',
    });
  });

  it('an invalid object is Stalled and not Ready, and kubectl wait for Ready on it times out', async () => {
    // on_timeout without an approval step: the API server takes it, the bridge's validator not.
    await applyObjects(crs, [
      helloChart('bad', releases, { canary: { steps: [{ percent: 50, sleep: 1 }], on_timeout: 'promote' } }),
    ]);
    const conditions = await eventually(
      'bad marked Invalid',
      async () => {
        const found = (await statusOf('act/bad')).status?.conditions ?? [];
        return found.some((c) => c.type === 'Invalid' && c.status === 'True') ? found : undefined;
      },
      { process: bridge },
    );
    expect(conditions.filter((c) => c.type !== 'Invalid').map((c) => [c.type, c.status, c.reason])).toEqual([
      ['Stalled', 'True', 'InvalidSpec'],
      ['Ready', 'False', 'InvalidSpec'],
    ]);

    const { code, out } = await kubectlWait('--for=condition=Ready', '--timeout=3s', '-n', crs, 'act/bad');
    expect(code).not.toBe(0);
    expect(out).toMatch(/timed out waiting for the condition/);
    // What a CD tool gates a failure on answers at once.
    expect((await kubectlWait('--for=condition=Stalled', '--timeout=10s', '-n', crs, 'act/bad')).code).toBe(
      0,
    );
  });

  it('fixing the invalid spec clears Stalled, and kubectl wait for Ready returns once the chart is deployed', async () => {
    await kubectl('patch', 'act', 'bad', '-n', crs, '--type', 'merge', '-p', '{"spec":{"canary":null}}');
    const { code, out } = await kubectlWait('--for=condition=Ready', '--timeout=120s', '-n', crs, 'act/bad');
    expect({ code, out }).toEqual({ code: 0, out: expect.stringContaining('condition met') });
    expect(await conditionsOf('act/bad')).toMatchObject({
      Invalid: 'False',
      Ready: 'True',
      Reconciling: 'False',
      Stalled: 'False',
    });
  });
});
