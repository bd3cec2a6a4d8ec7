import { execFile } from 'node:child_process';
import { mkdtemp, readFile, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import path from 'node:path';
import { promisify } from 'node:util';
import { GROUP } from '../../api/common';
import { kinds, type KindDefinition } from '../../api/kinds';
import { main } from '../../cli/main';
import { manifestWorkflowId } from '../../runs/targets';
import { progressQuery } from '../../workflows/messages';
import { sharedWorker, uniqueName } from '../helpers/env';
import { applyObjects, kubectl } from '../helpers/kube';
import { serviceAccountKubeconfig } from '../helpers/kubeconfig';
import { eventually } from '../helpers/processes';

const repo = path.resolve(__dirname, '../..');
const example = path.join(repo, 'examples/sequenced-manifest.yaml');

/** Every namespaced armada kind's plural: what a team's Role grants in its own namespace. */
const armadaResources = (Object.values(kinds) as KindDefinition[])
  .filter((k) => k.scope !== 'Cluster')
  .map((k) => k.plural);

/** A tenant: a namespace with a ServiceAccount `dev` that may read and patch armada objects there only. */
interface Tenant {
  namespace: string;
  username: string;
  kubeconfig: string;
}

async function tenant(prefix: string, dir: string): Promise<Tenant> {
  const namespace = uniqueName(prefix);
  await kubectl('create', 'namespace', namespace);
  await applyObjects(namespace, [
    { apiVersion: 'v1', kind: 'ServiceAccount', metadata: { name: 'dev' } },
    {
      apiVersion: 'rbac.authorization.k8s.io/v1',
      kind: 'Role',
      metadata: { name: 'armada-steer' },
      rules: [{ apiGroups: [GROUP], resources: armadaResources, verbs: ['get', 'list', 'patch'] }],
    },
    {
      apiVersion: 'rbac.authorization.k8s.io/v1',
      kind: 'RoleBinding',
      metadata: { name: 'armada-steer' },
      roleRef: { apiGroup: 'rbac.authorization.k8s.io', kind: 'Role', name: 'armada-steer' },
      subjects: [{ kind: 'ServiceAccount', name: 'dev', namespace }],
    },
  ]);
  const kubeconfig = await serviceAccountKubeconfig(
    process.env.KUBECONFIG!,
    namespace,
    'dev',
    path.join(dir, `${namespace}.kubeconfig`),
    '1h',
  );
  return { namespace, username: `system:serviceaccount:${namespace}:dev`, kubeconfig };
}

/**
 * bin/armadactl.js as a person runs it from their shell: their own KUBECONFIG, no
 * ARMADA_KUBECONFIG (the suite's worker ServiceAccount), the suite's Temporal.
 */
async function armadactlAs(kubeconfig: string, ...args: string[]) {
  const env: NodeJS.ProcessEnv = { ...process.env, KUBECONFIG: kubeconfig, USER: 'ops-alice' };
  delete env.ARMADA_KUBECONFIG;
  try {
    const { stdout, stderr } = await promisify(execFile)(
      process.execPath,
      [path.join(repo, 'bin/armadactl.js'), ...args],
      { cwd: repo, env },
    );
    return { code: 0, stdout: stdout.trim(), stderr: stderr.trim() };
  } catch (err) {
    const failed = err as { code: number; stdout: string; stderr: string };
    return { code: failed.code, stdout: failed.stdout.trim(), stderr: failed.stderr.trim() };
  }
}

describe('who may steer a run: armadactl asks the API server (sandbox cluster, Temporal dev server)', () => {
  const harness = sharedWorker();
  let a: Tenant;
  let b: Tenant;
  let workflowId: string;
  const progress = () => harness().client.workflow.getHandle(workflowId).query(progressQuery);
  /** The signals the run received so far, by name, from its history. */
  const signals = async () =>
    ((await harness().client.workflow.getHandle(workflowId).fetchHistory()).events ?? [])
      .map((e) => e.workflowExecutionSignaledEventAttributes?.signalName)
      .filter((name) => name !== undefined && name !== null);

  beforeAll(async () => {
    const dir = await mkdtemp(path.join(tmpdir(), 'armadactl-authz-'));
    [a, b] = await Promise.all([tenant('tenant-a', dir), tenant('tenant-b', dir)]);
    // Tenant B's manifest, started from a file by an administrator; it waits at its first gate,
    // before any chart, so it stays running while the tenants try to steer it.
    const file = path.join(dir, 'manifest.yaml');
    const manifest = (await readFile(example, 'utf8'))
      .replaceAll('namespace: demo', `namespace: ${b.namespace}`)
      .replace('  on_failure: rollback', '  on_failure: rollback\n  approval:\n    before: [platform]');
    await writeFile(file, manifest);
    process.env.ARMADA_TASK_QUEUE = harness().taskQueue;
    const applied: string[] = [];
    const push = (line: string) => applied.push(line);
    expect(await main(['apply', '-f', file, '-n', b.namespace], push, push)).toBe(0);
    workflowId = manifestWorkflowId(b.namespace, 'demo');
    await eventually('the run waiting at its gate', async () =>
      (await progress()).phase === 'WaitingApproval' ? true : undefined,
    );
  });

  afterAll(async () => {
    await harness()
      .client.workflow.getHandle(workflowId)
      .terminate('test over')
      .catch(() => undefined);
    await kubectl('delete', 'namespace', a.namespace, b.namespace, '--wait=false');
  });

  it("refuses tenant A pausing tenant B's run, naming the missing permission, and sends nothing", async () => {
    const { code, stderr } = await armadactlAs(a.kubeconfig, 'pause', 'demo', '-n', b.namespace);
    expect(stderr).toBe(
      `armadactl pause: you (${a.username}) may not patch armadamanifests.armada.airshipit.org ${b.namespace}/demo`,
    );
    expect(code).toBe(1);
    expect(await signals()).toEqual([]);
    expect((await progress()).paused).toBeUndefined();
  });

  it('lets tenant B pause its own run, recorded as its ServiceAccount', async () => {
    const { code, stdout } = await armadactlAs(
      b.kubeconfig,
      'pause',
      'demo',
      '-n',
      b.namespace,
      '--reason',
      'mine',
    );
    expect(stdout).toBe(`pause: pausing at the next safe point (${workflowId})`);
    expect(code).toBe(0);
    const paused = await eventually('the run paused', async () => (await progress()).paused);
    expect(paused).toMatchObject({ by: b.username, reason: 'mine' });
  });

  it('lets a Temporal administrator steer without the check, recorded as temporal-admin:$USER', async () => {
    // Tenant A's kubeconfig would be refused: --as-temporal-admin never asks the cluster.
    expect(
      (await armadactlAs(a.kubeconfig, 'resume', 'demo', '-n', b.namespace, '--as-temporal-admin')).code,
    ).toBe(0);
    await eventually('the run resumed', async () => ((await progress()).paused ? undefined : true));
    const { code } = await armadactlAs(
      a.kubeconfig,
      'pause',
      'demo',
      '-n',
      b.namespace,
      '--as-temporal-admin',
    );
    expect(code).toBe(0);
    const paused = await eventually('the run paused again', async () => (await progress()).paused);
    expect(paused.by).toBe('temporal-admin:ops-alice');
  });
});
