import { Client, Connection, WorkflowFailedError, type WorkflowHandle } from '@temporalio/client';
import { randomUUID } from 'node:crypto';
import { armadaChartSpec } from '../../api/chart';
import { chartResult, startChart } from '../helpers/chart-runs';
import type { ChartRun } from '../../core/contracts/workflows';
import { metricValue, parsePrometheus } from '../../bench/prometheus';
import { uniqueName } from '../helpers/env';
import { kubectl } from '../helpers/kube';
import { metricsBase } from '../helpers/metrics';
import { eventually, startProcess, type ProductProcess } from '../helpers/processes';

/** The JSON lines a process printed, each parsed; a line that is not JSON fails the test. */
function logLines(worker: ProductProcess): Record<string, unknown>[] {
  return worker
    .output()
    .split('\n')
    .filter((line) => line.trim())
    .map((line) => {
      try {
        return JSON.parse(line) as Record<string, unknown>;
      } catch {
        throw new Error(`not a JSON log line: ${line}`);
      }
    });
}

describe('the worker process (dist/worker/main.js): health, metrics, JSON logs, graceful shutdown', () => {
  const taskQueue = `test-${randomUUID()}`;
  const namespace = uniqueName('wproc');
  /** Chart values never to be logged (values may carry secrets). */
  const secret = `s3cret-${randomUUID()}`;
  // Within the grace the test polls /readyz, reads /metrics and sends two more signals, waiting
  // for the first to be logged: 3 s was not always enough for that on a loaded machine.
  const GRACE_SECONDS = 10;
  let worker: ProductProcess;
  let base = '';
  let connection: Connection;
  let client: Client;
  const started: WorkflowHandle[] = [];

  const run = (release: string, values: Record<string, unknown>): ChartRun => ({
    chart: release,
    release,
    namespace,
    spec: armadaChartSpec.parse({
      release,
      namespace,
      source: { type: 'local', location: 'examples/charts/hello' },
      values: { ...values, note: secret },
      wait: { timeout: 120, labels: { 'app.kubernetes.io/instance': release } },
    }),
  });
  const get = async (path: string) => {
    const response = await fetch(`${base}${path}`);
    return { status: response.status, text: await response.text() };
  };

  beforeAll(async () => {
    worker = startProcess('dist/worker/main.js', {
      ARMADA_WORKFLOW_BUNDLE: '', // bundles the workflows at start, as without npm run worker
      ARMADA_TASK_QUEUE: taskQueue,
      ARMADA_LOG_LEVEL: 'info',
      ARMADA_SHUTDOWN_GRACE_SECONDS: String(GRACE_SECONDS),
    });
    base = await metricsBase(worker);
    connection = await Connection.connect({ address: process.env.TEMPORAL_ADDRESS });
    client = new Client({ connection });
  });
  afterAll(async () => {
    await worker?.stop('SIGKILL');
    for (const handle of started) await handle.terminate('test over').catch(() => undefined);
    await connection?.close();
    await kubectl('delete', 'namespace', namespace, '--wait=false', '--ignore-not-found').catch(() => '');
  });

  it('answers /healthz at once and /readyz with 200 once the worker is running', async () => {
    expect(await get('/healthz')).toEqual({ status: 200, text: 'ok\n' });
    await eventually(
      '/readyz to answer 200',
      async () => ((await get('/readyz')).status === 200 ? true : undefined),
      {
        process: worker,
      },
    );
  });

  it("serves the project's activity metrics and the SDK's own after a workflow ran its activities", async () => {
    const release = uniqueName('hello');
    const handle = await startChart({ client, taskQueue }, run(release, { replicaCount: 1 }));
    started.push(handle);
    expect(await chartResult(handle)).toMatchObject({ release, action: 'installed' });

    const text = await eventually(
      'the SDK metrics of the activities',
      async () => {
        const { text } = await get('/metrics');
        return metricValue(parsePrometheus(text), 'temporal_activity_execution_latency_count')
          ? text
          : undefined;
      },
      { process: worker },
    );
    const upgrade = { activity_type: 'helmUpgradeInstall' };
    expect(
      metricValue(parsePrometheus(text), 'armada_worker_activity_attempts_total', upgrade),
    ).toBeGreaterThanOrEqual(1);
    expect(metricValue(parsePrometheus(text), 'armada_worker_activity_failures_total', upgrade)).toBe(0);
    expect(
      metricValue(parsePrometheus(text), 'armada_worker_activity_duration_seconds_count', {
        ...upgrade,
        outcome: 'completed',
      }),
    ).toBeGreaterThanOrEqual(1);
    expect(metricValue(parsePrometheus(text), 'armada_worker_activities_running')).toBe(0);
    expect(
      metricValue(parsePrometheus(text), 'temporal_activity_task_received', upgrade),
    ).toBeGreaterThanOrEqual(1);
    expect(
      metricValue(parsePrometheus(text), 'temporal_worker_task_slots_available', { task_queue: taskQueue }),
    ).toBeGreaterThan(0);
    expect(
      metricValue(parsePrometheus(text), 'temporal_workflow_completed', { workflow_type: 'deployRun' }),
    ).toBe(1);
    expect(metricValue(parsePrometheus(text), 'process_resident_memory_bytes')).toBeGreaterThan(0);
  });

  it('logs JSON lines only, none below ARMADA_LOG_LEVEL (info), and never the chart values', async () => {
    const lines = logLines(worker);
    for (const line of lines) {
      expect(line).toMatchObject({
        time: expect.any(String),
        component: 'worker',
        message: expect.any(String),
      });
      expect(['info', 'warn', 'error']).toContain(line.level);
    }
    expect(lines).toContainEqual(
      expect.objectContaining({
        level: 'info',
        message: 'Worker state changed',
        state: 'RUNNING',
        taskQueue,
      }),
    );
    // Without ARMADA_WORKER_DEPLOYMENT: one line says what upgrading workflow code needs.
    expect(lines.filter((l) => String(l.message).startsWith('unversioned worker'))).toEqual([
      expect.objectContaining({
        level: 'warn',
        message: expect.stringContaining('docs/how-to/scale-and-upgrade.md#worker-upgrades'),
      }),
    ]);
    expect(worker.output()).not.toContain(secret);
  });

  it('logs debug entries, with the SDK metadata and without arguments, at ARMADA_LOG_LEVEL=debug', async () => {
    const debugQueue = `test-${randomUUID()}`;
    const verbose = startProcess('dist/worker/main.js', {
      ARMADA_TASK_QUEUE: debugQueue,
      ARMADA_LOG_LEVEL: 'debug',
    });
    try {
      await metricsBase(verbose);
      const release = uniqueName('hello');
      const handle = await startChart({ client, taskQueue: debugQueue }, run(release, { replicaCount: 1 }));
      started.push(handle);
      await handle.result();
      await verbose.printed('"Activity completed"');
    } finally {
      await verbose.stop();
    }
    const lines = logLines(verbose);
    expect(lines).toContainEqual(
      expect.objectContaining({
        level: 'debug',
        message: 'Activity completed',
        activityType: 'helmUpgradeInstall',
        workflowId: expect.any(String),
      }),
    );
    expect(lines.some((line) => 'taskToken' in line)).toBe(false);
    expect(verbose.output()).not.toContain(secret);
  });

  it('on SIGTERM turns /readyz to 503, cancels a running activity after the grace time, and exits 0; a later SIGINT and SIGTERM are only logged', async () => {
    // Pods that can never be scheduled: the release's wait runs until its 120 s timeout.
    const release = uniqueName('stuck');
    const handle = await startChart(
      { client, taskQueue },
      run(release, { replicaCount: 1, nodeSelector: { nowhere: 'true' } }),
    );
    started.push(handle);
    const running = async () =>
      metricValue(parsePrometheus((await get('/metrics')).text), 'armada_worker_activities_running');
    // An attempt that has been running for 2 s is the one stuck waiting for the pods.
    const stuck = await eventually(
      'an activity to be stuck',
      async () => {
        const { raw } = await handle.describe();
        const startedAt = (a: { lastStartedTime?: { seconds?: unknown } | null }) =>
          Number(a.lastStartedTime?.seconds ?? Infinity) * 1000;
        return raw.pendingActivities?.find((a) => Date.now() - startedAt(a) > 2_000);
      },
      { process: worker },
    );
    expect(await running()).toBe(1);

    const signalled = Date.now();
    const exited = new Promise<number | null>((resolve) =>
      worker.child.once('exit', (code) => resolve(code)),
    );
    worker.child.kill('SIGTERM');
    const readiness = await eventually(
      '/readyz to answer 503',
      async () => {
        const { status } = await get('/readyz');
        return status === 503 ? status : undefined;
      },
      { process: worker, timeoutMs: GRACE_SECONDS * 1000 },
    );
    expect(readiness).toBe(503);
    expect(await running()).toBeGreaterThanOrEqual(1); // still draining: the grace time is not up
    // Ctrl-C on npm start adds SIGINT (and the start script SIGTERM): logged, nothing more.
    worker.child.kill('SIGINT');
    await worker.printed('"signal":"SIGINT"');
    worker.child.kill('SIGTERM');

    expect(await exited).toBe(0);
    const seconds = (Date.now() - signalled) / 1000;
    expect(seconds).toBeGreaterThanOrEqual(GRACE_SECONDS);
    expect(seconds).toBeLessThan(GRACE_SECONDS + 10);
    expect(logLines(worker)).toContainEqual(
      expect.objectContaining({ message: 'shutting down', signal: 'SIGTERM', graceSeconds: GRACE_SECONDS }),
    );
    // Every line is JSON (logLines throws on a stack trace); the later signals were only logged.
    expect(
      logLines(worker)
        .filter((line) => line.message === 'still shutting down')
        .map((line) => line.signal),
    ).toEqual(['SIGINT', 'SIGTERM']);

    // The cancelled attempt failed (not timed out later): Temporal has scheduled the next one.
    const pending = await eventually('the activity to be retried', async () => {
      const { raw } = await handle.describe();
      const activity = raw.pendingActivities?.find((a) => a.activityId === stuck.activityId);
      return activity && Number(activity.attempt) > Number(stuck.attempt) ? activity : undefined;
    });
    expect(pending.lastFailure?.message).toBeTruthy();
    await expect(handle.terminate('test over')).resolves.toBeDefined();
    await expect(handle.result()).rejects.toBeInstanceOf(WorkflowFailedError);
  });
});
