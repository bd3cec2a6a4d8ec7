import { CancelledFailure, type MetricTags } from '@temporalio/common';
import {
  MetricsBuffer,
  type ActivityInterceptorsFactory,
  type BufferedMetricUpdate,
} from '@temporalio/worker';
import { Counter, Gauge, Histogram, Registry } from 'prom-client';
import { collectProcessMetrics, type Scrapeable } from './process-metrics';

/** Seconds one activity attempt takes: a Kubernetes read (10 ms) … a helm call waiting out its --timeout. */
const ACTIVITY_BUCKETS = [0.01, 0.05, 0.1, 0.25, 0.5, 1, 2.5, 5, 10, 30, 60, 120, 300, 600];
/** Seconds, for the SDK's latency histograms: a gRPC call (ms) … a long poll (about a minute). */
const SDK_BUCKETS = [0.001, 0.005, 0.01, 0.025, 0.05, 0.1, 0.25, 0.5, 1, 2.5, 5, 10, 30, 60, 120];

/** Why an activity attempt failed: cancelled (by its workflow, or by the worker shutting down), or any error. */
export type FailureReason = 'cancelled' | 'error';

export function failureReason(err: unknown): FailureReason {
  const cancelled = err instanceof CancelledFailure || (err instanceof Error && err.name === 'AbortError');
  return cancelled ? 'cancelled' : 'error';
}

/**
 * The worker's Prometheus metrics (`armada_worker_*`), the process's own and the Temporal SDK's
 * (`temporal_*`, see SdkMetrics), in one Registry. Counters start at 0 for every activity type,
 * so a rate over them exists from the first scrape.
 */
export class WorkerMetrics {
  readonly registry = new Registry();
  readonly sdk: SdkMetrics;
  private readonly attempts: Counter<'activity_type'>;
  private readonly failures: Counter<'activity_type' | 'reason'>;
  private readonly duration: Histogram<'activity_type' | 'outcome'>;
  private readonly running: Gauge;

  constructor(activityTypes: readonly string[]) {
    const registers = [this.registry];
    collectProcessMetrics(this.registry);
    this.sdk = new SdkMetrics(this.registry);
    this.attempts = new Counter({
      name: 'armada_worker_activity_attempts_total',
      help: 'Activity attempts started on this worker, by activity type.',
      labelNames: ['activity_type'],
      registers,
    });
    this.failures = new Counter({
      name: 'armada_worker_activity_failures_total',
      help: 'Activity attempts that failed (Temporal retries them per their retry policy), by activity type and reason (cancelled, error).',
      labelNames: ['activity_type', 'reason'],
      registers,
    });
    this.duration = new Histogram({
      name: 'armada_worker_activity_duration_seconds',
      help: 'Seconds one activity attempt took, by activity type and outcome (completed, failed).',
      labelNames: ['activity_type', 'outcome'],
      buckets: ACTIVITY_BUCKETS,
      registers,
    });
    this.running = new Gauge({
      name: 'armada_worker_activities_running',
      help: 'Activity attempts running on this worker now.',
      registers,
    });
    for (const activity_type of activityTypes) {
      this.attempts.inc({ activity_type }, 0);
      for (const reason of ['cancelled', 'error'] satisfies FailureReason[])
        this.failures.inc({ activity_type, reason }, 0);
    }
  }

  /** Runs one attempt of an activity of `activityType`: counts and times it, and passes its outcome on. */
  async activity<T>(activityType: string, run: () => Promise<T>): Promise<T> {
    const labels = { activity_type: activityType };
    this.attempts.inc(labels);
    this.running.inc();
    const started = process.hrtime.bigint();
    const seconds = () => Number(process.hrtime.bigint() - started) / 1e9;
    try {
      const result = await run();
      this.duration.observe({ ...labels, outcome: 'completed' }, seconds());
      return result;
    } catch (err) {
      this.duration.observe({ ...labels, outcome: 'failed' }, seconds());
      this.failures.inc({ ...labels, reason: failureReason(err) });
      throw err;
    } finally {
      this.running.dec();
    }
  }

