export interface KeyedQueueOptions {
  /** Keys processed at once; never two handlers for the same key. */
  concurrency: number;
  /** Delay before a failed key runs again; default 1s, 2s, 4s ... at most 60s. */
  retryDelayMs?: (attempt: number) => number;
  /** Told of every handler failure; `attempt` counts failures since the key's last success. */
  onError?: (key: string, err: unknown, attempt: number) => void;
}

const defaultRetryDelay = (attempt: number): number => Math.min(60_000, 1000 * 2 ** (attempt - 1));

/**
 * A work queue of keys, not events (as controller-runtime's): the handler re-reads the current
 * state of what a key names, so any number of `add`s before it runs collapse into one run.
 *
 * - A key is never handled twice at once; one added while it runs runs once more afterwards, so
 *   the change that caused the `add` is always seen.
 * - Keys start in the order they were first added (FIFO), at most `concurrency` at a time.
 * - A failed key runs again after `retryDelayMs(attempt)`, or sooner when it is added again.
 * - The handler is told when its key was first added since it last ran (a failed run does not
 *   count: its retry keeps the original time), so the caller can measure add-to-effect latency.
 */
export class KeyedQueue {
  /** Keys waiting to run; a Set keeps first-insertion order and drops duplicates. */
  private readonly waiting = new Set<string>();
  private readonly running = new Map<string, Promise<void>>();
  /** Running keys that were added again meanwhile: they run once more when done. */
  private readonly again = new Set<string>();
  private readonly retries = new Map<string, NodeJS.Timeout>();
  private readonly attempts = new Map<string, number>();
  /** When each key waiting (or running and added again) was first added since it last ran. */
  private readonly addedAt = new Map<string, number>();
  private idleWaiters: (() => void)[] = [];
  private stopped = false;
  private pumpQueued = false;
  private readonly retryDelayMs: (attempt: number) => number;

  constructor(
    /** `queuedAt`: when (Date.now()) `key` was first added since its last successful run. */
    private readonly handler: (key: string, queuedAt: number) => Promise<void>,
    private readonly opts: KeyedQueueOptions,
  ) {
    if (!(opts.concurrency >= 1)) throw new Error(`concurrency must be at least 1, not ${opts.concurrency}`);
    this.retryDelayMs = opts.retryDelayMs ?? defaultRetryDelay;
  }

  /** Queues `key`; a no-op after `stop()`. */
  add(key: string): void {
    if (this.stopped) return;
    this.cancelRetry(key);
    if (!this.addedAt.has(key)) this.addedAt.set(key, Date.now());
    if (this.running.has(key)) this.again.add(key);
    else this.waiting.add(key);
    // Started a microtask later, so a burst of adds in one tick (a relist, a resync) coalesces.
    if (!this.pumpQueued) {
      this.pumpQueued = true;
      queueMicrotask(() => {
        this.pumpQueued = false;
        this.pump();
      });
    }
  }

  /** Keys waiting to run (not counting running keys, even those that will run again). */
  get depth(): number {
    return this.waiting.size;
  }

  /** Keys whose handler is running now. */
  get active(): number {
    return this.running.size;
  }

  /** Resolves once nothing waits, runs, or waits for a retry. */
  idle(): Promise<void> {
    if (this.isIdle()) return Promise.resolve();
    return new Promise((resolve) => this.idleWaiters.push(resolve));
  }

  /** Takes no new work (waiting keys and pending retries are dropped) and waits for running handlers. */
  async stop(): Promise<void> {
    this.stopped = true;
    this.waiting.clear();
    this.again.clear();
    this.addedAt.clear();
    for (const key of [...this.retries.keys()]) this.cancelRetry(key);
    await Promise.all(this.running.values());
    this.notifyIdle();
  }

  private pump(): void {
    for (const key of this.waiting) {
      if (this.stopped || this.running.size >= this.opts.concurrency) return;
      this.waiting.delete(key);
      // Marked running before the handler starts, even if it calls add() or throws at once.
      this.running.set(
        key,
        Promise.resolve().then(() => this.run(key)),
      );
    }
  }

  private async run(key: string): Promise<void> {
    const queuedAt = this.addedAt.get(key) ?? Date.now();
    this.addedAt.delete(key);
    try {
      await this.handler(key, queuedAt);
      this.attempts.delete(key);
    } catch (err) {
      // Its retry (or the run an add meanwhile asked for) is still answering the first add.
      if (!this.stopped) this.addedAt.set(key, queuedAt);
      const attempt = (this.attempts.get(key) ?? 0) + 1;
      this.attempts.set(key, attempt);
      // Added again while failing: it runs soon anyway, no need to wait for the delay.
      if (!this.again.has(key) && !this.stopped) this.scheduleRetry(key, this.retryDelayMs(attempt));
      this.opts.onError?.(key, err, attempt);
    } finally {
      this.running.delete(key);
      if (this.again.delete(key)) this.waiting.add(key);
      this.pump();
      this.notifyIdle();
    }
  }

  private scheduleRetry(key: string, delayMs: number): void {
    this.retries.set(
      key,
      setTimeout(() => {
        this.retries.delete(key);
        this.add(key);
      }, delayMs),
    );
  }

  private cancelRetry(key: string): void {
    clearTimeout(this.retries.get(key));
    this.retries.delete(key);
  }

  private isIdle(): boolean {
    return this.waiting.size === 0 && this.running.size === 0 && this.retries.size === 0;
  }

  private notifyIdle(): void {
    if (!this.isIdle()) return;
    const waiters = this.idleWaiters;
    this.idleWaiters = [];
    for (const resolve of waiters) resolve();
  }
}
