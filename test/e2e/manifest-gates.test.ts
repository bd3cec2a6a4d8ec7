import { mkdtemp, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import path from 'node:path';
import { stringify } from 'yaml';
import { armadactlHere as armadactl } from '../helpers/armadactl';
import { helm, sharedWorker, uniqueName } from '../helpers/env';
import { armadaObject, helloChart, installCrds, kubectl, settingsChart } from '../helpers/kube';
import { eventually } from '../helpers/processes';

/**
 * A manifest's approval gate that times out, and a parallel group, on the real stack (issue 32,
 * item 10: until then only the stubbed-helm workflow tests covered them). Manifests are applied
 * from files (armadactl apply) onto the shared worker.
 */
describe('manifest gates and parallel groups (real worker, helm, sandbox cluster)', () => {
  const harness = sharedWorker();
  const objects = uniqueName('gates-cr');
  const releases = uniqueName('gates-rel');
  let work = '';

  /**
   * Writes a manifest `name` of `groups` (in order: group → its charts) with `spec` added, and
   * applies it; its releases are `<name>-<chart>`.
   */
  const apply = async (
    name: string,
    groups: Record<string, object[]>,
    spec: object = {},
    parallel = false,
  ) => {
    const docs = [
      armadaObject('ArmadaManifest', name, {
        release_prefix: name,
        chart_groups: Object.keys(groups),
        ...spec,
      }),
      ...Object.entries(groups).flatMap(([group, charts]) => [
        armadaObject('ArmadaChartGroup', group, {
          sequenced: !parallel,
          chart_group: charts.map((c) => (c as { metadata: { name: string } }).metadata.name),
        }),
        ...charts,
      ]),
    ];
    const file = path.join(work, `${name}-${Date.now()}.yaml`);
    await writeFile(file, docs.map((d) => stringify(d)).join('---\n'));
    return armadactl('apply', '-f', file, '--wait', '-n', objects);
  };
  const value = async (release: string) =>
    JSON.parse(await helm('get', 'values', release, '-n', releases, '-o', 'json')).settings.value as string;
  const releaseNames = async () =>
    (JSON.parse(await helm('list', '-n', releases, '-o', 'json')) as { name: string }[])
      .map((r) => r.name)
      .sort();

  beforeAll(async () => {
    work = await mkdtemp(path.join(tmpdir(), 'armada-gates-'));
    await installCrds();
    await kubectl('create', 'namespace', objects);
    process.env.ARMADA_TASK_QUEUE = harness().taskQueue;
  });
  afterAll(async () => {
    await kubectl('delete', 'namespace', objects, releases, '--ignore-not-found', '--wait=false');
  });

  it('a gate that times out with on_timeout continue goes on as if approved', async () => {
    const groups = {
      'go-first': [settingsChart('a', releases, { value: '1' })],
      'go-second': [settingsChart('b', releases, { value: '1' })],
    };
    const approval = { before: ['go-second'], timeout: '2s', on_timeout: 'continue' };
    const applied = await apply('go', groups, { approval });
    expect(applied).toMatchObject({ code: 0 });
    expect(applied.printed).toContain('go: deployed');
    expect(await releaseNames()).toEqual(expect.arrayContaining(['go-a', 'go-b']));
  });

  it('a gate that times out with on_timeout rollback undoes what the run changed before it; the group behind it never runs', async () => {
    const groups = (v: string) => ({
      'back-first': [settingsChart('a', releases, { value: v })],
      'back-second': [settingsChart('b', releases, { value: v })],
    });
    expect((await apply('back', groups('1'))).code).toBe(0);
    const approval = { before: ['back-second'], timeout: '2s', on_timeout: 'rollback' };
    const failed = await apply('back', groups('2'), { approval });
    expect(failed.code).toBe(1);
    expect(failed.printed).toContain('approval before group back-second timed out');
    expect([await value('back-a'), await value('back-b')]).toEqual(['1', '1']);
    const history = JSON.parse(await helm('history', 'back-a', '-n', releases, '-o', 'json')) as {
      description: string;
    }[];
    expect(history.map((h) => h.description.replace(/^armada-digest=.*/, 'deploy'))).toEqual([
      'deploy',
      'deploy',
      'Rollback to 1',
    ]);
    expect(JSON.parse(await helm('history', 'back-b', '-n', releases, '-o', 'json'))).toHaveLength(1);
  });

  it("a parallel group runs its charts at the same time: both helm writes (helm's last_deployed) precede the moment either chart's wait could end", async () => {
    // Each chart's pods need a node label that no node has: its Armada wait ends only once the
    // test adds it. Run one after the other, the second chart would not be written before then.
    const gate = `armada-test/${uniqueName('gate')}`;
    const chart = (name: string) =>
      helloChart(name, releases, {
        values: { replicaCount: 1, nodeSelector: { [gate]: 'open' } },
        wait: { timeout: 120, resources: [{ type: 'pod' }] },
      });
    const run = apply('par', { 'par-group': [chart('a'), chart('b')] }, {}, true);
    try {
      await eventually('both releases written before the gate opens', async () => {
        const names = await releaseNames();
        return names.includes('par-a') && names.includes('par-b') ? true : undefined;
      });
      const opened = Date.now();
      await kubectl('label', 'nodes', '--all', '--overwrite', `${gate}=open`);
      expect(await run).toMatchObject({ code: 0 });
      const started = await Promise.all(
        ['par-a', 'par-b'].map(
          async (r) =>
            Date.parse(
              JSON.parse(await helm('status', r, '-n', releases, '-o', 'json')).info.last_deployed as string,
            ) - opened,
        ),
      );
      console.log(
        `parallel group: helm wrote par-a and par-b ${started.join(' and ')} ms from the gate's opening`,
      );
      for (const ms of started) expect(ms).toBeLessThan(0);
    } finally {
      await kubectl('label', 'nodes', '--all', `${gate}-`).catch(() => '');
    }
  });
});
