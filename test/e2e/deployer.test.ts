import { AppsV1Api } from '@kubernetes/client-node';
import { mkdtemp, readFile, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import path from 'node:path';
import { armadactlHere as armadactl } from '../helpers/armadactl';
import { kubeConfig, sharedWorker, uniqueName } from '../helpers/env';
import { deploymentsWatch, installCrds, kubectl, recordChanges, replicasOf } from '../helpers/kube';

const example = path.resolve(__dirname, '../../examples/deployer.yaml');

/** The example Deployer with its namespace, version and sleeps replaced (short holds for tests). */
async function deployerFile(namespace: string, version: string, sleep: number): Promise<string> {
  const text = (await readFile(example, 'utf8'))
    .replace('namespace: web', `namespace: ${namespace}`)
    .replace('version: 6.9.2', `version: ${version}`)
    .replace(/sleep: \d+/g, `sleep: ${sleep}`);
  const file = path.join(await mkdtemp(path.join(tmpdir(), 'armada-deployer-')), 'deployer.yaml');
  await writeFile(file, text);
  return file;
}

describe('Deployer canary through armadactl (real worker, sandbox cluster)', () => {
  const namespace = uniqueName('dpl');
  const crNamespace = uniqueName('dpl-cr');
  const apps = kubeConfig().makeApiClient(AppsV1Api);
  const harness = sharedWorker();

  const replicaCounts = async () => {
    const list = await apps.listNamespacedDeployment({ namespace });
    return Object.fromEntries(list.items.map((d) => [d.metadata!.name!, d.spec!.replicas!]));
  };

  beforeAll(async () => {
    await installCrds();
    await kubectl('create', 'namespace', crNamespace);
    process.env.ARMADA_TASK_QUEUE = harness().taskQueue;
  });
  afterAll(async () => {
    await kubectl('delete', 'namespace', namespace, crNamespace, '--wait=false');
  });

  // The Deployer is not on the cluster: armadactl applies only what the cluster does not own
  // (docs/how-to/operate-runs.md, "the ownership rule"); the bridge test covers the status a Deployer's run writes.
  it('a first deploy creates podinfo-<version> at full size', async () => {
    const file = await deployerFile(namespace, '1.25.3', 1);
    const { code, printed: out } = await armadactl('apply', '-f', file, '--wait', '-n', crNamespace);
    expect(out).toContain('podinfo: deployed, serving 1.25.3');
    expect(code).toBe(0);
    expect(await replicaCounts()).toEqual({ 'podinfo-1.25.3': 10 });
  });

  it('a version change goes 1/9 → 3/7 → 6/4 → 10/0 as the API server sees it, then deletes the old Deployment', async () => {
    const file = await deployerFile(namespace, '1.26.0', 2);
    const watched = await recordChanges([deploymentsWatch(namespace)], 1);
    const { code, printed: out } = await armadactl('apply', '-f', file, '--wait', '-n', crNamespace);
    expect(code).toBe(0);
    expect(out).toContain('podinfo: promoted, serving 1.26.0');
    // Every replica count the API server held, in order: each step scales the new Deployment up
    // before the old one down (1/9, 3/7, 6/4, 10/0); the old one goes once the new serves in full.
    expect(await watched.changesUntilDeleted('podinfo-1.25.3', replicasOf)).toEqual([
      'podinfo-1.26.0 0',
      'podinfo-1.26.0 1',
      'podinfo-1.25.3 9',
      'podinfo-1.26.0 3',
      'podinfo-1.25.3 7',
      'podinfo-1.26.0 6',
      'podinfo-1.25.3 4',
      'podinfo-1.26.0 10',
      'podinfo-1.25.3 0',
      'podinfo-1.25.3 deleted',
    ]);
    expect(await replicaCounts()).toEqual({ 'podinfo-1.26.0': 10 });

    const status = await armadactl('status', 'dpl/podinfo', '-n', crNamespace);
    expect(status.code).toBe(0);
    // A promoted canary is Deployed, as kubectl get dpl and armadactl list say it (api/states.ts).
    expect(status.printed).toMatch(/podinfo-1\.26\.0: Deployed, step 4\/4 at 100 %/);
    for (const split of ['1/9', '3/7', '6/4', '10/0']) expect(status.printed).toContain(split);
    expect(status.printed).toMatch(/\d\d:\d\d:\d\d {2}\d\d:\d\d:\d\d {2}\d\d:\d\d:\d\d held/);
  });

  it('rollback --previous walks back one rollout at a time: after v3, twice goes to v2, then v1', async () => {
    // Issue 32.5: the undo run's own `previous` was the newer version, so a second --previous flipped forward.
    const file = await deployerFile(namespace, '1.27.0', 1);
    expect((await armadactl('apply', '-f', file, '--wait', '-n', crNamespace)).code).toBe(0);
    expect(await replicaCounts()).toEqual({ 'podinfo-1.27.0': 10 });
    const back = () => armadactl('rollback', 'dpl/podinfo', '-n', crNamespace, '--previous', '--now');
    const first = await back();
    expect(first).toMatchObject({ code: 0 });
    expect(first.printed).toContain('rollback: dpl/podinfo runs version 1.26.0');
    expect(await replicaCounts()).toEqual({ 'podinfo-1.26.0': 10 });
    const second = await back();
    expect(second).toMatchObject({ code: 0 });
    expect(second.printed).toContain('rollback: dpl/podinfo runs version 1.25.3');
    expect(await replicaCounts()).toEqual({ 'podinfo-1.25.3': 10 });
  });
});
