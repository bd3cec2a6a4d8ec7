import { main } from '../../cli/main';
import { execFile } from 'node:child_process';
import path from 'node:path';
import { promisify } from 'node:util';
import { GROUP } from '../../api/common';
import { kinds, type KindDefinition } from '../../api/kinds';
import { uniqueName } from './env';
import { applyObjects, kubectl } from './kube';
import { serviceAccountKubeconfig } from './kubeconfig';

const repo = path.resolve(__dirname, '../..');

/** What a command line printed and how it exited. */
export interface Ran {
  code: number;
  stdout: string;
  stderr: string;
}

/**
 * bin/armadactl.js as a person runs it from their shell, in the repository: their own KUBECONFIG,
 * no ARMADA_KUBECONFIG (the suite's worker ServiceAccount), the suite's Temporal and task queue
 * (ARMADA_TASK_QUEUE, when the test set it), and USER ops-alice.
 */
export async function armadactlAs(kubeconfig: string, ...args: string[]): Promise<Ran> {
  const env: NodeJS.ProcessEnv = { ...process.env, KUBECONFIG: kubeconfig, USER: 'ops-alice' };
  delete env.ARMADA_KUBECONFIG;
  try {
    const { stdout, stderr } = await promisify(execFile)(
      process.execPath,
      [path.join(repo, 'bin/armadactl.js'), ...args],
      { cwd: repo, env, maxBuffer: 16 * 1024 * 1024 },
    );
    return { code: 0, stdout: stdout.trim(), stderr: stderr.trim() };
  } catch (err) {
    const failed = err as { code: number; stdout: string; stderr: string };
    return { code: failed.code, stdout: failed.stdout.trim(), stderr: failed.stderr.trim() };
  }
}

/** Every namespaced armada kind's plural: what a team's Role grants in its own namespace. */
const armadaResources = (Object.values(kinds) as KindDefinition[])
  .filter((k) => k.scope !== 'Cluster')
  .map((k) => k.plural);

/** A tenant: a namespace with a ServiceAccount `dev` that may read and patch armada objects there only (and list Events). */
export interface Tenant {
  namespace: string;
  username: string;
  kubeconfig: string;
}

/**
 * A new namespace (named from `prefix`) with a ServiceAccount `dev` that may get, list and patch
 * the armada objects there, and nothing else (not delete them); its kubeconfig is written in `dir`.
 */
export async function tenant(prefix: string, dir: string): Promise<Tenant> {
  const namespace = uniqueName(prefix);
  await kubectl('create', 'namespace', namespace);
  await applyObjects(namespace, [
    { apiVersion: 'v1', kind: 'ServiceAccount', metadata: { name: 'dev' } },
    {
      apiVersion: 'rbac.authorization.k8s.io/v1',
      kind: 'Role',
      metadata: { name: 'armada-steer' },
      rules: [
        { apiGroups: [GROUP], resources: armadaResources, verbs: ['get', 'list', 'patch'] },
        // armadactl's steering commands read the bridge's answer from the object's Events.
        { apiGroups: [''], resources: ['events'], verbs: ['list'] },
      ],
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

/** What armadactl run in this process printed: stdout, stderr, and both in the order printed. */
export interface Printed {
  code: number;
  out: string;
  err: string;
  printed: string;
}

/**
 * armadactl in this test's own process (cli/main.ts), so it reaches the test's worker through
 * the environment the test set (ARMADA_TASK_QUEUE): its exit code and what it printed.
 */
export async function armadactlHere(...argv: string[]): Promise<Printed> {
  const lines: { line: string; err: boolean }[] = [];
  const code = await main(
    argv,
    (line) => lines.push({ line, err: false }),
    (line) => lines.push({ line, err: true }),
  );
  const join = (keep: (l: { err: boolean }) => boolean) =>
    lines
      .filter(keep)
      .map((l) => l.line)
      .join('\n');
  return { code, out: join((l) => !l.err), err: join((l) => l.err), printed: join(() => true) };
}
