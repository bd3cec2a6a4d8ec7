import { mkdtemp, readFile, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import path from 'node:path';
import { main } from '../../cli/main';
import { helm, sharedWorker } from '../helpers/env';
import { installCrds, kubectl } from '../helpers/kube';

const example = path.resolve(__dirname, '../../examples/sequenced-manifest.yaml');
const releases = ['demo-settings', 'demo-backend', 'demo-web', 'demo-admin'];
/** Where the manifest's custom resources live (the releases go to their own namespace, demo). */
const CR_NAMESPACE = 'manifest-e2e';

interface HelmListEntry {
  name: string;
  namespace: string;
  revision: string;
  status: string;
  updated: string;
}

async function helmList(namespace: string): Promise<Record<string, HelmListEntry>> {
  const list = JSON.parse(
    await helm('list', '--namespace', namespace, '--output', 'json'),
  ) as HelmListEntry[];
  return Object.fromEntries(list.map((r) => [r.name, r]));
}

async function lastDeployed(release: string, namespace: string): Promise<number> {
  const status = JSON.parse(await helm('status', release, '--namespace', namespace, '--output', 'json'));
  return Date.parse(status.info.last_deployed);
}

/** `armadactl apply ... --wait` in-process, against the harness's worker; returns exit code and output. */
async function apply(file: string, ...flags: string[]) {
  const out: string[] = [];
  const code = await main(
    ['apply', '-f', file, '--wait', '-n', CR_NAMESPACE, ...flags],
    (l) => out.push(l),
    (l) => out.push(l),
  );
  return { code, out: out.join('\n') };
}

/** A copy of the example manifest with some text replaced, for variants of the same deploy. */
async function variant(replacements: [string, string][]): Promise<string> {
  let text = await readFile(example, 'utf8');
  for (const [from, to] of replacements) {
    if (!text.includes(from)) throw new Error(`example has no "${from}"`);
    text = text.replace(from, to);
  }
  const file = path.join(await mkdtemp(path.join(tmpdir(), 'armada-manifest-')), 'manifest.yaml');
  await writeFile(file, text);
  return file;
}

describe('armadactl apply of the example manifest (real worker, helm, sandbox cluster)', () => {
  const harness = sharedWorker();

  beforeAll(async () => {
    // The manifest's custom resources are on the cluster too, so the run writes their status.
    await installCrds();
    await kubectl('create', 'namespace', CR_NAMESPACE);
    await kubectl('apply', '-n', CR_NAMESPACE, '-f', example);
    process.env.ARMADA_TASK_QUEUE = harness().taskQueue;
  });

  it('deploys every chart, group after group, and exits 0', async () => {
    const { code, out } = await apply(example);
    expect(out).toContain('demo: deployed');
    expect(code).toBe(0);
    const list = await helmList('demo');
    expect(releases.map((r) => [r, list[r]?.status, list[r]?.revision])).toEqual(
      releases.map((r) => [r, 'deployed', '1']),
    );
    const [settings, backend, web, admin] = await Promise.all(releases.map((r) => lastDeployed(r, 'demo')));
    expect(settings).toBeLessThanOrEqual(backend); // platform is sequenced: settings, then backend
    expect(backend).toBeLessThanOrEqual(Math.min(web, admin)); // apps only after platform
  });

  it('wrote the run into the custom resources: state, conditions, revision, run link, events', async () => {
    const chart = JSON.parse(await kubectl('get', 'act', 'web', '-n', CR_NAMESPACE, '-o', 'json'));
    expect(chart.status).toMatchObject({
      actual_state: 'deployed',
      satisfied: true,
      observedGeneration: chart.metadata.generation,
      helm: { revision: 1 },
    });
    expect(chart.status.workflow.url).toMatch(
      /^http:\/\/localhost:8233\/namespaces\/default\/workflows\/helm%3Ademo%2Fdemo-web\//,
    );
    const ready = chart.status.conditions.find((c: { type: string }) => c.type === 'Ready');
    expect(ready).toMatchObject({
      status: 'True',
      reason: 'Deployed',
      observedGeneration: chart.metadata.generation,
    });
    const manifest = JSON.parse(await kubectl('get', 'amf', 'demo', '-n', CR_NAMESPACE, '-o', 'json'));
    expect(manifest.status).toMatchObject({
      actual_state: 'deployed',
      satisfied: true,
      progress: { ready: 2, total: 2 },
    });
    const events = JSON.parse(await kubectl('get', 'events', '-n', CR_NAMESPACE, '-o', 'json')) as {
      items: { involvedObject: { kind: string; name: string }; reason: string }[];
    };
    const reasons = events.items
      .filter((e) => e.involvedObject.kind === 'ArmadaManifest')
      .map((e) => e.reason);
    expect(reasons).toEqual(expect.arrayContaining(['Running', 'Deployed']));
    const columns = (await kubectl('get', 'act', '-n', CR_NAMESPACE))
      .split('\n')
      .find((l) => l.startsWith('web '));
    expect(columns?.split(/\s{2,}/).slice(1, 4)).toEqual(['deployed', 'deployed', 'true']);
  });

  it('a second apply of the unchanged manifest creates no new revision', async () => {
    const { code } = await apply(example);
    expect(code).toBe(0);
    const list = await helmList('demo');
    expect(releases.map((r) => list[r].revision)).toEqual(['1', '1', '1', '1']);
  });

  it('a values change upgrades only the changed chart', async () => {
    const file = await variant([['replicaCount: 3', 'replicaCount: 4']]);
    expect((await apply(file)).code).toBe(0);
    const list = await helmList('demo');
    expect(releases.map((r) => list[r].revision)).toEqual(['1', '1', '2', '1']);
  });

  it('a chart whose wait cannot be met fails the run, and rollback puts every release back', async () => {
    // admin's pods can never be scheduled: its Armada wait times out and the run rolls back.
    const file = await variant([
      ['replicaCount: 1', "replicaCount: 1\n    tolerations: []\n    nodeSelector: {nowhere: 'true'}"],
      ['replicaCount: 3', 'replicaCount: 5'],
      [
        '    timeout: 120\n    resources:\n      - type: pod',
        '    timeout: 5\n    resources:\n      - type: pod',
      ],
    ]);
    const before = await helmList('demo');
    const { code, out } = await apply(file, '--on-failure', 'rollback');
    expect(code).toBe(1);
    expect(out).toMatch(/group apps failed: admin: .*demo-admin/s);
    const after = await helmList('demo');
    for (const release of releases) {
      const changed = Number(after[release].revision) > Number(before[release].revision);
      // Unchanged releases keep their revision; changed ones are rolled back to a new revision
      // whose contents are the old one's; either way each is deployed again.
      expect({ release, status: after[release].status }).toEqual({ release, status: 'deployed' });
      if (changed) {
        const values = JSON.parse(
          await helm('get', 'values', release, '--namespace', 'demo', '--output', 'json'),
        );
        const old = JSON.parse(
          await helm(
            'get',
            'values',
            release,
            '--namespace',
            'demo',
            '--revision',
            before[release].revision,
            '--output',
            'json',
          ),
        );
        expect({ release, values }).toEqual({ release, values: old });
      }
    }
  });

  it('target_state uninstalled removes every release', async () => {
    const file = await variant([
      ['  on_failure: rollback', '  on_failure: rollback\n  target_state: uninstalled'],
    ]);
    const { code, out } = await apply(file);
    expect(out).toContain('demo: uninstalled');
    expect(code).toBe(0);
    const left = await helmList('demo');
    expect(releases.filter((r) => r in left)).toEqual([]);
  });
});
