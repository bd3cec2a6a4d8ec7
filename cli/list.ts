import type { Client } from '@temporalio/client';
import { kinds } from '../api/kinds';
import { runUrl } from '../kube/status';
import type { RunState } from '../core/bridge/decide-run';
import { describeLatest, progressOf, runStateOf } from '../runs/control';
import { formatProgress } from '../runs/progress';
import { placeByName } from '../runs/places';
import { routeOf, type ObjectPlace, type Target } from '../runs/targets';
import type { AnyProgress } from '../core/progress';
import { readingOf, shownPhase } from '../core/plan/status';
import { waitingOf } from '../core/plan/progress-view';
import { ArmadaKind, ArmadaName, ArmadaNamespace, ArmadaPhase } from '../workflows/search-attributes';
import { objectWorkflowId } from '../core/plan/names';
import type { RunMemo } from '../core/plan/specs';
import {
  describeRef,
  listObjects,
  placeAmong,
  readObject,
  RUN_KINDS,
  type ClusterObject,
  type RunKind,
} from './cluster';
import { inTurns } from './turns';
import { within } from './watch';

/** How long a run's progress may take to answer (no worker up: it never does). */
const PROGRESS_TIMEOUT_MS = 5000;
/** How many objects are looked up in Temporal at once. */
const LOOKUPS_AT_ONCE = 8;

/** The runs that show an object's progress, in routeOf's order (it never refuses `progress`). */
function progressRuns(place: ObjectPlace): string[] {
  const route = routeOf(place, 'progress');
  return 'refused' in route ? [] : route.workflowIds;
}

/** An object's current run: the latest of the workflow IDs that drive it, a running one first. */
export interface CurrentRun extends RunState {
  workflowId: string;
  /** When it ended (RFC 3339); null while it runs. */
  endedAt: string | null;
  /** Its progress, when it runs and answered within 5 s. */
  progress: AnyProgress | null;
}

/**
 * The current run among `workflowIds` (routeOf's order: a chart's canary before the run that
 * drives it): the first that runs, else the first that ever ran; null when none did. A running
 * one's progress is asked for too.
 */
export async function currentRun(client: Client, workflowIds: readonly string[]): Promise<CurrentRun | null> {
  let found: CurrentRun | null = null;
  for (const workflowId of workflowIds) {
    const description = await describeLatest(client, workflowId);
    if (!description) continue;
    const run = runStateOf(description);
    if (run.running) {
      const progress = await within(progressOf(client, workflowId), PROGRESS_TIMEOUT_MS);
      return { ...run, workflowId, endedAt: null, progress: progress ?? null };
    }
    const endedAt = description.closeTime?.toISOString() ?? null;
    found ??= { ...run, workflowId, endedAt, progress: null };
  }
  return found;
}

/** One row of `armadactl list`: an object on the cluster, or a run started from a file. */
export interface ListRow {
  kind: string;
  namespace: string;
  name: string;
  /** `cluster`: a custom resource the bridge runs; `file`: a run armadactl apply started. */
  from: 'cluster' | 'file';
  /** ready, reconciling, stalled (kstatus), invalid, deleting, or pending (no status yet). */
  state: string;
  /** The run's phase: from its progress while it runs, else as the object's status last said. */
  phase: string | null;
  /** The current run; `endedAt` (RFC 3339) when it ended, null while it runs. */
  run: { workflowId: string; runId: string; status: string; endedAt: string | null } | null;
  /** The object's creation, or the run's start (RFC 3339). */
  since: string | null;
  /** What the run waits on (waitingOf); null when it waits on nothing or does not run. */
  waitingOn: string | null;
}

const conditionOf = (o: ClusterObject, type: string) => o.status?.conditions?.find((c) => c.type === type);

/**
 * An object's state in a word: `deleting` (its finalizer holds it while the bridge uninstalls),
 * `invalid` (the bridge refused its spec), else its kstatus reading (`ready`, `reconciling`,
 * `stalled`), or `pending` before any run has written its status.
 */
export function objectState(o: ClusterObject): string {
  if (o.metadata.deletionTimestamp) return 'deleting';
  if (conditionOf(o, 'Invalid')?.status === 'True') return 'invalid';
  for (const type of ['Ready', 'Stalled', 'Reconciling'])
    if (conditionOf(o, type)?.status === 'True') return type.toLowerCase();
  return 'pending';
}

