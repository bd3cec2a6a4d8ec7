import { WorkflowNotFoundError, type Client, type WorkflowHandle } from '@temporalio/client';
import { CancelledFailure } from '@temporalio/common';
import { setTimeout as sleep } from 'node:timers/promises';
import type {
  ChartOutcome,
  DeployerOutcome,
  GroupOutcome,
  ManifestOutcome,
} from '../core/contracts/workflows';
import { progressQuery } from '../workflows/messages';
import { rootMessage } from '../core/failures';
import type { AnyProgress } from '../core/progress';
import type { RunMemo } from '../core/plan/specs';
import { formatProgress, progressLog } from '../runs/progress';
import { noRun } from '../runs/targets';

type Print = (line: string) => void;

/** Where watch redraws in place: an interactive terminal (its width, when known). */
export interface Terminal {
  columns?: number;
}

/** One look at a run: which run of its chain is the latest, and its progress. */
export interface Snapshot {
  runId: string;
  specs?: string;
  progress?: AnyProgress;
}

/** `12:01:03` (UTC) of a time. */
const clock = (t: Date) => t.toISOString().slice(11, 19);

/**
 * What `watch` prints without a terminal, one line per thing that can change: the run (a new
 * run ID is a re-plan's continue-as-new), the progress's title and notes, one line per group
 * with every chart that has left `pending` (`group apps: running — web deploying, api deployed
 * rev 2`), or for a canary one line per step that has started.
 */
export function watchLines(s: Snapshot): string[] {
  return [`run ${s.runId}${s.specs ? `: ${s.specs}` : ''}`, ...(s.progress ? progressLog(s.progress) : [])];
}

/** The lines of `next` that `previous` did not show: what changed since the last look. */
export function changedLines(previous: readonly string[], next: readonly string[]): string[] {
  const seen = new Set(previous);
  return next.filter((line) => !seen.has(line));
}

/**
 * One redraw on a terminal: move the cursor up over the `previousHeight` lines drawn last time
 * and clear to the end of the screen (ANSI CSI n A, CSI J), then the new lines, each cut to the
 * terminal's width so none wraps (a wrapped line would throw off the next move up).
 */
export function frame(lines: readonly string[], previousHeight: number, columns?: number): string {
  const fit = (line: string) => (columns && line.length >= columns ? line.slice(0, columns - 1) : line);
  return `${previousHeight ? `\x1b[${previousHeight}A\x1b[J` : ''}${lines.map(fit).join('\n')}`;
}

/** How a run ended, in a word or a few, and whether that is a success (exit 0). */
export function describeOutcome(ended: { value: unknown } | { error: unknown }): {
  text: string;
  ok: boolean;
} {
  if ('error' in ended) {
    const cancelled = (ended.error as { cause?: unknown }).cause instanceof CancelledFailure;
    return { text: `${cancelled ? 'cancelled' : 'failed'}: ${rootMessage(ended.error)}`, ok: false };
  }
  const v = ended.value as Partial<ManifestOutcome & DeployerOutcome & ChartOutcome & GroupOutcome>;
  if (v.state) return { text: v.state, ok: v.state === 'deployed' || v.state === 'uninstalled' };
  if (v.result)
    return { text: `${v.result}${v.reason ? ` (${v.reason})` : ''}`, ok: v.result !== 'rolled-back' };
  if (v.action) return { text: `${v.action}${v.revision ? `, revision ${v.revision}` : ''}`, ok: true };
  if (v.outcomes) {
    const failed = v.failed ?? [];
    if (failed.length) return { text: `failed: ${failed.map((f) => f.chart).join(', ')}`, ok: false };
    return { text: v.stopped ? 'stopped' : 'done', ok: !v.stopped };
  }
  return { text: 'completed', ok: true };
}

/** A promise's value, or undefined when it fails or takes longer than `ms`. */
export async function within<T>(promise: Promise<T>, ms: number): Promise<T | undefined> {
  const timer = new AbortController();
  try {
    return await Promise.race([
      promise,
      sleep(ms, undefined, { signal: timer.signal }).catch(() => undefined),
    ]);
  } catch {
    return undefined;
  } finally {
    timer.abort();
  }
}

/**
 * The latest run of the chain and its progress. A query that does not answer (between two runs
 * of a continue-as-new, or with no worker up) keeps the progress seen last.
 */
async function look(handle: WorkflowHandle, last?: Snapshot): Promise<Snapshot> {
  const { runId, memo } = await handle.describe();
  const progress = (await within(handle.query(progressQuery), 5000)) ?? last?.progress;
  return { runId, specs: (memo as RunMemo | undefined)?.specs, progress };
}

/**
 * Shows a run live until it ends, then its outcome; returns the exit code (0 on success, 1 on
 * failure or rollback). On a terminal it redraws the status in place every second; otherwise
 * it prints a timestamped line for each thing that changed. It follows the workflow ID, not one
 * run: a re-plan's continue-as-new shows as a new run line and the watch goes on.
 */
export async function watch(
  client: Client,
  workflowId: string,
  print: Print,
  terminal?: Terminal,
  intervalMs = 1000,
): Promise<number> {
  const handle = client.workflow.getHandle(workflowId);
  let last: Snapshot;
  try {
    last = await look(handle);
  } catch (err) {
    if (err instanceof WorkflowNotFoundError) throw noRun(workflowId, err);
    throw err;
  }
  const ended = handle.result().then(
    (value: unknown) => ({ value }),
    (error: unknown) => ({ error }),
  );
  let done = false;
  void ended.then(() => (done = true));

  let shown: string[] = [];
  const show = (s: Snapshot) => {
    const now = new Date();
    if (terminal) {
      const specs = s.specs ? `  ${s.specs}` : '';
      const lines = [
        `${workflowId}  run ${s.runId}${specs}  ${clock(now)} UTC`,
        ...(s.progress ? formatProgress(s.progress) : ['(no progress yet)']),
      ];
      print(frame(lines, shown.length, terminal.columns));
      shown = lines;
    } else {
      const lines = watchLines(s);
      for (const line of changedLines(shown, lines)) print(`${clock(now)} ${line}`);
      shown = lines;
    }
  };
  show(last);
  while (!done) {
    await within(ended, intervalMs); // the end, or the next look in a second
    last = await look(handle, last);
    show(last);
  }
  const outcome = describeOutcome(await ended);
  print(`${terminal ? '' : `${clock(new Date())} `}${workflowId}: ${outcome.text}`);
  return outcome.ok ? 0 : 1;
}
