import { CancelledFailure, type Metric } from '@temporalio/common';
import type { BufferedMetricUpdate, LogEntry } from '@temporalio/worker';
import type { Server } from 'node:http';
import { Gauge, Registry } from 'prom-client';
import { loadConfig } from '../../worker/config';
import { coreLogFilter, workerLogger, logLine } from '../../worker/logger';
import { SdkMetrics, WorkerMetrics, failureReason } from '../../worker/metrics';
import { serveMetrics } from '../../worker/process-metrics';

/** The value of the sample `name{labels}` in a registry's text exposition; undefined when absent. */
async function sample(registry: Registry, name: string, labels = ''): Promise<number | undefined> {
  const line = (await registry.metrics()).split('\n').find((l) => l.startsWith(`${name}${labels} `));
  return line === undefined ? undefined : Number(line.split(' ')[1]);
}

describe('worker configuration', () => {
  it('defaults to port 9465, level info and a 30 s shutdown grace time; empty values count as unset', () => {
    for (const env of [
      {},
      { ARMADA_METRICS_PORT: undefined, ARMADA_LOG_LEVEL: '', ARMADA_SHUTDOWN_GRACE_SECONDS: '' },
    ])
      expect(loadConfig(env)).toMatchObject({
        ARMADA_METRICS_PORT: 9465,
        ARMADA_LOG_LEVEL: 'info',
        ARMADA_SHUTDOWN_GRACE_SECONDS: 30,
      });
  });

  it('reads given values', () => {
    expect(
      loadConfig({ ARMADA_METRICS_PORT: '0', ARMADA_LOG_LEVEL: 'debug', ARMADA_SHUTDOWN_GRACE_SECONDS: '0' }),
    ).toMatchObject({ ARMADA_METRICS_PORT: 0, ARMADA_LOG_LEVEL: 'debug', ARMADA_SHUTDOWN_GRACE_SECONDS: 0 });
  });

  it('refuses bad values with one line each, naming the variable', () => {
    expect(() =>
      loadConfig({
        ARMADA_METRICS_PORT: 'http',
        ARMADA_LOG_LEVEL: 'verbose',
        ARMADA_SHUTDOWN_GRACE_SECONDS: '2.5',
      }),
    ).toThrow(
      new Error(
        [
          'invalid configuration:',
          'ARMADA_METRICS_PORT: ARMADA_METRICS_PORT must be a port number (0: any free port)',
          'ARMADA_LOG_LEVEL: must be one of error, warn, info, debug, not "verbose"',
          'ARMADA_SHUTDOWN_GRACE_SECONDS: must be a whole number of seconds, 0 or more',
        ].join('\n'),
      ),
    );
    expect(() => loadConfig({ ARMADA_SHUTDOWN_GRACE_SECONDS: '-1' })).toThrow(
      /^invalid configuration:\nARMADA_SHUTDOWN_GRACE_SECONDS: must be a whole number/,
    );
  });
});

describe('worker versioning configuration', () => {
  it('takes a Worker Deployment with a build ID, and a workflow bundle built ahead', () => {
    expect(
      loadConfig({
        ARMADA_WORKER_DEPLOYMENT: 'armada',
        ARMADA_BUILD_ID: '0.2.0',
        ARMADA_WORKFLOW_BUNDLE: '/app/workflows.js',
      }),
    ).toMatchObject({
      ARMADA_WORKER_DEPLOYMENT: 'armada',
      ARMADA_BUILD_ID: '0.2.0',
      ARMADA_WORKFLOW_BUNDLE: '/app/workflows.js',
    });
    expect(loadConfig({ ARMADA_WORKER_DEPLOYMENT: '', ARMADA_BUILD_ID: '' })).toMatchObject({
      ARMADA_WORKER_DEPLOYMENT: undefined,
      ARMADA_BUILD_ID: undefined,
    });
  });

  it('refuses one of the two without the other, naming the missing one', () => {
    expect(() => loadConfig({ ARMADA_WORKER_DEPLOYMENT: 'armada' })).toThrow(
      'invalid configuration:\nARMADA_BUILD_ID: ARMADA_WORKER_DEPLOYMENT and ARMADA_BUILD_ID are set together',
    );
    expect(() => loadConfig({ ARMADA_BUILD_ID: '0.2.0' })).toThrow(
      /^invalid configuration:\nARMADA_WORKER_DEPLOYMENT: /,
    );
  });
});

