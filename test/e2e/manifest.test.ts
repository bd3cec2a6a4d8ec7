import { mkdtemp, readFile, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import path from 'node:path';
import { WorkflowNotFoundError } from '@temporalio/client';
import { main } from '../../cli/main';
import { manifestWorkflowId } from '../../runs/targets';
import { objectWorkflowId } from '../../core/plan/names';
import { helm, sharedWorker, uniqueName } from '../helpers/env';
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
    // The manifest's objects are not on the cluster: files drive them (the ownership rule).
    await installCrds();
    await kubectl('create', 'namespace', CR_NAMESPACE);
    process.env.ARMADA_TASK_QUEUE = harness().taskQueue;
  });

  describe('the ownership rule: an object on the cluster is the cluster’s', () => {
    /** Whether Temporal has any run of a workflow ID (describe reads it at once, unlike a list). */
    const anyRun = (workflowId: string) =>
      harness()
        .client.workflow.getHandle(workflowId)
        .describe()
        .then(
          () => true,
          (err: unknown) => {
            if (err instanceof WorkflowNotFoundError) return false;
            throw err;
          },
        );
    /** The example's documents, releases in `namespace` (so a run that wrongly starts touches only it). */
    const exampleIn = async (namespace: string) =>
      (await readFile(example, 'utf8'))
        .replaceAll('namespace: demo', `namespace: ${namespace}`)
        .split('\n---\n');
    const fileOf = async (docs: string[]) => {
      const file = path.join(await mkdtemp(path.join(tmpdir(), 'armada-owned-')), 'objects.yaml');
      await writeFile(file, docs.join('\n---\n'));
      return file;
    };
    const armadactlApply = async (file: string, namespace: string) => {
      const out: string[] = [];
      const err: string[] = [];
      const code = await main(
        ['apply', '-f', file, '-n', namespace],
        (l) => out.push(l),
        (l) => err.push(l),
      );
      return { code, out, err: err.join('\n') };
    };
    let owned = '';
    beforeEach(async () => {
      owned = uniqueName('owned');
      await kubectl('create', 'namespace', owned);
    });
    afterEach(() => kubectl('delete', 'namespace', owned, '--wait=false'));

    it('refuses a manifest whose ArmadaManifest is on the cluster, naming it, and starts nothing', async () => {
      const file = await fileOf(await exampleIn(owned));
      await kubectl('apply', '-n', owned, '-f', file);
      const { code, out, err } = await armadactlApply(file, owned);
      expect({ code, out }).toEqual({ code: 1, out: [] });
      expect(err).toContain(`ArmadaManifest ${owned}/demo is on the cluster`);
      expect(err).toContain(`kubectl apply -n ${owned} -f ${file}`);
      expect(await anyRun(manifestWorkflowId(owned, 'demo'))).toBe(false);
    });

    it('refuses a manifest file when only one of the charts it names is on the cluster', async () => {
      const docs = await exampleIn(owned);
      await kubectl('apply', '-n', owned, '-f', await fileOf(docs.filter((d) => d.includes('name: web'))));
      const { code, err } = await armadactlApply(await fileOf(docs), owned);
      expect(code).toBe(1);
      expect(err).toContain(`ArmadaChart ${owned}/web is on the cluster`);
      expect(err).not.toContain('ArmadaManifest');
      expect(await anyRun(manifestWorkflowId(owned, 'demo'))).toBe(false);
    });

    it('refuses a file of standalone objects when its Deployer is on the cluster, starting none of them', async () => {
      const deployer = (
        await readFile(path.resolve(__dirname, '../../examples/deployer.yaml'), 'utf8')
      ).replace('namespace: web', `namespace: ${owned}`);
      await kubectl('apply', '-n', owned, '-f', await fileOf([deployer]));
      const web = (await exampleIn(owned)).filter((d) => d.includes('name: web'));
      const { code, err } = await armadactlApply(await fileOf([...web, deployer]), owned);
      expect(code).toBe(1);
      expect(err).toContain(`Deployer ${owned}/podinfo is on the cluster`);
      expect(await anyRun(objectWorkflowId('Deployer', owned, 'podinfo'))).toBe(false);
      expect(await anyRun(objectWorkflowId('ArmadaChart', owned, 'web'))).toBe(false);
    });
  });

  it('deploys every chart, group after group, and exits 0 (its objects are not on the cluster)', async () => {
    const { code, out } = await apply(example);
    expect(out).toContain(`started ${manifestWorkflowId(CR_NAMESPACE, 'demo')}`);
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
