import { KeyedTimers } from './keyed-timers';

/** The first wait before a failed leftover uninstall is run again. */
const FIRST_RETRY_MS = 1_000;
/** The longest wait: a cause a person must remove is still retried every 5 minutes. */
const LAST_RETRY_MS = 300_000;

/**
 * How long after its `failures`th failed run in a row a leftover uninstall runs again:
 * 1 s, 2 s, 4 s … doubling up to 5 min (the 10th failure and every one after it).
 */
export function leftoverRetryDelayMs(failures: number): number {
  return Math.min(LAST_RETRY_MS, FIRST_RETRY_MS * 2 ** (failures - 1));
}

/** A chart's last failed leftover uninstall, as the bridge remembers it. */
export interface LeftoverFailure {
  /** The failed run. */
  runId: string;
  /** The chart's generation that run uninstalled with (a new one is a new spec: the count restarts). */
  generation: number | undefined;
  /** Failed runs in a row for this spec, this one included. */
  failures: number;
  /** When (epoch ms) the uninstall runs again. */
  retryAt: number;
  /** The manifest's status and an Event have said so. */
  told?: boolean;
}

/** A chart's failure, with the manifest whose run it holds back. */
interface Entry extends LeftoverFailure {
  manifest: string;
}

/**
 * The failed uninstalls of standalone leftovers (bridge/standalone.ts), per chart key, in the
 * bridge's memory: a restarted bridge counts afresh. Each failed run is counted once, however
 * often the manifest is reconciled meanwhile, and the manifest is queued again when the run is
 * due (a timer per chart; a later timer replaces it).
 */
export class LeftoverRetries {
  private readonly failed = new Map<string, Entry>();
  private readonly timers = new KeyedTimers();

  /**
   * The failure of run `runId` of `chart`, counted when first seen: the wait before its retry is
   * taken from when it ended (`endedAt`, epoch ms). `manifest` is the one whose run waits for it.
   */
  failure(
    chart: string,
    run: { runId: string; generation: number | undefined; endedAt: number },
    manifest: string,
  ): LeftoverFailure {
    const known = this.failed.get(chart);
    if (known?.runId === run.runId) return known;
    const failures = known && known.generation === run.generation ? known.failures + 1 : 1;
    const failure = {
      manifest,
      runId: run.runId,
      generation: run.generation,
      failures,
      retryAt: run.endedAt + leftoverRetryDelayMs(failures),
    };
    this.failed.set(chart, failure);
    return failure;
  }

  /** Calls `due` at `at` (epoch ms), in place of what an earlier call for `chart` asked. */
  wakeAt(chart: string, at: number, due: () => void): void {
    this.timers.at(chart, at, due);
  }

  /** Forgets `chart`'s failures: its leftover is cleared, or no manifest asks for it now. */
  forget(chart: string): void {
    this.failed.delete(chart);
    this.timers.cancel(chart);
  }

  /** Forgets the failures of `manifest`'s charts but `charts`: it lists the others no more. */
  forgetBut(manifest: string, charts: ReadonlySet<string>): void {
    for (const [chart, entry] of this.failed)
      if (entry.manifest === manifest && !charts.has(chart)) this.forget(chart);
  }

  /** Forgets what a deleted object held: a chart's own failures, or those a manifest waited for. */
  forgetObject(key: string): void {
    this.forget(key);
    this.forgetBut(key, new Set());
  }

  /** Charts whose failures are remembered. */
  get size(): number {
    return this.failed.size;
  }
}