describe('logLine', () => {
  const timestampNanos = BigInt(Date.UTC(2025, 0, 2, 3, 4, 5, 678)) * 1_000_000n;

  it('writes time, lower-case level, component and message first, then the metadata', () => {
    const line = logLine({
      level: 'INFO',
      message: 'Activity completed',
      meta: { activityType: 'helmUpgradeInstall', workflowId: 'release-ns-web', attempt: 2 },
      timestampNanos,
    });
    expect(line).toBe(
      '{"time":"2025-01-02T03:04:05.678Z","level":"info","component":"worker","message":"Activity completed",' +
        '"activityType":"helmUpgradeInstall","workflowId":"release-ns-web","attempt":2}',
    );
  });

  it('withholds arguments, results and the task token, keeps its own fields, and writes errors as their message', () => {
    const parsed = JSON.parse(
      logLine({
        level: 'ERROR',
        message: 'Activity failed',
        meta: {
          args: [{ values: { password: 'x' } }],
          input: 'x',
          result: 'x',
          taskToken: 'x',
          level: 'x',
          component: 'x',
          error: new Error('helm upgrade failed'),
        },
      }),
    );
    expect(parsed).toEqual({
      time: expect.any(String),
      level: 'error',
      component: 'worker',
      message: 'Activity failed',
      error: 'helm upgrade failed',
    });
  });
});

describe('workerLogger', () => {
  it.each([
    { level: 'error' as const, written: ['ERROR'] },
    { level: 'warn' as const, written: ['WARN', 'ERROR'] },
    { level: 'info' as const, written: ['INFO', 'WARN', 'ERROR'] },
    { level: 'debug' as const, written: ['DEBUG', 'INFO', 'WARN', 'ERROR'] },
  ])('at $level writes $written', ({ level, written }) => {
    const entries: LogEntry[] = [];
    const logger = workerLogger(level, (entry) => entries.push(entry));
    logger.trace('t');
    logger.debug('d');
    logger.info('i');
    logger.warn('w');
    logger.error('e');
    expect(entries.map((e) => e.level)).toEqual(written);
  });

  it("keeps the SDK core's debug chatter out even at debug", () => {
    expect(coreLogFilter('debug')).toEqual({ core: 'INFO', other: 'ERROR' });
    expect(coreLogFilter('warn')).toEqual({ core: 'WARN', other: 'ERROR' });
  });
});

describe('WorkerMetrics', () => {
  it('counts and times each activity attempt by type, a failed one also by reason, and passes results and errors on', async () => {
    const metrics = new WorkerMetrics(['helmUpgradeInstall', 'waitForResources']);
    const { registry } = metrics;
    const wait = '{activity_type="waitForResources"}';
    expect(await sample(registry, 'armada_worker_activity_attempts_total', wait)).toBe(0);

    await expect(metrics.activity('helmUpgradeInstall', async () => 'done')).resolves.toBe('done');
    await expect(
      metrics.activity('waitForResources', async () => {
        throw new CancelledFailure('worker shutting down');
      }),
    ).rejects.toThrow('worker shutting down');
    await expect(
      metrics.activity('waitForResources', async () => {
        throw new Error('pods not ready');
      }),
    ).rejects.toThrow('pods not ready');

    expect(await sample(registry, 'armada_worker_activity_attempts_total', wait)).toBe(2);
    expect(
      await sample(
        registry,
        'armada_worker_activity_failures_total',
        '{activity_type="waitForResources",reason="cancelled"}',
      ),
    ).toBe(1);
    expect(
      await sample(
        registry,
        'armada_worker_activity_failures_total',
        '{activity_type="waitForResources",reason="error"}',
      ),
    ).toBe(1);
    expect(
      await sample(
        registry,
        'armada_worker_activity_duration_seconds_count',
        '{activity_type="helmUpgradeInstall",outcome="completed"}',
      ),
    ).toBe(1);
    expect(await sample(registry, 'armada_worker_activities_running')).toBe(0);
    expect(await sample(registry, 'process_resident_memory_bytes')).toBeGreaterThan(0);
  });

  it('calls an abort a cancellation, anything else an error', () => {
    const abort = Object.assign(new Error('aborted'), { name: 'AbortError' });
    expect([abort, new CancelledFailure('x'), new Error('x'), 'x'].map(failureReason)).toEqual([
      'cancelled',
      'cancelled',
      'error',
      'error',
    ]);
  });
});

