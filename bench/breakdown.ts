import { childTimes, closedActivities, type HistoryEvent } from './history';
import { median, round } from './stats';

/**
 * Where the time of one `armadactl apply --wait` goes (issue 20, item 2), from the process's own
 * start and end and the server's timestamps of the run's events. The parts add up to the wall
 * time: CLI start, the activities on the path (dispatch and work, by type), the orchestration
 * gaps between them (by where they fall: inside a chart, between charts of a group, between
 * groups), and the CLI's end (the final wait and exit). Activities that overlap (a parallel
 * group) count once, as the union of their spans, so the parts still add up.
 */
export interface ActivitySpan {
  type: string;
  /** The chart workflow that ran it, and the group that chart belongs to. */
  workflowId: string;
  group: string;
  scheduled: number;
  started: number;
  closed: number;
}

export interface ApplyTimes {
  /** The armadactl process: spawned and exited (ms since the epoch, this machine's clock). */
  cliStart: number;
  cliEnd: number;
  /** The manifest run: started and closed (the server's clock, the same machine). */
  runStart: number;
  runClose: number;
  activities: ActivitySpan[];
}

export type GapKind =
  'beforeFirstActivity' | 'withinChart' | 'betweenCharts' | 'betweenGroups' | 'afterLastActivity';

export interface ApplyBreakdown {
  totalMs: number;
  /** Process start → the manifest run started (Node.js start, validation, permission checks, the start call). */
  cliStartMs: number;
  /** The manifest run closed → the process exited (the result, the final query, exit). */
  cliEndMs: number;
  /** Time inside the run with at least one activity scheduled or running (the union of their spans). */
  activitiesOnPathMs: number;
  /** Of that, per type, scheduled → closed (sums: activities of a parallel group overlap). */
  activityMsByType: Record<string, number>;
  /** Scheduled → started, summed over all activities: waiting for the worker to take them. */
  activityDispatchMs: number;
  /** Time inside the run with no activity scheduled or running: workflow tasks, local status writes, child starts and closes, signals. */
  gapsMs: Record<GapKind, number>;
}

/** The breakdown of one apply (see ApplyBreakdown). */
export function applyBreakdown(times: ApplyTimes): ApplyBreakdown {
  const spans = [...times.activities].sort((a, b) => a.scheduled - b.scheduled);
  const gapsMs: Record<GapKind, number> = {
    beforeFirstActivity: 0,
    withinChart: 0,
    betweenCharts: 0,
    betweenGroups: 0,
    afterLastActivity: 0,
  };
  let onPath = 0;
  let coveredUntil = times.runStart;
  let last: ActivitySpan | undefined;
  for (const span of spans) {
    if (span.scheduled > coveredUntil) {
      gapsMs[gapKind(last, span)] += span.scheduled - coveredUntil;
      coveredUntil = span.scheduled;
    }
    if (span.closed > coveredUntil) {
      onPath += span.closed - coveredUntil;
      coveredUntil = span.closed;
    }
    last = span;
  }
  gapsMs.afterLastActivity += Math.max(0, times.runClose - coveredUntil);
  const activityMsByType: Record<string, number> = {};
  for (const span of spans)
    activityMsByType[span.type] = (activityMsByType[span.type] ?? 0) + span.closed - span.scheduled;
  return {
    totalMs: times.cliEnd - times.cliStart,
    cliStartMs: times.runStart - times.cliStart,
    cliEndMs: times.cliEnd - times.runClose,
    activitiesOnPathMs: onPath,
    activityMsByType,
    activityDispatchMs: spans.reduce((sum, s) => sum + (s.started - s.scheduled), 0),
    gapsMs,
  };
}

/** Where a gap between two activities falls: the one before it (none: the run's start) and the one after. */
function gapKind(before: ActivitySpan | undefined, after: ActivitySpan): GapKind {
  if (!before) return 'beforeFirstActivity';
  if (before.workflowId === after.workflowId) return 'withinChart';
  return before.group === after.group ? 'betweenCharts' : 'betweenGroups';
}

/**
 * The activities of a manifest run's tree (manifest → groups → charts), each with its chart
 * workflow and group: a chart's group is the child workflow that started it.
 */
export function activitySpans(tree: Map<string, HistoryEvent[]>): ActivitySpan[] {
  const groupOf = new Map<string, string>();
  for (const [id, events] of tree) for (const child of childTimes(events).keys()) groupOf.set(child, id);
  return [...tree].flatMap(([workflowId, events]) =>
    closedActivities(events).map((a) => ({
      ...a,
      workflowId,
      group: groupOf.get(workflowId) ?? workflowId,
      started: a.started ?? a.scheduled,
    })),
  );
}

/** The median of each part over several applies (each part's own median: they need not add up exactly). */
export function medianBreakdown(runs: readonly ApplyBreakdown[]): Record<string, unknown> {
  const med = (pick: (b: ApplyBreakdown) => number) => round(median(runs.map(pick)));
  const types = [...new Set(runs.flatMap((b) => Object.keys(b.activityMsByType)))].sort();
  const gaps = Object.keys(runs[0]?.gapsMs ?? {}) as GapKind[];
  return {
    n: runs.length,
    totalMs: med((b) => b.totalMs),
    cliStartMs: med((b) => b.cliStartMs),
    activitiesOnPathMs: med((b) => b.activitiesOnPathMs),
    activityMsByType: Object.fromEntries(types.map((t) => [t, med((b) => b.activityMsByType[t] ?? 0)])),
    activityDispatchMs: med((b) => b.activityDispatchMs),
    gapsMs: Object.fromEntries(gaps.map((g) => [g, med((b) => b.gapsMs[g])])),
    cliEndMs: med((b) => b.cliEndMs),
  };
}
