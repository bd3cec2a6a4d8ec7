/** One pending timer per key: a later call for a key replaces the earlier one. */
export class KeyedTimers {
  private readonly timers = new Map<string, NodeJS.Timeout>();

  /** Calls `due` at `at` (epoch ms), in place of what an earlier call for `key` asked. */
  at(key: string, at: number, due: () => void): void {
    this.cancel(key);
    const timer = setTimeout(
      () => {
        this.timers.delete(key);
        due();
      },
      Math.max(0, at - Date.now()),
    );
    // A pending timer never keeps a stopping bridge alive.
    timer.unref();
    this.timers.set(key, timer);
  }

  cancel(key: string): void {
    clearTimeout(this.timers.get(key));
    this.timers.delete(key);
  }
}