/** The row of an object on the cluster and its current run. */
export function objectRow(o: ClusterObject, run: CurrentRun | null): ListRow {
  const live = run?.running ? run.progress : null;
  return {
    kind: o.kind,
    namespace: o.metadata.namespace,
    name: o.metadata.name,
    from: 'cluster',
    state: objectState(o),
    phase: (live && shownPhase(live)) ?? conditionOf(o, 'Ready')?.reason ?? null,
    run: run && { workflowId: run.workflowId, runId: run.runId, status: run.status, endedAt: run.endedAt },
    since: o.metadata.creationTimestamp ?? null,
    waitingOn: (live && waitingOf(live)) || null,
  };
}

/**
 * How far back `list` looks for runs from files that ended: an object whose last run from a file
 * ended earlier is not listed (Temporal's retention of the namespace may forget it sooner).
 */
export const ENDED_WITHIN_DAYS = 30;
/**
 * At most this many runs are read, newest first (every re-plan, drift repair and canary is a run
 * of its own); when there are more, `list` says so in a note.
 */
export const RUNS_READ = 1000;

/**
 * The runs of armada objects in `namespace` (every namespace: undefined) that run, or that ended
 * at or after `since` (RFC 3339).
 */
export function runsQuery(namespace: string | undefined, since: string): string {
  const kindsIn = RUN_KINDS.map((k) => `'${k}'`).join(', ');
  return [
    `${ArmadaKind.name} IN (${kindsIn})`,
    ...(namespace === undefined ? [] : [`${ArmadaNamespace.name} = '${namespace}'`]),
    `(ExecutionStatus = 'Running' OR CloseTime >= '${since}')`,
  ].join(' AND ');
}

/** A run as visibility lists it, with the object its search attributes name. */
export interface ListedRun {
  kind: string;
  namespace: string;
  name: string;
  workflowId: string;
  runId: string;
  /** Temporal's status: RUNNING, COMPLETED, FAILED, TERMINATED, ... */
  status: string;
  /** Its ArmadaPhase: the last phase it reported. */
  phase: string | null;
  startedAt: string;
  endedAt: string | null;
  memo: RunMemo | undefined;
}

/**
 * An ended run's state in list's words: as its last phase reads (core/plan/status.ts) when that
 * is a phase a run ends at (`ready`, `stalled`); else (it ended mid-way, or wrote no phase) by how
 * it ended: `ready` when it completed, `stalled` when it failed, was terminated, cancelled or
 * timed out: nothing moves its object on until it is applied again.
 */
export function endedState(phase: string | null, status: string): string {
  const reading = readingOf(phase ?? '');
  if (reading !== 'reconciling') return reading;
  return status === 'COMPLETED' ? 'ready' : 'stalled';
}

/**
 * The rows of the objects deployed from files (armadactl apply), from their runs: per object
 * (kind, namespace, name) not in `onCluster`, the run that runs (its canary first: it shows the
 * steps), else its own latest run (the object's workflow ID; a canary or rollout ended with it),
 * with its last phase and when it ended. Left out: an object whose latest run the bridge started
 * (its memo names the specs: its custom resource has left the cluster) and one whose latest run
 * uninstalled it (phase Uninstalled), as helm list leaves out an uninstalled release.
 */
export function fileRows(runs: readonly ListedRun[], onCluster: ReadonlySet<string>): ListRow[] {
  const byObject = new Map<string, ListedRun>();
  const rank = (r: ListedRun) => (r.status !== 'RUNNING' ? 0 : r.workflowId.endsWith('/canary') ? 2 : 1);
  for (const run of runs) {
    const key = `${run.kind} ${run.namespace}/${run.name}`;
    if (onCluster.has(key)) continue;
    const own = run.workflowId === objectWorkflowId(run.kind, run.namespace, run.name);
    if (run.status !== 'RUNNING' && !own) continue;
    const held = byObject.get(key);
    const newer =
      !held || rank(run) > rank(held) || (rank(run) === rank(held) && run.startedAt > held.startedAt);
    if (newer) byObject.set(key, run);
  }
  return [...byObject.values()]
    .filter((r) => r.status === 'RUNNING' || (r.memo?.specs === undefined && r.phase !== 'Uninstalled'))
    .map((r) => ({
      kind: r.kind,
      namespace: r.namespace,
      name: r.name,
      from: 'file',
      state: r.status === 'RUNNING' ? 'reconciling' : endedState(r.phase, r.status),
      phase: r.phase,
      run: { workflowId: r.workflowId, runId: r.runId, status: r.status, endedAt: r.endedAt },
      since: r.startedAt,
      waitingOn: null,
    }));
}

