import { WorkflowNotFoundError, type Client, type WorkflowHandle } from '@temporalio/client';
import { CancelledFailure } from '@temporalio/common';
import { setTimeout as sleep } from 'node:timers/promises';
import type { ChartOutcome } from '../workflows/chart';
import type { DeployerOutcome } from '../workflows/deployer';
import type { GroupOutcome } from '../workflows/group';
import type { ManifestOutcome } from '../workflows/manifest';
import { progressQuery, rootMessage, type CanaryProgress, type Progress } from '../workflows/messages';
import type { RunMemo } from '../workflows/plan/specs';
import { formatProgress, type AnyProgress } from '../runs/progress';
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

/** A chart's state in a group's line: `web deploying`, `api deployed rev 2`, `db failed: ...`. */
const chartWord = (c: Progress['groups'][number]['charts'][number]) =>
  `${c.chart} ${c.state}${c.revision ? ` rev ${c.revision}` : ''}${c.error ? `: ${c.error.split('\n')[0]}` : ''}`;

/**
 * What `watch` prints without a terminal, one line per thing that can change: the run (a new
 * run ID is a re-plan's continue-as-new), the phase, one line per group with every chart that
 * has left `pending` (`group apps: running — web deploying, api deployed rev 2`); for a canary
 * its state and one line per step that has started.
 */
export function watchLines(s: Snapshot): string[] {
  const lines = [`run ${s.runId}${s.specs ? `: ${s.specs}` : ''}`];
  const p = s.progress;
  if (!p) return lines;
  if ('kind' in p && p.kind === 'canary') return [...lines, ...canaryLines(p)];
  const m = p as Progress;
  const paused = m.paused
    ? ` — paused since ${m.paused.since}${m.paused.by ? ` by ${m.paused.by}` : ''}${m.paused.reason ? ` (${m.paused.reason})` : ''}`
    : '';
  lines.push(`phase: ${m.phase}${m.waitingOn ? ` (waiting on ${m.waitingOn})` : ''}${paused}`);
  for (const g of m.groups) {
    const charts = g.charts.filter((c) => c.state !== 'pending').map(chartWord);
    lines.push(`group ${g.name}: ${g.state}${charts.length ? ` — ${charts.join(', ')}` : ''}`);
  }
  return lines;
}

/** A canary's state line (as `status` prints it), its reason, one line per started step. */
function canaryLines(p: CanaryProgress): string[] {
  const [state] = formatProgress(p);
  const steps = p.history
    .filter((s) => s.startedAt)
    .map((s) => {
      const times = [
        `started ${clock(new Date(s.startedAt!))}`,
        s.readyAt && `ready ${clock(new Date(s.readyAt))}`,
        s.endedAt && `${s.ended} ${clock(new Date(s.endedAt))}`,
      ].filter(Boolean);
      return `step ${s.step} (${s.percent} %, ${s.canary}/${s.stable}): ${times.join(', ')}`;
    });
  return [state, ...(p.reason ? [`reason: ${p.reason}`] : []), ...steps];
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
async function within<T>(promise: Promise<T>, ms: number): Promise<T | undefined> {
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
