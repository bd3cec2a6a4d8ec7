import { AppsV1Api } from '@kubernetes/client-node';
import { mkdtemp, readFile, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import path from 'node:path';
import { canaryProgressQuery } from '../../workflows/messages';
import { objectWorkflowId } from '../../workflows/plan/names';
import { armadactlHere as armadactl } from '../helpers/armadactl';
import { kubeConfig, sharedWorker, uniqueName } from '../helpers/env';
import { installCrds, kubectl } from '../helpers/kube';

const example = path.resolve(__dirname, '../../examples/deployer.yaml');

/** The example Deployer with its namespace, version and sleeps replaced (short holds for tests). */
async function deployerFile(namespace: string, version: string, sleep: number): Promise<string> {
  const text = (await readFile(example, 'utf8'))
    .replace('namespace: web', `namespace: ${namespace}`)
    .replace('version: 1.25.3', `version: ${version}`)
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

  const replicasOf = async () => {
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
  // (README, "the ownership rule"); the bridge test covers the status a Deployer's run writes.
  it('a first deploy creates nginx-<version> at full size', async () => {
    const file = await deployerFile(namespace, '1.25.3', 1);
    const { code, printed: out } = await armadactl('apply', '-f', file, '--wait', '-n', crNamespace);
    expect(out).toContain('nginx: deployed, serving 1.25.3');
    expect(code).toBe(0);
    expect(await replicasOf()).toEqual({ 'nginx-1.25.3': 10 });
  });

  it('a version change goes 1/9 → 3/7 → 6/4 → 10/0 as the API server sees it, then deletes the old Deployment', async () => {
    const file = await deployerFile(namespace, '1.26.0', 2);
    const applied = armadactl('apply', '-f', file, '--wait', '-n', crNamespace);
    const handle = harness().client.workflow.getHandle(objectWorkflowId('Deployer', crNamespace, 'nginx'));
    // At every hold, read the replica split from the API server.
    const observed: string[] = [];
    let step = 0;
    while (step < 3) {
      const progress = await handle.query(canaryProgressQuery).catch(() => undefined);
      if (progress?.waitingOn === 'hold' && progress.step > step) {
        step = progress.step;
        const replicas = await replicasOf();
        observed.push(`${replicas['nginx-1.26.0']}/${replicas['nginx-1.25.3']}`);
      }
      await new Promise((resolve) => setTimeout(resolve, 100));
    }
    const { code, printed: out } = await applied;
    expect(code).toBe(0);
    expect(out).toContain('nginx: promoted, serving 1.26.0');
    expect(observed).toEqual(['1/9', '3/7', '6/4']);
    expect(await replicasOf()).toEqual({ 'nginx-1.26.0': 10 });

    const status = await armadactl('status', 'dpl/nginx', '-n', crNamespace);
    expect(status.code).toBe(0);
    expect(status.printed).toMatch(/nginx-1\.26\.0: Promoted, step 4\/4 at 100 %/);
    for (const split of ['1/9', '3/7', '6/4', '10/0']) expect(status.printed).toContain(split);
    expect(status.printed).toMatch(/\d\d:\d\d:\d\d {2}\d\d:\d\d:\d\d {2}\d\d:\d\d:\d\d held/);
  });
});