/** The runs of `query`, newest first as visibility lists them, at most `limit`; `more`: there were more. */
async function listedRuns(
  client: Client,
  query: string,
  limit: number,
): Promise<{ runs: ListedRun[]; more: boolean }> {
  const runs: ListedRun[] = [];
  for await (const info of client.workflow.list({ query, pageSize: Math.min(limit, 1000) })) {
    if (runs.length === limit) return { runs, more: true };
    const kind = info.typedSearchAttributes.get(ArmadaKind);
    const namespace = info.typedSearchAttributes.get(ArmadaNamespace);
    const name = info.typedSearchAttributes.get(ArmadaName);
    if (!kind || !namespace || !name) continue;
    runs.push({
      kind,
      namespace,
      name,
      workflowId: info.workflowId,
      runId: info.runId,
      status: info.status.name,
      phase: info.typedSearchAttributes.get(ArmadaPhase) ?? null,
      startedAt: info.startTime.toISOString(),
      endedAt: info.closeTime?.toISOString() ?? null,
      memo: info.memo as RunMemo | undefined,
    });
  }
  return { runs, more: false };
}

/**
 * The rows of `armadactl list`: every object of `namespace` (every namespace: undefined) on the
 * cluster with its current run (routeOf's `progress` route), then every object deployed from a
 * file (fileRows), running or ended within ENDED_WITHIN_DAYS, from at most RUNS_READ runs; a
 * running one's progress is asked for. Without a cluster (`objects` null) only the runs; without
 * Temporal (`client` null) only the objects, as their status says. `notes`: what may be missing.
 */
export async function listRows(
  namespace: string | undefined,
  objects: readonly ClusterObject[] | null,
  client: Client | null,
  now = new Date(),
): Promise<{ rows: ListRow[]; notes: string[] }> {
  const all = objects ?? [];
  const rows = await inTurns(all, LOOKUPS_AT_ONCE, async (o) =>
    objectRow(o, client && (await currentRun(client, progressRuns(placeAmong(o, all))))),
  );
  if (!client) return { rows, notes: [] };
  const since = new Date(now.getTime() - ENDED_WITHIN_DAYS * 86_400_000).toISOString();
  const { runs, more } = await listedRuns(client, runsQuery(namespace, since), RUNS_READ);
  const onCluster = new Set(rows.map((r) => `${r.kind} ${r.namespace}/${r.name}`));
  const fromFiles = await inTurns(fileRows(runs, onCluster), LOOKUPS_AT_ONCE, async (row) => {
    if (row.run?.status !== 'RUNNING') return row;
    const progress = await within(progressOf(client, row.run.workflowId), PROGRESS_TIMEOUT_MS);
    if (!progress) return row;
    const phase = shownPhase(progress);
    return {
      ...row,
      phase,
      state: readingOf(phase),
      waitingOn: waitingOf(progress) || null,
    };
  });
  const notes = more
    ? [
        `only the newest ${RUNS_READ} runs were read: an object applied from a file whose last run is older is not listed`,
      ]
    : [];
  return { rows: [...rows, ...fromFiles], notes };
}

/**
 * kubectl's age: `42s`, `3m12s` under ten minutes, `25m`, `4h10m` under eight hours, `20h`,
 * `3d4h` under eight days, `12d`.
 */
export function age(seconds: number): string {
  const s = Math.max(0, Math.floor(seconds));
  const [m, h, d] = [Math.floor(s / 60), Math.floor(s / 3600), Math.floor(s / 86400)];
  if (s < 120) return `${s}s`;
  if (m < 10) return `${m}m${s % 60 ? `${s % 60}s` : ''}`;
  if (h < 3) return `${m}m`;
  if (h < 8) return `${h}h${m % 60 ? `${m % 60}m` : ''}`;
  if (d < 2) return `${h}h`;
  if (d < 8) return `${d}d${h % 24 ? `${h % 24}h` : ''}`;
  return `${d}d`;
}

/** `amf/demo`: the object by its kind's short name, as the other verbs take it. */
export function shortRef(kind: string, name: string): string {
  const short = kinds[kind as RunKind]?.shortNames[0];
  return `${short ?? kind}/${name}`;
}

/** Rows in aligned columns under a header; `-` for what is unknown. */
function table(header: string[], rows: string[][]): string[] {
  const all = [header, ...rows];
  const widths = header.map((_, i) => Math.max(...all.map((r) => r[i].length)));
  return all.map((r) =>
    r
      .map((cell, i) => cell.padEnd(widths[i]))
      .join('  ')
      .trimEnd(),
  );
}

/** The RUN cell: Temporal's status in lower case, and how long ago the run ended (`completed 4m ago`). */
function runCell(run: NonNullable<ListRow['run']>, now: Date): string {
  const status = run.status.toLowerCase();
  return run.endedAt ? `${status} ${age((now.getTime() - Date.parse(run.endedAt)) / 1000)} ago` : status;
}

