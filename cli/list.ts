import type { Client } from '@temporalio/client';
import { kinds } from '../api/kinds';
import { runUrl } from '../kube/status';
import type { RunState } from '../core/bridge/decide-run';
import { latestRun, progressOf } from '../runs/control';
import { formatProgress } from '../runs/progress';
import { placeByName } from '../runs/places';
import { routeOf, type ObjectPlace, type Target } from '../runs/targets';
import type { AnyProgress } from '../core/progress';
import { readingOf, shownPhase } from '../core/plan/status';
import { waitingOf } from '../core/plan/progress-view';
import { ArmadaKind, ArmadaName, ArmadaNamespace, ArmadaPhase } from '../workflows/search-attributes';
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
    const run = await latestRun(client, workflowId);
    if (!run) continue;
    if (run.running) {
      const progress = await within(progressOf(client, workflowId), PROGRESS_TIMEOUT_MS);
      return { ...run, workflowId, progress: progress ?? null };
    }
    found ??= { ...run, workflowId, progress: null };
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
  run: { workflowId: string; runId: string; status: string } | null;
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
    run: run && { workflowId: run.workflowId, runId: run.runId, status: run.status },
    since: o.metadata.creationTimestamp ?? null,
    waitingOn: (live && waitingOf(live)) || null,
  };
}

/** Running runs of `namespace` (every namespace: undefined) that carry an armada object. */
function runningQuery(namespace: string | undefined): string {
  const kindsIn = RUN_KINDS.map((k) => `'${k}'`).join(', ');
  return [
    `ExecutionStatus = 'Running'`,
    `${ArmadaKind.name} IN (${kindsIn})`,
    ...(namespace === undefined ? [] : [`${ArmadaNamespace.name} = '${namespace}'`]),
  ].join(' AND ');
}

/**
 * The rows of `armadactl list`: every object of `namespace` (every namespace: undefined) on the
 * cluster with its current run (routeOf's `progress` route), then each running run whose object
 * is not on the cluster (started from a file): one row per object, its canary first when it has
 * one. Without a cluster (`objects` null) only the runs; without Temporal (`client` null) only
 * the objects, as their status says.
 */
export async function listRows(
  namespace: string | undefined,
  objects: readonly ClusterObject[] | null,
  client: Client | null,
): Promise<ListRow[]> {
  const all = objects ?? [];
  const rows = await inTurns(all, LOOKUPS_AT_ONCE, async (o) =>
    objectRow(o, client && (await currentRun(client, progressRuns(placeAmong(o, all))))),
  );
  if (!client) return rows;
  const seen = new Set(rows.map((r) => `${r.kind} ${r.namespace}/${r.name}`));
  const byObject = new Map<string, { row: ListRow; canary: boolean }>();
  for await (const info of client.workflow.list({ query: runningQuery(namespace) })) {
    const kind = info.typedSearchAttributes.get(ArmadaKind);
    const ns = info.typedSearchAttributes.get(ArmadaNamespace);
    const name = info.typedSearchAttributes.get(ArmadaName);
    if (!kind || !ns || !name) continue;
    const key = `${kind} ${ns}/${name}`;
    const canary = info.workflowId.endsWith('/canary');
    if (seen.has(key) || (byObject.has(key) && !canary)) continue;
    byObject.set(key, {
      canary,
      row: {
        kind,
        namespace: ns,
        name,
        from: 'file',
        state: 'reconciling',
        phase: info.typedSearchAttributes.get(ArmadaPhase) ?? null,
        run: { workflowId: info.workflowId, runId: info.runId, status: info.status.name },
        since: info.startTime.toISOString(),
        waitingOn: null,
      },
    });
  }
  const fromFiles = await inTurns([...byObject.values()], LOOKUPS_AT_ONCE, async ({ row }) => {
    const progress = await within(progressOf(client, row.run!.workflowId), PROGRESS_TIMEOUT_MS);
    if (!progress) return row;
    const phase = shownPhase(progress);
    return {
      ...row,
      phase,
      state: readingOf(phase),
      waitingOn: waitingOf(progress) || null,
    };
  });
  return [...rows, ...fromFiles];
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

/**
 * `armadactl list` as a table: OBJECT (`amf/demo`), FROM, STATE, PHASE, RUN (Temporal's status,
 * lower case), AGE, WAITING ON; NAMESPACE first with `allNamespaces`. `now` sets the ages.
 */
export function formatList(rows: readonly ListRow[], allNamespaces: boolean, now = new Date()): string[] {
  const header = ['OBJECT', 'FROM', 'STATE', 'PHASE', 'RUN', 'AGE', 'WAITING ON'];
  const cells = rows.map((r) => [
    ...(allNamespaces ? [r.namespace] : []),
    shortRef(r.kind, r.name),
    r.from,
    r.state,
    r.phase ?? '-',
    r.run ? r.run.status.toLowerCase() : '-',
    r.since ? age((now.getTime() - Date.parse(r.since)) / 1000) : '-',
    r.waitingOn ?? '',
  ]);
  return table(allNamespaces ? ['NAMESPACE', ...header] : header, cells);
}

/** What `armadactl get -o json` prints: the object's status and its current run. */
export interface ObjectReport {
  object: ClusterObject | null;
  run: {
    workflowId: string;
    runId: string;
    status: string;
    specs: string | null;
    url: string;
    progress: AnyProgress | null;
  } | null;
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
  const run = report.run;
  if (!run) return [...lines, 'no run yet'];
  lines.push(
    `run ${run.workflowId} ${run.runId}: ${run.status.toLowerCase()}`,
    ...(run.specs ? [`  specs ${run.specs}`] : []),
    `  ${run.url}`,
    ...(run.progress
      ? formatProgress(run.progress).map((l) => `  ${l}`)
      : ['  (no progress: is a worker up?)']),
  );
  return lines;
}
