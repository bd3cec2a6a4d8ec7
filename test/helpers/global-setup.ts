import { execFile } from 'node:child_process';
import { randomUUID } from 'node:crypto';
import { mkdtemp } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import path from 'node:path';
import { promisify } from 'node:util';
import { toolPath } from '../../activities/tools';
import { serviceAccountKubeconfig } from './kubeconfig';
import { startTemporal, type TestTemporal } from './temporal';

const repo = path.resolve(__dirname, '../..');
const run = promisify(execFile);

/** Where the suite installs the operator chart's RBAC (one release per run, see installRbac). */
const RBAC_NAMESPACE = 'armada-system';
/** Longer than any run of the suite; the tokens are the suite's own, never reused. */
const TOKEN_DURATION = '4h';

/** What globalTeardown removes. */
export interface SuiteRbac {
  release: string;
  namespace: string;
  /** Holds the kubeconfigs with the ServiceAccounts' tokens. */
  dir: string;
}

/**
 * Once per test run: one Temporal dev server and one workflow bundle, shared by every test file
 * through the environment (TEMPORAL_ADDRESS, ARMADA_TEST_TEMPORAL_UI, ARMADA_TEST_WORKFLOW_BUNDLE),
 * dist/ compiled, and, when there is a cluster (KUBECONFIG), the operator chart's RBAC with a
 * kubeconfig per ServiceAccount (installRbac).
 */
export default async function globalSetup(): Promise<void> {
  // dist/ and its workflow bundle (npm run build: only when stale), while the server starts. Tests
  // that run the worker or the bridge as processes (the drills, the bridge) run dist/, built
  // once here so that no two test files write it at the same time; the build's tsc is also the
  // suite's type check (ts-jest only transpiles).
  const [temporal] = await Promise.all([startTemporal(), run('bash', ['deploy/build.sh'], { cwd: repo })]);
  (globalThis as { __temporal__?: TestTemporal }).__temporal__ = temporal;
  process.env.TEMPORAL_ADDRESS = temporal.address;
  process.env.ARMADA_TEST_TEMPORAL_UI = temporal.uiUrl;
  process.env.ARMADA_TEST_WORKFLOW_BUNDLE = path.join(repo, 'dist', 'workflow-bundle.js');

  if (process.env.KUBECONFIG) await installRbac(process.env.KUBECONFIG);
}

/**
 * The product runs with the operator chart's ServiceAccounts, as it does when installed, so a
 * rule missing from deploy/chart/templates/rbac-*.yaml fails a test; the tests themselves keep
 * the sandbox's admin kubeconfig (KUBECONFIG) for their own setup and checks.
 *
 * Installs deploy/chart with no worker or bridge pods (replicas 0) and without CRDs (the tests
 * install them from deploy/crds/), as a release of its own per run, so runs that share the
 * sandbox never upgrade each other's RBAC. Exports, for every test file:
 * - ARMADA_KUBECONFIG: the worker's kubeconfig. The in-process workers and the activities the
 *   tests call directly run the worker's code in the Jest process, which reads this.
 * - ARMADA_TEST_WORKER_KUBECONFIG, ARMADA_TEST_BRIDGE_KUBECONFIG: what startProcess
 *   (processes.ts) hands dist/worker/main.js and dist/bridge/main.js as their ARMADA_KUBECONFIG.
 * - ARMADA_TEST_BRIDGE_SERVICEACCOUNT (namespace:name), ARMADA_TEST_BRIDGE_LEASE_ROLE: the
 *   chart grants the Lease in its release's namespace only, but each test's bridge keeps its
 *   Lease in the test's own namespace; startProcess binds the chart's Lease ClusterRole there,
 *   as an operator moving the Lease would (see rbac-bridge.yaml).
 */
async function installRbac(adminKubeconfig: string): Promise<void> {
  const release = `armada-${randomUUID().slice(0, 8)}`;
  const namespace = RBAC_NAMESPACE;
  const fullname = `${release}-armada-temporal`;
  const dir = await mkdtemp(path.join(tmpdir(), 'armada-rbac-'));
  (globalThis as { __armadaRbac__?: SuiteRbac }).__armadaRbac__ = { release, namespace, dir };
  const env = { ...process.env, KUBECONFIG: adminKubeconfig };
  const tool = async (name: string, ...args: string[]) =>
    (await run(toolPath(name), args, { cwd: repo, env })).stdout;

  await tool(
    'helm',
    'install',
    release,
    'deploy/chart',
    '--namespace',
    namespace,
    '--create-namespace',
    '--skip-crds',
    // The tests install the admission policies with the CRDs (installCrds), outside any release.
    '--set',
    'admissionPolicies.install=false',
    // The suite's tests deploy as the worker into namespaces they create as they go, as a
    // cluster one team owns would, and act as ServiceAccounts they create as they go; the
    // tenancy drill and operator-chart.test.ts install the chart as multi-tenant clusters do,
    // with the worker's own role alone and impersonation of the listed ServiceAccounts only.
    '--set',
    'rbac.deploy.workerClusterWide=true',
    '--set',
    'rbac.deploy.impersonateClusterWide=true',
    '--set',
    'worker.replicas=0',
    '--set',
    'bridge.replicas=0',
    '--wait',
    '--timeout',
    '60s',
  );

  const kubeconfigOf = (component: 'worker' | 'bridge'): Promise<string> =>
    serviceAccountKubeconfig(
      adminKubeconfig,
      namespace,
      `${fullname}-${component}`,
      path.join(dir, `${component}.kubeconfig`),
      TOKEN_DURATION,
    );
  const worker = await kubeconfigOf('worker');
  const bridge = await kubeconfigOf('bridge');
  process.env.ARMADA_KUBECONFIG = worker;
  process.env.ARMADA_TEST_WORKER_KUBECONFIG = worker;
  process.env.ARMADA_TEST_BRIDGE_KUBECONFIG = bridge;
  process.env.ARMADA_TEST_BRIDGE_SERVICEACCOUNT = `${namespace}:${fullname}-bridge`;
  process.env.ARMADA_TEST_BRIDGE_LEASE_ROLE = `${fullname}-bridge-lease`;
}