/**
 * `armadactl list` as a table: OBJECT (`amf/demo`), FROM, STATE, PHASE, RUN (runCell), AGE,
 * WAITING ON; NAMESPACE first with `allNamespaces`. `now` sets the ages.
 */
export function formatList(rows: readonly ListRow[], allNamespaces: boolean, now = new Date()): string[] {
  const header = ['OBJECT', 'FROM', 'STATE', 'PHASE', 'RUN', 'AGE', 'WAITING ON'];
  const cells = rows.map((r) => [
    ...(allNamespaces ? [r.namespace] : []),
    shortRef(r.kind, r.name),
    r.from,
    r.state,
    r.phase ?? '-',
    r.run ? runCell(r.run, now) : '-',
    r.since ? age((now.getTime() - Date.parse(r.since)) / 1000) : '-',
    r.waitingOn ?? '',
  ]);
  return table(allNamespaces ? ['NAMESPACE', ...header] : header, cells);
}

/** A run as `armadactl get` and `status` show it: IDs, Temporal's status, specs, UI link, progress. */
export interface RunReport {
  workflowId: string;
  runId: string;
  status: string;
  specs: string | null;
  url: string;
  /** Its progress; null when no worker answered the query. */
  progress: AnyProgress | null;
}

/** What `armadactl get -o json` prints: the object's status and its current run. */
export interface ObjectReport {
  object: ClusterObject | null;
  run: RunReport | null;
}

/**
 * One object as the cluster holds it (null when it is not there: a run from a file) and its
 * current run with its progress (routeOf's `progress` route; by name alone without the object).
 * Throws when neither exists.
 */
export async function objectReport(
  target: Target,
  client: Client,
  temporalNamespace: string,
): Promise<ObjectReport> {
  const object = await readObject(target);
  const place = object
    ? placeAmong(object, await listObjects(target.namespace, ['ArmadaManifest', 'ArmadaChartGroup']))
    : placeByName(target.kind, target.namespace, target.name);
  const run = await currentRun(client, progressRuns(place));
  if (!object && !run) throw new Error(`${describeRef(target)} is not on the cluster and has never run`);
  if (!run) return { object, run: null };
  const progress =
    run.progress ?? (await within(progressOf(client, run.workflowId), PROGRESS_TIMEOUT_MS)) ?? null;
  return {
    object,
    run: {
      workflowId: run.workflowId,
      runId: run.runId,
      status: run.status,
      specs: run.memo.specs ?? null,
      url: runUrl(temporalNamespace, run.workflowId, run.runId),
      progress,
    },
  };
}

/**
 * `armadactl get` as text: the object (state, phase, generations, age, target state, each
 * condition, a pause), then its run (ID, status, specs, UI link) and its current details as
 * `armadactl status` prints them.
 */
export function formatObjectReport(target: Target, report: ObjectReport, now = new Date()): string[] {
  const lines: string[] = [];
  const o = report.object;
  if (o) {
    const { metadata, status } = o;
    const since = metadata.creationTimestamp
      ? `, age ${age((now.getTime() - Date.parse(metadata.creationTimestamp)) / 1000)}`
      : '';
    lines.push(
      `${describeRef(target)}: ${objectState(o)}${status?.actual_state ? ` (${status.actual_state})` : ''}`,
      `  generation ${metadata.generation ?? '-'}, observed ${status?.observedGeneration ?? '-'}${since}; target_state ${String(o.spec.target_state ?? '-')}`,
      ...(status?.conditions ?? []).map(
        (c) => `  ${c.type} ${c.status} (${c.reason})${c.message ? `: ${c.message}` : ''}`,
      ),
      ...(status?.paused
        ? [`  paused by ${status.paused.by ?? 'an operator'} since ${status.paused.since}`]
        : []),
    );
  } else lines.push(`${describeRef(target)}: not on the cluster (a run from a file)`);
  return [...lines, ...(report.run ? formatRun(report.run) : ['no run yet'])];
}

/**
 * A run as `get` and `status` print it: its workflow ID, run ID and status, the specs it deploys,
 * its Temporal UI link, then its current details as formatProgress draws them, indented.
 */
export function formatRun(run: RunReport): string[] {
  return [
    `run ${run.workflowId} ${run.runId}: ${run.status.toLowerCase()}`,
    ...(run.specs ? [`  specs ${run.specs}`] : []),
    `  ${run.url}`,
    ...(run.progress
      ? formatProgress(run.progress).map((l) => `  ${l}`)
      : ['  (no progress: is a worker up?)']),
  ];
}
