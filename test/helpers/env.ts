import { KubeConfig } from '@kubernetes/client-node';
import { Client, Connection } from '@temporalio/client';
import { DefaultLogger, NativeConnection, Runtime, type Worker } from '@temporalio/worker';
import { randomUUID } from 'node:crypto';
import { execFile } from 'node:child_process';
import { promisify } from 'node:util';
import { helmHistorySchema, type HelmHistory } from '../../activities/helm/release';
import { toolPath } from '../../activities/tools';
import { createWorker, type ArmadaWorkerOptions } from '../../worker/worker';

/** What test/run.sh and global-setup.ts hand every test file. */
function required(name: string): string {
  const value = process.env[name];
  if (!value) throw new Error(`${name} is not set: run the suite with \`npm test\``);
  return value;
}

/**
 * The sandbox's admin kubeconfig (KUBECONFIG), for the tests' own setup and checks. Never
 * ARMADA_KUBECONFIG: that is the product's, a ServiceAccount's (global-setup.ts installRbac).
 */
export function kubeConfig(): KubeConfig {
  const kc = new KubeConfig();
  kc.loadFromFile(required('KUBECONFIG'));
  return kc;
}

let runtimeInstalled = false;

/** The SDK logs every worker state change at INFO; tests show warnings and errors only. */
export function quietRuntime(): void {
  if (runtimeInstalled) return;
  Runtime.install({ logger: new DefaultLogger('WARN') });
  runtimeInstalled = true;
}

/** A client and a worker on a fresh task queue of the shared dev server; close() shuts both down. */
export async function temporalHarness(opts: Pick<ArmadaWorkerOptions, 'activities'> = {}) {
  const address = required('TEMPORAL_ADDRESS');
  quietRuntime();
  const taskQueue = `test-${randomUUID()}`;
  const connection = await Connection.connect({ address });
  const nativeConnection = await NativeConnection.connect({ address });
  const worker: Worker = await createWorker({
    connection: nativeConnection,
    taskQueue,
    workflowBundle: { codePath: required('ARMADA_TEST_WORKFLOW_BUNDLE') },
    ...opts,
  });
  return {
    client: new Client({ connection }),
    taskQueue,
    worker,
    async close() {
      await connection.close();
      await nativeConnection.close();
    },
  };
}

/** The real helm CLI, as a user would run it; for checking what a workflow did. */
export async function helm(...args: string[]): Promise<string> {
  const { stdout } = await promisify(execFile)(toolPath('helm'), args);
  return stdout;
}

/** `helm history` of a release, oldest revision first, as helm records it. */
export async function helmHistory(release: string, namespace: string): Promise<HelmHistory> {
  return helmHistorySchema.parse(JSON.parse(await helm('history', release, '-n', namespace, '-o', 'json')));
}

/** The revision numbers in a release's `helm history`, oldest first. */
export async function releaseRevisions(release: string, namespace: string): Promise<number[]> {
  return (await helmHistory(release, namespace)).map((r) => r.revision);
}

/** PIDs of helm processes running `helm <verb> ... <release>` (on this machine: the worker's children). */
export async function helmProcesses(verb: string, release: string): Promise<number[]> {
  const { stdout } = await promisify(execFile)('pgrep', ['-f', `helm ${verb} .*${release} `]).catch(() => ({
    stdout: '',
  }));
  return stdout.split('\n').filter(Boolean).map(Number);
}

/** A DNS-1123 name unique to this test run, so tests never collide on the shared cluster. */
export function uniqueName(prefix: string): string {
  return `${prefix}-${randomUUID().slice(0, 8)}`;
}

export type Harness = Awaited<ReturnType<typeof temporalHarness>>;

/**
 * A worker on its own task queue that runs for the whole test file (or describe block):
 * started in beforeAll, shut down in afterAll. Returns a getter for use inside tests.
 */
export function sharedWorker(opts: Pick<ArmadaWorkerOptions, 'activities'> = {}): () => Harness {
  let harness: Harness | undefined;
  let running: Promise<void> | undefined;
  beforeAll(async () => {
    harness = await temporalHarness(opts);
    running = harness.worker.run();
  });
  afterAll(async () => {
    harness?.worker.shutdown();
    await running;
    await harness?.close();
  });
  return () => {
    if (!harness)
      throw new Error('the shared worker is not started yet (use it inside tests or later hooks)');
    return harness;
  };
}
