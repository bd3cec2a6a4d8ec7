import { NativeConnection, Runtime, type Worker } from '@temporalio/worker';
import * as activities from '../activities';
import { loadConfig } from './config';
import { coreLogFilter, workerLogger, writeEntry } from './logger';
import { WorkerMetrics } from './metrics';
import { serveMetrics } from './process-metrics';
import { nativeConnectionOptions } from '../runs/connection';
import { dataConverterFor, loadKeys } from '../runs/codec';
import { workerDigestKey } from '../activities/charts/digest-key';
import { stopOnSignals } from '../runs/signals';
import { createWorker } from './worker';

/**
 * After the grace time, how much longer `run()` waits for cancelled activities to wind up (a
 * helm child gets SIGTERM, then SIGKILL 5 s later: activities/process.ts) before it gives up.
 */
const FORCE_MARGIN_SECONDS = 15;

/**
 * The worker process: serves /metrics, /healthz and /readyz, logs (JSON lines, or text on a
 * terminal: runs/log-format.ts), and runs until SIGINT/SIGTERM.
 *
 * Shutdown: the signal turns /readyz to 503 at once (the worker leaves RUNNING) and the worker
 * stops polling. Running activities get ARMADA_SHUTDOWN_GRACE_SECONDS to finish; then the SDK
 * cancels them: runProcess kills the helm child (SIGTERM, then SIGKILL) and kube waits stop, so
 * each attempt ends as failed and Temporal retries it on another worker. Waiting longer would
 * hold a helm call (up to its --timeout) past Kubernetes' SIGKILL, which loses the attempt
 * silently until its heartbeat times out; cancelling early would redo work needlessly. If
 * cancelled activities still have not ended FORCE_MARGIN_SECONDS later, the process exits anyway.
 */
async function main(): Promise<void> {
  const config = loadConfig();
  const logger = workerLogger(config.ARMADA_LOG_LEVEL);
  const keys = loadKeys();
  const dataConverter = dataConverterFor(keys);
  logger.info(keys.length ? 'payload encryption on' : 'payload encryption off: no ARMADA_ENCRYPTION_KEYS', {
    keys: keys.map((k) => k.id),
  });
  // Loaded now: a bad key file fails the start, not the first chart run.
  const digestKey = workerDigestKey();
  logger.info(digestKey.created ? 'release digest key created' : 'release digest key read', {
    file: digestKey.file,
  });
  const metrics = new WorkerMetrics(Object.keys(activities));
  const runtime = Runtime.install({
    logger,
    // Signals are handled below, so that readiness and the log follow them.
    shutdownSignals: [],
    telemetryOptions: {
      logging: { filter: coreLogFilter(config.ARMADA_LOG_LEVEL), forward: {} },
      metrics: { buffer: metrics.sdk.buffer },
    },
  });
  const draining = setInterval(() => metrics.sdk.drain(), 1_000).unref();

  let worker: Worker | undefined;
  const served = await serveMetrics(metrics.scrape, config.ARMADA_METRICS_PORT, {
    ready: () => worker?.getState() === 'RUNNING',
  });
  logger.info('metrics listening', { port: served.port });

  const { address, namespace } = config.temporal;
  const connection = await NativeConnection.connect(nativeConnectionOptions(config.temporal)).catch(
    (err: unknown) => {
      throw new Error(
        `cannot reach Temporal at ${address} (${(err as Error).message}); start it with \`npm start\` or set TEMPORAL_ADDRESS`,
        { cause: err },
      );
    },
  );
  try {
    const graceSeconds = config.ARMADA_SHUTDOWN_GRACE_SECONDS;
    worker = await createWorker({
      connection,
      namespace,
      taskQueue: config.ARMADA_TASK_QUEUE,
      activityInterceptors: [metrics.interceptor],
      shutdownGraceTime: `${graceSeconds}s`,
      shutdownForceTime: `${graceSeconds + FORCE_MARGIN_SECONDS}s`,
      dataConverter,
      ...(config.ARMADA_WORKFLOW_BUNDLE && { workflowBundle: { codePath: config.ARMADA_WORKFLOW_BUNDLE } }),
      ...(config.ARMADA_WORKER_DEPLOYMENT &&
        config.ARMADA_BUILD_ID && {
          deployment: { name: config.ARMADA_WORKER_DEPLOYMENT, buildId: config.ARMADA_BUILD_ID },
        }),
    });
    const running = worker;
    stopOnSignals(
      (signal) => {
        logger.info('shutting down', { signal, graceSeconds });
        running.shutdown();
      },
      (signal) => logger.info('still shutting down', { signal }),
    );
    if (!config.ARMADA_WORKER_DEPLOYMENT)
      logger.warn(
        'unversioned worker, for development: upgrading workflow code with runs in flight needs versioned workers (ARMADA_WORKER_DEPLOYMENT; docs/how-to/scale-and-upgrade.md#worker-upgrades)',
      );
    logger.info('polling', {
      taskQueue: config.ARMADA_TASK_QUEUE,
      address,
      namespace,
      ...(config.ARMADA_BUILD_ID && {
        deployment: config.ARMADA_WORKER_DEPLOYMENT,
        buildId: config.ARMADA_BUILD_ID,
      }),
    });
    await running.run();
    logger.info('stopped');
  } finally {
    clearInterval(draining);
    served.server.close();
    await connection.close();
    runtime.flushLogs();
  }
}

main().then(
  () => process.exit(0),
  (err: unknown) => {
    writeEntry({ level: 'ERROR', message: err instanceof Error ? err.message : String(err) });
    process.exit(1);
  },
);
