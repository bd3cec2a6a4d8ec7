import {
  CoordinationV1Api,
  V1MicroTime,
  type ConfigurationOptions,
  type KubeConfig,
  type V1Lease,
  type V1LeaseSpec,
} from '@kubernetes/client-node';
import { setTimeout as sleep } from 'node:timers/promises';
import { abortWith, apiMessage, isStatus } from '../kube/client';

export interface LeaderElectionOptions {
  kubeConfig: KubeConfig;
  /** Where the Lease lives. */
  namespace: string;
  /** The Lease's name, e.g. `armada-bridge`. */
  name: string;
  /** This replica, e.g. `${hostname}-${pid}`; written as the Lease's holderIdentity. */
  identity: string;
  /** How long a claim holds without renewal. Default 15. */
  leaseDurationSeconds?: number;
  /** How often the leader renews; must be shorter than the lease duration. Default 5. */
  renewIntervalSeconds?: number;
  /** How often a follower (or a leader whose renewal failed) tries again. Default 2. */
  retryIntervalSeconds?: number;
  onStartedLeading: () => void;
  /** Lost the Lease (renewal failed until it expired, or another holder took it), or stop() was called. */
  onStoppedLeading: () => void;
  log?: (level: 'info' | 'warn' | 'error', message: string, fields?: Record<string, unknown>) => void;
}

/**
 * A Lease's times as the API server writes them: RFC 3339 with exactly six fractional digits
 * (`2026-11-22T07:00:00.000000Z`). A plain Date serialises with three and is refused (HTTP 400
 * "cannot parse .000Z as .000000"); client-node's V1MicroTime pads toISOString() to six.
 */
export const microTime = (date: Date): V1MicroTime => new V1MicroTime(date.getTime());

/**
 * When the holder's claim ends (ms since the epoch): renewTime + leaseDurationSeconds; 0 when it
 * was never renewed. client-node types the times as Dates but hands back the server's strings
 * (V1MicroTime is not in its serialiser's type map), so both are accepted.
 */
export function leaseExpiry(spec: V1LeaseSpec | undefined): number {
  if (!spec?.renewTime) return 0;
  return new Date(spec.renewTime).getTime() + (spec.leaseDurationSeconds ?? 0) * 1000;
}

/**
 * Whether the claim has lapsed at `now` (strictly after renewTime + duration). Compares the
 * holder's clock with ours, so replicas need synchronised clocks (client-go instead times the
 * duration from when it first saw the record, which tolerates skew).
 */
export const leaseExpired = (lease: V1Lease, now: Date): boolean => now.getTime() > leaseExpiry(lease.spec);

/** Whether `identity` may write the Lease: it is absent, held by no one, held by us, or expired. */
export function canAcquire(lease: V1Lease | undefined, identity: string, now: Date): boolean {
  const holder = lease?.spec?.holderIdentity;
  return !lease || !holder || holder === identity || leaseExpired(lease, now);
}

/**
 * The spec `identity` writes to take or renew the Lease at `now`. A renewal keeps acquireTime and
 * leaseTransitions; taking it from anyone else (including a released, holderless Lease) restarts
 * acquireTime and counts a transition; a Lease created afresh starts at 0 transitions.
 */
export function claim(
  lease: V1Lease | undefined,
  identity: string,
  now: Date,
  leaseDurationSeconds: number,
): V1LeaseSpec {
  const spec = lease?.spec ?? {};
  const renewal = spec.holderIdentity === identity;
  const transitions = spec.leaseTransitions ?? 0;
  return {
    ...spec,
    holderIdentity: identity,
    leaseDurationSeconds,
    acquireTime: renewal && spec.acquireTime ? spec.acquireTime : microTime(now),
    renewTime: microTime(now),
    leaseTransitions: renewal || !lease ? transitions : transitions + 1,
  };
}

/**
 * The spec a leader writes when it steps down, as client-go does: no holder, so the next candidate
 * takes over at once; a 1 s duration for clients that look only at the times.
 */
export const released = (spec: V1LeaseSpec | undefined, now: Date): V1LeaseSpec => ({
  ...spec,
  holderIdentity: '',
  leaseDurationSeconds: 1,
  acquireTime: microTime(now),
  renewTime: microTime(now),
});

/**
 * Leader election on a coordination.k8s.io/v1 Lease, after client-go's leaderelection: read the
 * Lease, and when canAcquire() allows, write claim() with the read resourceVersion, so of two
 * candidates writing at once one gets 409 Conflict and stays a follower. The leader renews every
 * renewInterval; when it cannot (API errors) it stops leading at its own lease's expiry by its
 * clock (the moment a follower may take over), never later. After losing the Lease it keeps
 * running as a follower until stop().
 */
export class LeaderElector {
  private readonly api: CoordinationV1Api;
  private readonly leaseMs: number;
  private readonly renewMs: number;
  private readonly retryMs: number;
  private readonly halt = new AbortController();
  private running: Promise<void> | undefined;
  /** Whether onStartedLeading was called last (the callbacks alternate). */
  private leading = false;
  /** Our claim's expiry by our clock: the renewTime we wrote + the lease duration. */
  private leaderUntil = 0;
  private expiryTimer: NodeJS.Timeout | undefined;
  /** The Lease as our last write left it: its resourceVersion guards the release. */
  private held: V1Lease | undefined;