  /** The activity inbound interceptor that reports every attempt to `activity` (never its arguments). */
  readonly interceptor: ActivityInterceptorsFactory = (ctx) => ({
    inbound: { execute: (input, next) => this.activity(ctx.info.activityType, () => next(input)) },
  });

  /** What /metrics renders: the SDK's buffered updates first, then the whole registry. */
  readonly scrape: Scrapeable = {
    contentType: this.registry.contentType,
    metrics: () => {
      this.sdk.drain();
      return this.registry.metrics();
    },
  };
}

/**
 * The tag names the SDK (Core) puts on its metrics. A metric's label names are fixed when it is
 * first seen (these and that update's tags); a tag first seen later on the same metric is dropped
 * rather than failing the scrape. The SDK adds or omits some of them per series (e.g.
 * `temporal_request` with and without `namespace`): an absent tag is an absent label.
 */
const SDK_TAGS = [
  'namespace',
  'task_queue',
  'service_name',
  'operation',
  'worker_type',
  'poller_type',
  'activity_type',
  'workflow_type',
  'eager',
  'failure_reason',
  'status_code',
  'nexus_endpoint',
  'nexus_service',
  'nexus_operation',
];

type SdkMetric =
  | { kind: 'counter'; metric: Counter; labelNames: string[] }
  | { kind: 'gauge' | 'up-down-counter'; metric: Gauge; labelNames: string[] }
  | { kind: 'histogram'; metric: Histogram; labelNames: string[] };

/**
 * The Temporal SDK's own metrics (Core's: polls, task slots, schedule-to-start and execution
 * latencies, sticky cache …) in the worker's Registry, so one /metrics serves everything.
 *
 * TS SDK 1.24 offers three exporters: Prometheus (Core serves its own HTTP port), OTLP, and an
 * in-process buffer (`MetricsBuffer`, marked experimental). The buffer is used: `drain` (at each
 * scrape and every second, so it never overflows) turns its updates into prom-client metrics of
 * the same names: a counter's update is a delta, a gauge's or histogram's the value itself.
 * Durations are in seconds (`useSecondsForDurations`).
 */
export class SdkMetrics {
  readonly buffer = new MetricsBuffer({ useSecondsForDurations: true, maxBufferSize: 100_000 });
  private readonly metrics = new Map<string, SdkMetric | null>();

  constructor(private readonly registry: Registry) {}

  /** Moves what the SDK buffered since the last call into the registry. */
  drain(): void {
    for (const update of this.buffer.retrieveUpdates()) this.record(update);
  }

  /** Applies one buffered update. */
  record({ metric: { name, kind, description }, value, attributes }: BufferedMetricUpdate): void {
    let target = this.metrics.get(name);
    if (target === undefined) {
      target = this.create(name, kind, description ?? '', attributes);
      this.metrics.set(name, target);
    }
    if (target === null) return;
    const labels: Record<string, string> = {};
    for (const [key, tag] of Object.entries(attributes))
      if (target.labelNames.includes(key)) labels[key] = String(tag);
    switch (target.kind) {
      case 'counter':
        return target.metric.inc(labels, value);
      case 'gauge':
        return target.metric.set(labels, value);
      case 'up-down-counter':
        return target.metric.inc(labels, value);
      case 'histogram':
        return target.metric.observe(labels, value);
    }
  }

  /** A prom-client metric for an SDK metric; null when it cannot be one (its name is taken or invalid). */
  private create(name: string, kind: string, description: string, tags: MetricTags): SdkMetric | null {
    const labelNames = [...new Set([...SDK_TAGS, ...Object.keys(tags)])];
    const config = {
      name,
      help: description || `Temporal SDK metric ${name}.`,
      labelNames,
      registers: [this.registry],
    };
    try {
      switch (kind) {
        case 'counter':
          return { kind, metric: new Counter(config), labelNames };
        case 'gauge':
        case 'up-down-counter':
          return { kind, metric: new Gauge(config), labelNames };
        case 'histogram':
          return { kind, metric: new Histogram({ ...config, buckets: SDK_BUCKETS }), labelNames };
        default:
          return null;
      }
    } catch {
      return null;
    }
  }
}
