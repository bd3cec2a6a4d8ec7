import { Client, Connection } from '@temporalio/client';
import { execFile } from 'node:child_process';
import { mkdtemp, rm, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import path from 'node:path';
import { promisify } from 'node:util';
import { armadaChartSpec } from '../../api/chart';
import { toolPath } from '../../activities/tools';
import { chartRun, startRun } from '../../runs/requests';
import { canaryProgressQuery } from '../../workflows/messages';
import { canaryWorkflowId, objectWorkflowId } from '../../core/plan/names';
import { uniqueName } from '../helpers/env';
import { summaryOf } from '../helpers/histories';
import { kubectl } from '../helpers/kube';
import { WORKER_POLLING, eventually, startProcess, type ProductProcess } from '../helpers/processes';
import { chartResult } from '../helpers/chart-runs';

/**
 * The worker upgrade drill, on the Temporal cluster on PostgreSQL (test/run.sh): a chart canary
 * holds on build N, the tree design as it was before the one-workflow redesign (0171bf6, built by
 * deploy/build-at-ref.sh: `chartWorkflow` under `helm:<ns>/<release>` with its canary child),
 * started by that build's own armadactl; this build's workers (N+1: `deployRun`) join, and N+1
 * becomes the Worker Deployment's current version while the canary holds. The run in flight must
 * finish on N, without a non-determinism error; runs started afterwards, the same chart's next
 * one included, run N+1's design; N's worker stops once its run has drained. Every workflow type
 * is pinned (worker/worker.ts VERSIONING_BEHAVIOR).
 */

const TEMPORAL = process.env.ARMADA_TEST_CLUSTER_TEMPORAL;
const TREE_BUILD = process.env.ARMADA_TEST_TREE_BUILD;
/** The hold of the run in flight: long beside what N+1's start takes, so it still holds when N+1 becomes current. */
const HOLD_SECONDS = 30;
const run = promisify(execFile);

describe('worker upgrade drill: the one-workflow build replaces the tree design while a canary holds (Worker Versioning, PostgreSQL cluster)', () => {
  const namespace = uniqueName('upgrade');
  const taskQueue = uniqueName('upgrade');
  const deployment = uniqueName('armada');
  let work: string;
  let connection: Connection;
  let client: Client;
  const workers: ProductProcess[] = [];

  /** A worker process of build `buildId`: `root`'s worker and workflow bundle. */
  async function startWorker(buildId: string, root: string): Promise<ProductProcess> {
    const worker = startProcess(path.join(root, 'dist/worker/main.js'), {
      TEMPORAL_ADDRESS: TEMPORAL,
      ARMADA_TASK_QUEUE: taskQueue,
      ARMADA_WORKER_DEPLOYMENT: deployment,
      ARMADA_BUILD_ID: buildId,
      ARMADA_WORKFLOW_BUNDLE: path.join(root, 'dist/workflow-bundle.js'),
    });
    workers.push(worker);
    await worker.printed(WORKER_POLLING);
    return worker;
  }

  /** What docs/how-to/scale-and-upgrade.md tells operators to run: new runs go to `buildId` from now on. */
  const makeCurrent = (buildId: string) =>
    eventually(`build ${buildId} current`, async () => {
      // A version exists once its first poll has reached the server.
      await run(toolPath('temporal'), [
        'worker',
        'deployment',
        'set-current-version',
        '--address',
        TEMPORAL!,
        '--deployment-name',
        deployment,
        '--build-id',
        buildId,
        '--yes',
      ]);
      return true;
    });

  const spec = (chart: string, tag: string, holdSeconds = 1) => ({
    release: chart,
    namespace,
    source: { type: 'local', location: 'examples/charts/hello' },
    values: { replicaCount: 2, image: { tag } },
    wait: { timeout: 120 },
    canary: { steps: [{ percent: 50, sleep: holdSeconds }, { percent: 100 }] },
  });
  /** A chart deployed by this build, as its armadactl and bridge start it (`deployRun`). */
  const deploy = async (chart: string, tag: string) =>
    client.workflow.getHandle(
      await startRun(
        client,
        taskQueue,
        chartRun({
          kind: 'ArmadaChart',
          name: chart,
          namespace,
          spec: armadaChartSpec.parse(spec(chart, tag)),
        }),
      ),
    );
  /**
   * A chart deployed by build N's armadactl (`apply -f`), to its end (`--wait`), or left in flight
   * with a canary holding `holdSeconds`; resolves to its run's workflow ID.
   */
  const deployOnTree = async (chart: string, tag: string, holdSeconds?: number): Promise<string> => {
    const file = path.join(work, `${chart}-${tag}.json`);
    const doc = { apiVersion: 'armada.airshipit.org/v1alpha1', kind: 'ArmadaChart' };
    await writeFile(
      file,
      JSON.stringify({ ...doc, metadata: { name: chart, namespace }, spec: spec(chart, tag, holdSeconds) }),
    );
    const { stdout } = await run(
      process.execPath,
      [path.join(TREE_BUILD!, 'bin/armadactl.js'), 'apply', '-f', file, ...(holdSeconds ? [] : ['--wait'])],
      { env: { ...process.env, TEMPORAL_ADDRESS: TEMPORAL, ARMADA_TASK_QUEUE: taskQueue } },
    ).catch((err: { message: string; stdout?: string }) => {
      throw new Error(`${err.message}${err.stdout ?? ''}`);
    });
    return /^started (\S+)$/m.exec(stdout)![1];
  };
  /** A run's type and the build it is pinned to. */
  const pinned = async (workflowId: string) => {
    const { type, raw } = await client.workflow.getHandle(workflowId).describe();
    return { type, build: raw.workflowExecutionInfo?.versioningInfo?.deploymentVersion?.buildId };
  };
  /** The build a chart's latest canary run is pinned to, and the summaries of its timers. */
  const canary = async (chart: string) => {
    const handle = client.workflow.getHandle(canaryWorkflowId(namespace, chart));
    const events = (await handle.fetchHistory()).events ?? [];
    return {
      build: (await pinned(handle.workflowId)).build,
      timers: events.filter((e) => e.timerStartedEventAttributes).map(summaryOf),
      failedTasks: events.filter((e) => e.workflowTaskFailedEventAttributes).length,
    };
  };
  const canaryHolds = async (chart: string) =>
    (await client.workflow.getHandle(canaryWorkflowId(namespace, chart)).query(canaryProgressQuery))
      .waitingOn === 'hold';

  beforeAll(async () => {
    if (!TEMPORAL) throw new Error('ARMADA_TEST_CLUSTER_TEMPORAL is not set: run the suite with `npm test`');
    if (!TREE_BUILD) throw new Error('ARMADA_TEST_TREE_BUILD is not set: run the suite with `npm test`');
    work = await mkdtemp(path.join(tmpdir(), 'armada-upgrade-'));
    await kubectl('create', 'namespace', namespace);
    connection = await Connection.connect({ address: TEMPORAL });
    client = new Client({ connection });
  });
  afterAll(async () => {
    await Promise.all(workers.map((w) => w.stop()));
    await connection?.close();
    await kubectl('delete', 'namespace', namespace, '--wait=false').catch(() => '');
    if (work) await rm(work, { recursive: true, force: true });
  });

  it("the tree design's run in flight finishes on build N; new runs, the same chart's next one too, run deployRun on N+1; N stops once drained", async () => {
    const buildN = await startWorker('n', TREE_BUILD!);
    await makeCurrent('n');
    const installed = await deployOnTree('old', '1.0.0');
    expect(installed).toBe(`helm:${namespace}/old`);
    const inFlight = await deployOnTree('old', '2.0.0', HOLD_SECONDS);
    await eventually('the canary of build N holding', async () => (await canaryHolds('old')) || undefined);

    await startWorker('n1', path.resolve(__dirname, '../..'));
    await makeCurrent('n1');
    expect(await canaryHolds('old')).toBe(true);
    expect(await chartResult(await deploy('new', '1.0.0'))).toMatchObject({
      action: 'installed',
      revision: 1,
    });
    const started = await deploy('new', '2.0.0');

    expect(await client.workflow.getHandle(inFlight).result()).toMatchObject({
      action: 'upgraded',
      before: 1,
      revision: 2,
    });
    expect(await pinned(inFlight)).toEqual({ type: 'chartWorkflow', build: 'n' });
    expect(await canary('old')).toEqual({
      build: 'n',
      timers: [expect.stringMatching(/ — hold /)],
      failedTasks: 0,
    });
    // Drained: build N has nothing left to run, and the new runs do not need it.
    await buildN.stop();

    expect(await chartResult(started)).toMatchObject({ action: 'upgraded', before: 1, revision: 2 });
    expect(await pinned(started.workflowId)).toEqual({ type: 'deployRun', build: 'n1' });
    expect(started.workflowId).toBe(objectWorkflowId('ArmadaChart', namespace, 'new'));
    expect(await canary('new')).toEqual({
      build: 'n1',
      timers: [expect.stringMatching(/ — hold /)],
      failedTasks: 0,
    });

    // The chart the tree design deployed moves to deployRun: its next run upgrades its release.
    const next = await deploy('old', '3.0.0');
    expect(await chartResult(next)).toMatchObject({ action: 'upgraded', before: 2, revision: 3 });
    expect(await pinned(next.workflowId)).toEqual({ type: 'deployRun', build: 'n1' });
    expect(await canary('old')).toMatchObject({ build: 'n1', failedTasks: 0 });
  }, 400_000);
});
