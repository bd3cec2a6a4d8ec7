import { execFileSync, spawn, type ChildProcess } from 'node:child_process';
import { once } from 'node:events';
import path from 'node:path';
import { toolPath } from '../../activities/tools';

/** The repository root, from test/helpers/ or from dist/test/helpers/ (the benchmarks run compiled). */
const repo = path.resolve(__dirname, __dirname.includes(`${path.sep}dist${path.sep}`) ? '../../..' : '../..');

export interface ProductProcess {
  child: ChildProcess;
  /** Everything it printed so far (stdout and stderr). */
  output(): string;
  /** Resolves once its output contains `text`. */
  printed(text: string): Promise<void>;
  /** SIGTERM (or `signal`) and wait for it to exit. */
  stop(signal?: NodeJS.Signals): Promise<void>;
}

/**
 * Runs a command from the repository root with extra environment, capturing what it prints (the
 * tail only, so a long run's logs cannot grow without bound), so a test or benchmark can wait
 * for a line and stop or kill it.
 */
export function spawnCaptured(command: string, args: string[], env: NodeJS.ProcessEnv): ProductProcess {
  const child = spawn(command, args, {
    cwd: repo,
    env: { ...process.env, ...env },
    stdio: ['ignore', 'pipe', 'pipe'],
  });
  let output = '';
  const waiters: { text: string; resolve: () => void }[] = [];
  const onData = (chunk: Buffer) => {
    output += chunk.toString();
    if (output.length > 4_000_000) output = output.slice(-2_000_000);
    for (const waiter of waiters.filter((w) => output.includes(w.text))) {
      waiters.splice(waiters.indexOf(waiter), 1);
      waiter.resolve();
    }
  };
  child.stdout!.on('data', onData);
  child.stderr!.on('data', onData);
  const exited = once(child, 'exit');
  const what = [command, ...args].join(' ');
  return {
    child,
    output: () => output,
    printed: (text) =>
      output.includes(text)
        ? Promise.resolve()
        : new Promise<void>((resolve, reject) => {
            waiters.push({ text, resolve });
            void exited.then(() => reject(new Error(`${what} exited before printing "${text}":\n${output}`)));
          }),
    async stop(signal = 'SIGTERM') {
      if (child.exitCode === null && child.signalCode === null) child.kill(signal);
      await exited;
    },
  };
}

/**
 * Runs one of the product's processes (`dist/worker/main.js`, `dist/bridge/main.js`, compiled by
 * the global setup) with extra environment, as production runs it, so a test can kill it. Its
 * metrics are served on a free port (ARMADA_METRICS_PORT=0, unless `env` says otherwise), so
 * processes of parallel test files never contend for one; it logs the port (`metrics listening`).
 * A worker runs the suite's workflow bundle (the build's), as `npm run worker` runs it, unless
 * `env` sets ARMADA_WORKFLOW_BUNDLE ('' bundles at start).
 * It runs as the operator chart's ServiceAccount for it (see runAs).
 */
export function startProcess(script: string, env: NodeJS.ProcessEnv): ProductProcess {
  const bundle = process.env.ARMADA_TEST_WORKFLOW_BUNDLE;
  return spawnCaptured(process.execPath, [script], {
    ARMADA_METRICS_PORT: '0',
    ...(bundle && { ARMADA_WORKFLOW_BUNDLE: bundle }),
    ...runAs(script, env),
    ...env,
  });
}

/**
 * The worker's or the bridge's ServiceAccount as the process's ARMADA_KUBECONFIG, from the
 * kubeconfigs the global setup wrote (global-setup.ts installRbac); for a bridge, the chart's
 * Lease ClusterRole is first bound in the namespace of its Lease (ARMADA_LEASE_NAMESPACE), which
 * in tests is the test's own namespace and not the chart's release namespace. Nothing when the
 * setup installed no RBAC (no cluster; the benchmarks), or when the caller names the process's
 * ARMADA_KUBECONFIG itself (a drill's own cluster).
 */
function runAs(script: string, env: NodeJS.ProcessEnv): NodeJS.ProcessEnv {
  const component = path.basename(path.dirname(script)); // dist/bridge/main.js: bridge
  const kubeconfig = process.env[`ARMADA_TEST_${component.toUpperCase()}_KUBECONFIG`];
  if (!kubeconfig || env.ARMADA_KUBECONFIG) return {};
  if (component === 'bridge') grantLease(env.ARMADA_LEASE_NAMESPACE ?? 'default');
  return { ARMADA_KUBECONFIG: kubeconfig };
}

/**
 * A RoleBinding of the chart's Lease ClusterRole to the bridge's ServiceAccount in `namespace`
 * (kubectl apply with the admin KUBECONFIG: idempotent, so several bridges may ask). Synchronous,
 * so the bridge never starts before it may take its Lease.
 */
function grantLease(namespace: string): void {
  const [saNamespace, saName] = (process.env.ARMADA_TEST_BRIDGE_SERVICEACCOUNT ?? '').split(':');
  const role = process.env.ARMADA_TEST_BRIDGE_LEASE_ROLE;
  if (!saNamespace || !saName || !role) throw new Error('the global setup exported no bridge ServiceAccount');
  const binding = {
    apiVersion: 'rbac.authorization.k8s.io/v1',
    kind: 'RoleBinding',
    metadata: { name: role, namespace },
    roleRef: { apiGroup: 'rbac.authorization.k8s.io', kind: 'ClusterRole', name: role },
    subjects: [{ kind: 'ServiceAccount', name: saName, namespace: saNamespace }],
  };
  kubectlApply(binding);
}

