import { Counter, Gauge, Histogram, Registry } from 'prom-client';
import { kinds, type KindName } from '../api/kinds';
import type { RunMemo } from '../runs/requests';
import { collectProcessMetrics } from '../worker/process-metrics';
import { ACTIONS } from './actions';
import { parseKey } from './view';
import type { Change } from './watch';

// The endpoint is shared with the worker; bridge code and tests import it from here too.
export { serveMetrics } from '../worker/process-metrics';

/** What reconcile reports (one call each, next to its log line): runs it starts, signals it sends. */
export interface ReconcileMetrics {
  /** A run of `key`'s object was started (or found started by a rival start). */
  runStarted(key: string, mode: RunMemo['mode']): void;
  /** An `armada.airshipit.org/action` annotation was handled; `sent`: the signal reached its run. */
  actionTaken(action: string, sent: boolean): void;
}

/** Seconds from an object's change to its workflow's start: 10 ms … 30 s. */
const EVENT_TO_START_BUCKETS = [0.01, 0.025, 0.05, 0.1, 0.25, 0.5, 1, 2.5, 5, 10, 30];
/** Seconds one reconcile takes: a few cache reads and API calls, 5 ms … 10 s. */
const RECONCILE_BUCKETS = [0.005, 0.01, 0.025, 0.05, 0.1, 0.25, 0.5, 1, 2.5, 5, 10];

/** What the queue gauges read at scrape time. */
interface QueueSizes {
  depth: number;
  active: number;
}

/**
 * The bridge's Prometheus metrics (`armada_bridge_*`) and the process's own, in one Registry.
 * Counters with a `kind` label start at 0 for every kind, so a rate over them exists from the
 * first scrape.
 */
export class BridgeMetrics implements ReconcileMetrics {
  readonly registry = new Registry();
  /** The time each key now reconciling was queued (a key never reconciles twice at once). */
  private readonly queuedAt = new Map<string, number>();
  private readonly watchEvents: Counter<'kind' | 'change'>;
  private readonly eventToStart: Histogram;
  private readonly workflowStarts: Counter<'kind' | 'mode'>;
  private readonly signals: Counter<'action' | 'outcome'>;
  private readonly reconciles: Counter<'kind'>;
  private readonly reconcileErrors: Counter<'kind'>;
  private readonly reconcileDuration: Histogram<'kind'>;
  private readonly leader: Gauge;

  /** `queue` is read at each scrape; it may name a queue made after this object. */
  constructor(queue: () => QueueSizes) {
    const registers = [this.registry];
    const name = (suffix: string) => `armada_bridge_${suffix}`;
    collectProcessMetrics(this.registry);
    new Gauge({
      name: name('queue_depth'),
      help: 'Object keys waiting to be reconciled.',
      registers,
      collect() {
        this.set(queue().depth);
      },
    });
    new Gauge({
      name: name('queue_running'),
      help: 'Object keys being reconciled now.',
      registers,
      collect() {
        this.set(queue().active);
      },
    });
    this.watchEvents = new Counter({
      name: name('watch_events_total'),
      help: 'Changes the watches delivered (add, update, delete, resync), by kind.',
      labelNames: ['kind', 'change'],
      registers,
    });
    this.eventToStart = new Histogram({
      name: name('event_to_start_seconds'),
      help: "Seconds from an object's key being queued (the first time since it last ran) to the start of its workflow.",
      buckets: EVENT_TO_START_BUCKETS,
      registers,
    });
    this.workflowStarts = new Counter({
      name: name('workflow_starts_total'),
      help: 'Workflow runs started for objects, by kind and mode (deploy, uninstall).',
      labelNames: ['kind', 'mode'],
      registers,
    });
    this.signals = new Counter({
      name: name('signals_total'),
      help: 'armada.airshipit.org/action annotations handled, by action and outcome (sent, failed, unknown: not an action).',
      labelNames: ['action', 'outcome'],
      registers,
    });
    this.reconciles = new Counter({
      name: name('reconciles_total'),
      help: 'Reconciles run, by kind.',
      labelNames: ['kind'],
      registers,
    });
    this.reconcileErrors = new Counter({
      name: name('reconcile_errors_total'),
      help: 'Reconciles that failed (and are retried), by kind.',
      labelNames: ['kind'],
      registers,
    });
    this.reconcileDuration = new Histogram({
      name: name('reconcile_duration_seconds'),
      help: 'Seconds one reconcile took, by kind.',
      labelNames: ['kind'],
      buckets: RECONCILE_BUCKETS,
      registers,
    });
    this.leader = new Gauge({
      name: name('leader'),
      help: '1 while this replica holds the leader Lease, else 0.',
      registers,
    });
    this.leader.set(0);
    for (const kind of Object.keys(kinds)) {
      this.reconciles.inc({ kind }, 0);
      this.reconcileErrors.inc({ kind }, 0);
    }
  }

  /** Runs one reconcile of `key` (queued at `queuedAt`, ms since the epoch): counts and times it. */
  async reconcile(key: string, queuedAt: number, run: () => Promise<void>): Promise<void> {
    const { kind } = parseKey(key);
    const end = this.reconcileDuration.startTimer({ kind });
    this.queuedAt.set(key, queuedAt);
    try {
      await run();
    } catch (err) {
      this.reconcileErrors.inc({ kind });
      throw err;
    } finally {
      this.queuedAt.delete(key);
      end();
      this.reconciles.inc({ kind });
    }
  }

  runStarted(key: string, mode: RunMemo['mode']): void {
    this.workflowStarts.inc({ kind: parseKey(key).kind, mode });
    const queuedAt = this.queuedAt.get(key);
    if (queuedAt !== undefined) this.eventToStart.observe(Math.max(0, Date.now() - queuedAt) / 1000);
  }

  actionTaken(action: string, sent: boolean): void {
    // Any text can be annotated: an unknown action is counted under one label, not its own.
    if (!(ACTIONS as readonly string[]).includes(action))
      this.signals.inc({ action: 'other', outcome: 'unknown' });
    else this.signals.inc({ action, outcome: sent ? 'sent' : 'failed' });
  }

  watchEvent(kind: KindName, change: Change): void {
    this.watchEvents.inc({ kind, change });
  }

  setLeader(leading: boolean): void {
    this.leader.set(leading ? 1 : 0);
  }
}
