import { Client, Connection } from '@temporalio/client';
import { execFile } from 'node:child_process';
import { mkdtemp, rm, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import path from 'node:path';
import { promisify } from 'node:util';
import { armadaChartSpec } from '../../api/chart';
import { toolPath } from '../../activities/tools';
import { bundleWorkflows } from '../../worker/bundle';
import { chartRun, startRun } from '../../runs/requests';
import { canaryProgressQuery } from '../../workflows/messages';
import { canaryWorkflowId } from '../../core/plan/names';
import { uniqueName } from '../helpers/env';
import { summaryOf } from '../helpers/histories';
import { kubectl } from '../helpers/kube';
import { WORKER_POLLING, eventually, startProcess, type ProductProcess } from '../helpers/processes';
import { chartResult } from '../helpers/chart-runs';

/**
 * The worker upgrade drill, on the Temporal cluster on PostgreSQL (test/run.sh): a chart canary
 * holds on build N (today's workflow code); workers of build N+1 (canary.ts with one more timer
 * before each hold: a test build, next-build-loader.js) join, and N+1 becomes the Worker
 * Deployment's current version. The run in flight must finish on N, without a non-determinism
 * error; a run started afterwards must run N+1's code; N's worker stops once its run has drained.
 * Every workflow type is pinned (worker/worker.ts VERSIONING_BEHAVIOR).
 */

const TEMPORAL = process.env.ARMADA_TEST_CLUSTER_TEMPORAL;
const HOLD_SECONDS = 5;
const run = promisify(execFile);

describe('worker upgrade drill: build N+1 replaces build N while a canary holds (Worker Versioning, PostgreSQL cluster)', () => {
  const namespace = uniqueName('upgrade');
  const taskQueue = uniqueName('upgrade');
  const deployment = uniqueName('armada');
  let work: string;
  let connection: Connection;
  let client: Client;
  const workers: ProductProcess[] = [];

  /** A worker process of build `buildId`, running the workflow bundle `bundle`. */
  async function startWorker(buildId: string, bundle: string): Promise<ProductProcess> {
    const worker = startProcess('dist/worker/main.js', {
      TEMPORAL_ADDRESS: TEMPORAL,
      ARMADA_TASK_QUEUE: taskQueue,
      ARMADA_WORKER_DEPLOYMENT: deployment,
      ARMADA_BUILD_ID: buildId,
      ARMADA_WORKFLOW_BUNDLE: bundle,
    });
    workers.push(worker);
    await worker.printed(WORKER_POLLING);
    return worker;
  }

  /** What the README tells operators to run: new runs go to `buildId` from now on. */
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

  const spec = (chart: string, tag: string) =>
    armadaChartSpec.parse({
      release: chart,
      namespace,
      source: { type: 'local', location: 'examples/charts/hello' },
      values: { replicaCount: 2, image: { tag } },
      wait: { timeout: 120 },
      canary: { steps: [{ percent: 50, sleep: HOLD_SECONDS }, { percent: 100 }] },
    });
  const deploy = async (chart: string, tag: string) =>
    client.workflow.getHandle(
      await startRun(
        client,
        taskQueue,
        chartRun({ kind: 'ArmadaChart', name: chart, namespace, spec: spec(chart, tag) }),
      ),
    );
  /** The build a canary run is pinned to, and the summaries of its timers. */
  const canary = async (chart: string) => {
    const handle = client.workflow.getHandle(canaryWorkflowId(namespace, chart));
    const { raw } = await handle.describe();
    const events = (await handle.fetchHistory()).events ?? [];
    return {
      build: raw.workflowExecutionInfo?.versioningInfo?.deploymentVersion?.buildId,
      timers: events.filter((e) => e.timerStartedEventAttributes).map(summaryOf),
      failedTasks: events.filter((e) => e.workflowTaskFailedEventAttributes).length,
    };
  };

  beforeAll(async () => {
    if (!TEMPORAL) throw new Error('ARMADA_TEST_CLUSTER_TEMPORAL is not set: run the suite with `npm test`');
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

  it('the run in flight finishes on build N; new runs run build N+1; N stops once drained', async () => {
    const code = await bundleWorkflows((config) => {
      config.module?.rules?.push({
        test: /workflows[\\/]canary\.ts$/,
        enforce: 'pre',
        use: [{ loader: require.resolve('../helpers/next-build-loader.js') }],
      });
      return config;
    });
    const nextBundle = path.join(work, 'workflows-n1.js');
    await writeFile(nextBundle, code);

    const buildN = await startWorker('n', process.env.ARMADA_TEST_WORKFLOW_BUNDLE!);
    await makeCurrent('n');
    expect(await chartResult(await deploy('old', '1.0.0'))).toMatchObject({
      action: 'installed',
      revision: 1,
    });
    const inFlight = await deploy('old', '2.0.0');
    await eventually('the canary of build N holding', async () => {
      const progress = await client.workflow
        .getHandle(canaryWorkflowId(namespace, 'old'))
        .query(canaryProgressQuery);
      return progress.waitingOn === 'hold' || undefined;
    });

    await startWorker('n1', nextBundle);
    await makeCurrent('n1');
    expect(await chartResult(await deploy('new', '1.0.0'))).toMatchObject({
      action: 'installed',
      revision: 1,
    });
    const started = await deploy('new', '2.0.0');

    expect(await chartResult(inFlight)).toMatchObject({ action: 'upgraded', before: 1, revision: 2 });
    const old = await canary('old');
    expect(old).toEqual({ build: 'n', timers: [expect.stringMatching(/ — hold /)], failedTasks: 0 });
    // Drained: build N has nothing left to run, and the new run does not need it.
    await buildN.stop();

    expect(await chartResult(started)).toMatchObject({ action: 'upgraded', before: 1, revision: 2 });
    const next = await canary('new');
    expect(next).toEqual({
      build: 'n1',
      timers: ['build N+1', expect.stringMatching(/ — hold /)],
      failedTasks: 0,
    });
  }, 300_000);
});