describe('SdkMetrics', () => {
  const metric = (name: string, kind: Metric['kind']): Metric => ({
    name,
    kind,
    valueType: 'int',
    unit: kind === 'histogram' ? 's' : '',
    description: '',
  });
  const update = (m: Metric, value: number, attributes: BufferedMetricUpdate['attributes']) =>
    ({ metric: m, value, attributes }) as BufferedMetricUpdate;

  it("adds a counter's deltas, sets a gauge, moves an up-down counter and observes a histogram, under the SDK's names", async () => {
    const registry = new Registry();
    const sdk = new SdkMetrics(registry);
    const tags = { namespace: 'default', task_queue: 'armada' };
    const requests = metric('temporal_request', 'counter');
    sdk.record(update(requests, 1, { service_name: 'temporal-core-sdk', operation: 'GetSystemInfo' }));
    sdk.record(update(requests, 2, { service_name: 'temporal-core-sdk', operation: 'GetSystemInfo' }));
    // The same metric with a tag more: a series of its own.
    sdk.record(update(requests, 1, { ...tags, operation: 'PollActivityTaskQueue' }));
    const slots = metric('temporal_worker_task_slots_available', 'gauge');
    sdk.record(update(slots, 100, { ...tags, worker_type: 'ActivityWorker' }));
    sdk.record(update(slots, 99, { ...tags, worker_type: 'ActivityWorker' }));
    const inFlight = metric('temporal_things_in_flight', 'up-down-counter');
    sdk.record(update(inFlight, 3, tags));
    sdk.record(update(inFlight, -1, tags));
    const latency = metric('temporal_activity_execution_latency', 'histogram');
    sdk.record(update(latency, 0.02, { ...tags, activity_type: 'helmObserve' }));
    sdk.record(update(latency, 3, { ...tags, activity_type: 'helmObserve' }));

    expect(
      await sample(
        registry,
        'temporal_request',
        '{service_name="temporal-core-sdk",operation="GetSystemInfo"}',
      ),
    ).toBe(3);
    expect(
      await sample(
        registry,
        'temporal_request',
        '{namespace="default",task_queue="armada",operation="PollActivityTaskQueue"}',
      ),
    ).toBe(1);
    expect(
      await sample(
        registry,
        'temporal_worker_task_slots_available',
        '{namespace="default",task_queue="armada",worker_type="ActivityWorker"}',
      ),
    ).toBe(99);
    expect(
      await sample(registry, 'temporal_things_in_flight', '{namespace="default",task_queue="armada"}'),
    ).toBe(2);
    const helmObserve = '{namespace="default",task_queue="armada",activity_type="helmObserve"}';
    expect(await sample(registry, 'temporal_activity_execution_latency_count', helmObserve)).toBe(2);
    expect(await sample(registry, 'temporal_activity_execution_latency_sum', helmObserve)).toBeCloseTo(3.02);
  });

  it('drops a tag first seen after the metric was made, and skips a metric whose name is taken', async () => {
    const registry = new Registry();
    const sdk = new SdkMetrics(registry);
    const custom = metric('temporal_custom', 'counter');
    sdk.record(update(custom, 1, { color: 'red' }));
    sdk.record(update(custom, 1, { color: 'red', shape: 'round' }));
    expect(await sample(registry, 'temporal_custom', '{color="red"}')).toBe(2);

    const taken = new Gauge({ name: 'temporal_taken', help: 'ours', registers: [registry] });
    taken.set(7);
    expect(() => sdk.record(update(metric('temporal_taken', 'counter'), 1, {}))).not.toThrow();
    expect(await sample(registry, 'temporal_taken')).toBe(7);
  });
});

describe('serveMetrics with a readiness probe', () => {
  let server: Server | undefined;
  afterEach(() => server?.close());

  it('answers /readyz 200 while the probe holds, else 503; /healthz stays 200', async () => {
    let ready = false;
    const served = await serveMetrics(new Registry(), 0, { ready: () => ready });
    server = served.server;
    const base = `http://127.0.0.1:${served.port}`;
    const status = async (path: string) => (await fetch(`${base}${path}`)).status;
    expect([await status('/readyz'), await status('/healthz')]).toEqual([503, 200]);
    ready = true;
    expect([await status('/readyz'), await status('/healthz')]).toEqual([200, 200]);
    ready = false;
    expect(await status('/readyz')).toBe(503);
  });

  it('has no /readyz without a probe (the bridge)', async () => {
    const served = await serveMetrics(new Registry(), 0);
    server = served.server;
    expect((await fetch(`http://127.0.0.1:${served.port}/readyz`)).status).toBe(404);
  });
});
