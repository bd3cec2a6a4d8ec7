import { GROUP, VERSION } from '../../api/common';
import { sharedWorker, uniqueName } from '../helpers/env';
import { applyObjects, helloChart, installCrds, kubectl } from '../helpers/kube';
import { eventually, startBridge, type ProductProcess } from '../helpers/processes';
import { armadactlHere as armadactl } from '../helpers/armadactl';
import { detailsOf } from '../helpers/runs';

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
      status?: {
        actual_state?: string;
        observedGeneration?: number;
        satisfied?: boolean;
        conditions?: Condition[];
        workflow?: { id: string };
      };
    };
  /** What `kubectl get` prints of an object: its printer columns, header → value. */
  const columns = async (resource: string): Promise<Record<string, string>> => {
    const [header, row] = (await kubectl('get', resource, '-n', crs)).trim().split('\n');
    const starts = [...header.matchAll(/\S+( \S+)*/g)].map((m) => m.index);
    return Object.fromEntries(
      starts.map((start, i) => [
        header.slice(start, starts[i + 1]).trim(),
        row.slice(start, starts[i + 1]).trim(),
      ]),
    );
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

  it('a finished Deployer is deployed in kubectl get dpl, armadactl status, list and get, and the UI', async () => {
    expect(await columns('dpl/nginx')).toMatchObject({
      STATE: 'deployed',
      SATISFIED: 'true',
      VERSION: '1.25.3',
    });
    const status = await armadactl('status', 'dpl/nginx', '-n', crs);
    // Under the run's lines (ID, specs, UI link), the progress's title.
    expect(status.out).toMatch(/^ {2}[\w.-]+\/nginx-1\.25\.3: Deployed, step 1\/1 at 100 %/m);
    expect((await armadactl('list', '-n', crs)).out).toMatch(/\ndpl\/nginx +cluster +ready +Deployed /);
    expect((await armadactl('get', 'dpl/nginx', '-n', crs)).out).toMatch(
      /^Deployer [\w-]+\/nginx: ready \(deployed\)/,
    );
    const { workflow } = (await statusOf('dpl/nginx')).status!;
    expect(await detailsOf(harness().client.workflow.getHandle(`${workflow!.id}`))).toMatch(
      /: Deployed, step 1 \/ 1/, // the UI's slash is spaced: it would typeset 1/1 as a fraction
    );
  });

  it('a manifest paused after its first group is paused in kubectl, armadactl and the UI; a chart changed meanwhile is not satisfied until deployed', async () => {
    await applyObjects(crs, [
      {
        apiVersion: API_VERSION,
        kind: 'ArmadaManifest',
        metadata: { name: 'gated' },
        spec: { release_prefix: 'g', chart_groups: ['first', 'second'], approval: { before: ['second'] } },
      },
      {
        apiVersion: API_VERSION,
        kind: 'ArmadaChartGroup',
        metadata: { name: 'first' },
        spec: { chart_group: ['one'] },
      },
      {
        apiVersion: API_VERSION,
        kind: 'ArmadaChartGroup',
        metadata: { name: 'second' },
        spec: { chart_group: ['two'] },
      },
      helloChart('one', releases),
      helloChart('two', releases),
    ]);
    await eventually('gated waits before its second group', async () =>
      (await statusOf('amf/gated')).status?.actual_state === 'waitingapproval' ? true : undefined,
    );
    await kubectl('annotate', 'amf', 'gated', '-n', crs, 'armada.airshipit.org/action=pause');
    const paused = await eventually('gated paused', async () => {
      const c = await columns('amf/gated');
      return c.STATE === 'paused' ? c : undefined;
    });
    expect(paused).toMatchObject({ SATISFIED: 'false', PROGRESS: expect.stringMatching(/^1\/2/) });
    expect((await armadactl('status', 'amf/gated', '-n', crs)).out).toMatch(/^ {2}Paused — /m);
    expect((await armadactl('list', '-n', crs)).out).toMatch(/\namf\/gated +cluster +reconciling +Paused /);
    const run = harness().client.workflow.getHandle((await statusOf('amf/gated')).status!.workflow!.id);
    expect(await detailsOf(run)).toMatch(/^\*\*Paused — /);

    // A new generation of a chart the paused run deployed: not satisfied until a run deploys it.
    expect(await columns('act/one')).toMatchObject({ STATE: 'deployed', SATISFIED: 'true' });
    await kubectl(
      'patch',
      'act',
      'one',
      '-n',
      crs,
      '--type',
      'merge',
      '-p',
      '{"spec":{"values":{"replicaCount":2}}}',
    );
    const pending = await eventually('one not satisfied at generation 2', async () => {
      const c = await columns('act/one');
      return c.SATISFIED === 'false' ? c : undefined;
    });
    expect(pending).toMatchObject({ STATE: 'deployed' });
    const { metadata, status } = await statusOf('act/one');
    expect([metadata.generation, status?.observedGeneration]).toEqual([2, 1]);

    await kubectl('annotate', 'amf', 'gated', '-n', crs, 'armada.airshipit.org/action=resume');
    await eventually('gated deployed, and one satisfied at generation 2', async () => {
      const [gated, one] = [await columns('amf/gated'), await statusOf('act/one')];
      if (gated.STATE === 'waitingapproval')
        await kubectl(
          'annotate',
          'amf',
          'gated',
          '-n',
          crs,
          '--overwrite',
          'armada.airshipit.org/action=approve',
        );
      return gated.STATE === 'deployed' && one.status?.satisfied && one.status.observedGeneration === 2
        ? true
        : undefined;
    });
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