/** `kubectl apply` of one object, synchronously, with the admin KUBECONFIG unless `kubeconfig`. */
function kubectlApply(object: object, kubeconfig?: string): void {
  execFileSync(
    toolPath('kubectl'),
    [...(kubeconfig ? ['--kubeconfig', kubeconfig] : []), 'apply', '-f', '-'],
    {
      cwd: repo,
      input: JSON.stringify(object),
      stdio: ['pipe', 'ignore', 'pipe'],
    },
  );
}

/**
 * An ArmadaPolicy `test-<namespace>` that lets the objects of `namespace` deploy into any
 * namespace: for the tests (and benchmarks) that keep their custom resources apart from the
 * namespaces their releases go into, as every test did before namespace boundaries. The
 * hostile-tenant drill writes narrower ones. On `kubeconfig`'s cluster, else the suite's.
 * Synchronous, as grantLease.
 */
export function grantAnyNamespace(namespace: string, kubeconfig?: string): void {
  const policy = {
    apiVersion: 'armada.airshipit.org/v1alpha1',
    kind: 'ArmadaPolicy',
    metadata: { name: `test-${namespace}` },
    spec: { namespaces: [namespace], target_namespaces: ['*'] },
  };
  kubectlApply(policy, kubeconfig);
}

/** What the worker process prints (a JSON log line) once it polls its task queue. */
export const WORKER_POLLING = '"message":"polling"';

/**
 * The worker process on `taskQueue` of the suite's dev server, logging at debug (so a test can
 * search all it says for what it must never print), with `env` added; once it polls.
 */
export async function startDebugWorker(
  taskQueue: string,
  env: NodeJS.ProcessEnv = {},
): Promise<ProductProcess> {
  const worker = startProcess('dist/worker/main.js', {
    TEMPORAL_ADDRESS: process.env.TEMPORAL_ADDRESS,
    ARMADA_TASK_QUEUE: taskQueue,
    ARMADA_LOG_LEVEL: 'debug',
    ...env,
  });
  await worker.printed(WORKER_POLLING);
  return worker;
}

/**
 * The bridge process, watching `namespace` alone (unless `env` says otherwise) and holding its
 * leader Lease there. The objects it watches may deploy into any namespace (grantAnyNamespace)
 * unless `ownNamespaceOnly`.
 */
export function startBridge(
  namespace: string,
  env: NodeJS.ProcessEnv,
  { ownNamespaceOnly = false } = {},
): ProductProcess {
  // On the cluster the bridge talks to: a drill's own sandbox, else the suite's.
  if (!ownNamespaceOnly)
    for (const watched of (env.ARMADA_NAMESPACES ?? namespace).split(','))
      grantAnyNamespace(watched, env.ARMADA_KUBECONFIG);
  return startProcess('dist/bridge/main.js', {
    ARMADA_NAMESPACES: namespace,
    ARMADA_LEASE_NAMESPACE: namespace,
    ...env,
  });
}

/**
 * Polls `check` until it returns a value (what the cluster, Temporal or a process says, never a
 * sleep standing in for it); a check that throws counts as not yet. The pause between checks
 * starts at 250 ms and grows to 1 s: many checks start a kubectl or helm process, and a long wait
 * polled at a fixed 250 ms kept a core busy beside the test it waited on (`pauseMs` fixes the
 * pause instead, for a state that lasts only a moment and is cheap to check). On timeout the
 * error shows the last lines `process` printed; when `process` exits first, the wait ends there
 * and the error shows its first lines too (where a crash says why).
 */
export async function eventually<T>(
  what: string,
  check: () => Promise<T | undefined>,
  opts: { process?: Pick<ProductProcess, 'child' | 'output'>; timeoutMs?: number; pauseMs?: number } = {},
): Promise<T> {
  const deadline = Date.now() + (opts.timeoutMs ?? 120_000);
  const child = opts.process?.child;
  let pause = opts.pauseMs ?? 250;
  for (;;) {
    // Read before the check, so a check that passed just before the process ended still counts.
    const exited = child && (child.exitCode !== null || child.signalCode !== null);
    const value = await check().catch(() => undefined);
    if (value !== undefined) return value;
    const lines = (opts.process?.output() ?? '').split('\n');
    if (exited) {
      const shown = lines.length > 40 ? [...lines.slice(0, 20), '…', ...lines.slice(-20)] : lines;
      throw new Error(
        `${what}: the process exited (${child.exitCode ?? child.signalCode}) first; it printed:\n${shown.join('\n')}`,
      );
    }
    if (Date.now() > deadline)
      throw new Error(
        `timed out waiting for ${what}; the process's last lines:\n${lines.slice(-30).join('\n')}`,
      );
    await new Promise((resolve) => setTimeout(resolve, pause));
    if (opts.pauseMs === undefined) pause = Math.min(pause * 1.25, 1000);
  }
}