  constructor(private readonly opts: LeaderElectionOptions) {
    this.api = opts.kubeConfig.makeApiClient(CoordinationV1Api);
    this.leaseMs = (opts.leaseDurationSeconds ?? 15) * 1000;
    this.renewMs = (opts.renewIntervalSeconds ?? 5) * 1000;
    this.retryMs = (opts.retryIntervalSeconds ?? 2) * 1000;
    if (!(this.retryMs > 0 && this.renewMs > 0 && this.renewMs < this.leaseMs)) {
      throw new Error(
        'leader election needs 0 < renewIntervalSeconds < leaseDurationSeconds and retryIntervalSeconds > 0',
      );
    }
  }

  /** True while we hold an unexpired claim; turns false by the clock even before the expiry callback runs. */
  get isLeader(): boolean {
    return this.leading && Date.now() < this.leaderUntil;
  }

  /** Runs the acquire/renew loop in the background until stop(). */
  start(): void {
    if (this.running) throw new Error('the leader elector is already started');
    if (this.halt.signal.aborted) throw new Error('a stopped leader elector cannot start again');
    this.running = this.loop();
  }

  /**
   * Ends the loop; if leading, calls onStoppedLeading and then releases the Lease. The callback
   * comes first so that our work has stopped before another candidate can see the Lease free.
   */
  async stop(): Promise<void> {
    await this.endLoop();
    if (!this.leading) return;
    this.lose('stopped');
    await this.release();
  }

  /**
   * For tests: simulates a crash. The loop and timers end, nothing is written and no callback
   * runs, so the Lease stays claimed until it expires.
   */
  async abandon(): Promise<void> {
    await this.endLoop();
    clearTimeout(this.expiryTimer);
    this.leading = false;
  }

  private async endLoop(): Promise<void> {
    this.halt.abort();
    await this.running;
  }

  private async loop(): Promise<void> {
    while (!this.halt.signal.aborted) {
      const renewed = await this.tryAcquireOrRenew();
      await sleep(renewed ? this.renewMs : this.retryMs, undefined, { signal: this.halt.signal }).catch(
        () => {},
      );
    }
  }

  /** One attempt; true when we wrote our claim. Never throws: an error is logged and retried. */
  private async tryAcquireOrRenew(): Promise<boolean> {
    const { namespace, name, identity } = this.opts;
    // Taken before the read: the renewTime we write, and so our deadline, errs early.
    const now = new Date();
    try {
      const lease = await this.call((o) => this.api.readNamespacedLease({ namespace, name }, o)).catch(
        (err: unknown) => {
          if (isStatus(err, 404)) return undefined;
          throw err;
        },
      );
      if (!canAcquire(lease, identity, now)) {
        if (this.leading) this.lose(`taken by ${lease?.spec?.holderIdentity}`);
        return false;
      }
      const spec = claim(lease, identity, now, this.leaseMs / 1000);
      this.held = lease
        ? await this.call((o) =>
            this.api.replaceNamespacedLease({ namespace, name, body: { ...lease, spec } }, o),
          )
        : await this.call((o) =>
            this.api.createNamespacedLease({ namespace, body: { metadata: { namespace, name }, spec } }, o),
          );
      this.lead(now.getTime() + this.leaseMs);
      return true;
    } catch (err) {
      if (this.halt.signal.aborted) return false;
      // 409: another candidate wrote the Lease between our read and our write.
      if (!isStatus(err, 409))
        this.log('warn', 'could not acquire or renew the Lease', { error: apiMessage(err) });
      return false;
    }
  }

  private lead(until: number): void {
    this.leaderUntil = until;
    clearTimeout(this.expiryTimer);
    this.expiryTimer = setTimeout(
      () => this.lose('could not renew the Lease before it expired'),
      until - Date.now(),
    );
    if (this.leading) return;
    this.leading = true;
    this.log('info', 'started leading');
    this.notify(this.opts.onStartedLeading);
  }

  private lose(reason: string): void {
    clearTimeout(this.expiryTimer);
    if (!this.leading) return;
    this.leading = false;
    this.log(reason === 'stopped' ? 'info' : 'warn', `stopped leading: ${reason}`);
    this.notify(this.opts.onStoppedLeading);
  }

  /** Frees the Lease we last wrote; a 409 means someone else has written it since, so it is not ours. */
  private async release(): Promise<void> {
    const lease = this.held;
    if (!lease) return;
    const { namespace, name } = this.opts;
    try {
      const body = { ...lease, spec: released(lease.spec, new Date()) };
      await this.call((o) => this.api.replaceNamespacedLease({ namespace, name, body }, o), false);
      this.log('info', 'released the Lease');
    } catch (err) {
      if (isStatus(err, 409)) return;
      this.log('warn', 'could not release the Lease; another candidate takes over when it expires', {
        error: apiMessage(err),
      });
    }
  }

  /**
   * An API call that stop() aborts (unless `stoppable` is false) and that gives up after one renew
   * interval, so a hung request never holds the loop past our deadline.
   */
  private async call<T>(request: (o: ConfigurationOptions) => Promise<T>, stoppable = true): Promise<T> {
    const timeout = new AbortController();
    const timer = setTimeout(() => timeout.abort(), this.renewMs);
    const signals = stoppable ? [this.halt.signal, timeout.signal] : [timeout.signal];
    try {
      return await request(abortWith(AbortSignal.any(signals)));
    } finally {
      clearTimeout(timer);
    }
  }

  private notify(callback: () => void): void {
    try {
      callback();
    } catch (err) {
      this.log('error', 'leader election callback failed', { error: (err as Error).message ?? String(err) });
    }
  }

  private log(level: 'info' | 'warn' | 'error', message: string, fields: Record<string, unknown> = {}): void {
    const { namespace, name, identity } = this.opts;
    this.opts.log?.(level, message, { lease: `${namespace}/${name}`, identity, ...fields });
  }
}
