import type { Client } from '@temporalio/client';
import type { ArmadaChartSpec } from '../api/chart';
import type { ArmadaChartGroupSpec } from '../api/chart-group';
import type { DeployerSpec } from '../api/deployer';
import { GROUP, VERSION } from '../api/common';
import { kinds } from '../api/kinds';
import { previewRelease, type PreviewRequest } from '../activities/charts/preview';
import { latestRun, progressOf } from '../runs/control';
import type { StandaloneDocument } from '../runs/requests';
import type { Target } from '../runs/targets';
import { isCanary } from '../core/plan/progress-view';
import { formatSeconds } from '../core/plan/canary';
import { resolveDependencies } from '../core/plan/dependencies';
import { PlanError, planGroup, planManifest } from '../core/plan/manifest';
import type { ChartPlan, GroupPlan } from '../core/plan/plans';
import { objectWorkflowId } from '../core/plan/names';
import type { CanaryStepPreview, PreviewAction } from '../core/plan/preview';
import { rootMessage } from '../core/failures';
import type { AnyProgress } from '../core/progress';
import { describeRef, listObjects, placeAmong, type ClusterObject } from './cluster';
import { applicableDocuments, applicableOf, type Applicable } from './documents';
import { manifestDiff, type ObjectDiff } from './manifest-diff';
import { formatProblem, validateFiles, type FileObject } from './validate';
import { inTurns } from './turns';
import { within } from './watch';

/** One release a diff covers: the ArmadaChart that deploys it, and what its run is asked to do. */
export interface DiffItem extends PreviewRequest {
  /** `ArmadaChart default/web`. */
  object: string;
}

/** What a diff covers: its releases, the run it is compared with, and what it leaves out. */
export interface DiffScope {
  items: DiffItem[];
  /**
   * The workflow of the manifest (or standalone group) diffed whole: the releases its last run
   * deployed that the spec no longer lists are reported (unlisted).
   */
  previousRun?: string;
  /** What the diff does not cover, and why (a Deployer, `target_state: uninitialized`). */
  notes: string[];
}

type Mode = DiffItem['mode'];

/** What a run of an object with this target state does: deploy, uninstall, or nothing (null). */
function modeOf(targetState: string | undefined, deleting: boolean): Mode | null {
  if (deleting || targetState === 'uninstalled') return 'uninstall';
  return targetState === 'uninitialized' ? null : 'deploy';
}

/** The diff item of a chart a run deploys; `resourceNamespace` is the ArmadaChart's own. */
function chartItem(chart: Omit<ChartPlan, 'workflowId'>, resourceNamespace: string, mode: Mode): DiffItem {
  return {
    object: `ArmadaChart ${resourceNamespace}/${chart.chart}`,
    release: chart.release,
    namespace: chart.namespace,
    spec: chart.spec,
    chartObject: { name: chart.chart, namespace: resourceNamespace },
    mode,
    ...(chart.dependencies && { dependencies: chart.dependencies }),
  };
}

const nothingToDo = (what: string) => `${what}: target_state is uninitialized; a run does nothing`;

/** A Deployer in a diff's scope (standalone, or listed by a group): noted, not diffed. */
const deployerNote = (namespace: string, name: string) =>
  `Deployer ${namespace}/${name}: not diffed, it has no Helm release (armadactl status dpl/${name})`;

/** The notes for the Deployers a plan's groups roll out. */
const groupDeployerNotes = (namespace: string, groups: readonly GroupPlan[]) =>
  groups.flatMap((g) => (g.deployers ?? []).map((d) => deployerNote(namespace, d.name)));

/**
 * What a diff of `applicable` covers (a file's documents, or the cluster's): a manifest's charts,
 * in plan order, with its mode; else each standalone ArmadaChart. Deployers have no Helm release
 * and are noted, not diffed. `deleting`: the object is being deleted, so its run uninstalls.
 * Throws PlanError when a manifest does not resolve.
 */
export function scopeOf(applicable: Applicable, deleting = false): DiffScope {
  if (applicable.kind === 'ArmadaManifest') {
    const docs = applicable.manifest;
    const { namespace } = docs;
    const what = `ArmadaManifest ${namespace}/${docs.manifest.name}`;
    const mode = modeOf(docs.manifest.spec.target_state, deleting);
    const plan = planManifest(docs);
    if (!mode) return { items: [], notes: [nothingToDo(what)] };
    return {
      items: plan.groups.flatMap((g) => g.charts.map((c) => chartItem(c, namespace, mode))),
      ...(mode === 'deploy' && {
        previousRun: objectWorkflowId('ArmadaManifest', namespace, docs.manifest.name),
      }),
      notes: groupDeployerNotes(namespace, plan.groups),
    };
  }
  return applicable.objects.reduce<DiffScope>(
    (s, doc) => addStandalone(s, doc, deleting, applicable.charts),
    { items: [], notes: [] },
  );
}

/**
 * A standalone object into a scope: an ArmadaChart's release (its `dependencies` resolved among
 * `charts`), or a note for a Deployer. Throws PlanError when a dependency does not resolve.
 */
function addStandalone(
  scope: DiffScope,
  doc: StandaloneDocument,
  deleting: boolean,
  charts: Readonly<Record<string, ArmadaChartSpec>>,
): DiffScope {
  const what = `${doc.kind} ${doc.namespace}/${doc.name}`;
  if (doc.kind === 'Deployer') {
    scope.notes.push(deployerNote(doc.namespace, doc.name));
    return scope;
  }
  const mode = modeOf(doc.spec.target_state, deleting);
  if (!mode) {
    scope.notes.push(nothingToDo(what));
    return scope;
  }
  const { dependencies, problems } = resolveDependencies(doc.name, { ...charts, [doc.name]: doc.spec });
  if (problems.length) throw new PlanError(problems);
  const { release, namespace } = doc.spec;
  scope.items.push(
    chartItem(
      { chart: doc.name, release, namespace, spec: doc.spec, ...(dependencies && { dependencies }) },
      doc.namespace,
      mode,
    ),
  );
  return scope;
}

/** A cluster object as the document readers give it (applicableOf), when its spec is valid. */
function validDocument(o: ClusterObject): FileObject[] {
  const parsed = kinds[o.kind].spec.safeParse(o.spec);
  if (!parsed.success) return [];
  const object = { apiVersion: `${GROUP}/${VERSION}`, kind: o.kind, metadata: o.metadata, spec: o.spec };
  return [{ doc: 0, object, kind: o.kind, name: o.metadata.name, spec: parsed.data }];
}

/**
 * What a diff of an object on the cluster covers: the releases of the run that drives it (its
 * manifest's, its group's, or its own), narrowed to the object's own charts, in that run's mode
 * (uninstall when the driver is being deleted or targets `uninstalled`). Read through the kube
 * client of the context (asCaller: the caller's kubeconfig). A Deployer has no Helm release: an
 * error.
 */
export async function scopeOfObject(target: Target): Promise<DiffScope> {
  const { kind, namespace, name } = target;
  const objects = await listObjects(namespace);
  const find = (k: string, n: string) => objects.find((o) => o.kind === k && o.metadata.name === n);
  const object = find(kind, name);
  if (!object) throw new Error(`${describeRef(target)} is not on the cluster; to diff a file, use -f FILE`);
  if (object.kind === 'Deployer')
    throw new Error(`${describeRef(target)} has no Helm release to diff; see armadactl status dpl/${name}`);
  const place = placeAmong(object, objects);
  const driver = place.manifest
    ? find('ArmadaManifest', place.manifest)!
    : place.group
      ? find('ArmadaChartGroup', place.group)!
      : object;
  const driverRef = { kind: driver.kind, namespace, name: driver.metadata.name };
  if (!validDocument(driver).length)
    throw new Error(
      `${describeRef(driverRef)} is not valid (see its Invalid condition): there is no run to diff`,
    );
  const deleting = driver.metadata.deletionTimestamp !== undefined;
  const docs = objects.flatMap(validDocument);
  const source = `namespace ${namespace} of the cluster`;
  let scope: DiffScope;
  if (driver.kind === 'ArmadaChartGroup') {
    const spec = kinds.ArmadaChartGroup.spec.parse(driver.spec) as ArmadaChartGroupSpec;
    const specsOf = <T>(kind: 'ArmadaChart' | 'Deployer') =>
      Object.fromEntries(docs.filter((d) => d.kind === kind).map((d) => [d.name, d.spec as T]));
    const mode = modeOf(spec.target_state, deleting);
    const group = planGroup({
      namespace,
      name: driverRef.name,
      spec,
      charts: specsOf<ArmadaChartSpec>('ArmadaChart'),
      deployers: specsOf<DeployerSpec>('Deployer'),
    });
    scope = mode
      ? {
          items: group.charts.map((c) => chartItem(c, namespace, mode)),
          ...(mode === 'deploy' && {
            previousRun: objectWorkflowId('ArmadaChartGroup', namespace, driverRef.name),
          }),
          notes: groupDeployerNotes(namespace, [group]),
        }
      : { items: [], notes: [nothingToDo(describeRef(driverRef))] };
  } else if (driver.kind === 'ArmadaManifest') {
    scope = scopeOf(applicableOf(docs, source, namespace, driverRef.name), deleting);
  } else {
    const spec = kinds.ArmadaChart.spec.parse(driver.spec) as ArmadaChartSpec;
    const charts = Object.fromEntries(
      docs.filter((d) => d.kind === 'ArmadaChart').map((d) => [d.name, d.spec as ArmadaChartSpec]),
    );
    scope = addStandalone(
      { items: [], notes: [] },
      { kind: 'ArmadaChart', namespace, name, spec },
      deleting,
      charts,
    );
  }
  if (driver === object) return scope;
  // A group or chart of a larger run: its own charts only, and no verdict on the run's others.
  const own = new Set(kind === 'ArmadaChartGroup' ? (object.spec.chart_group as string[]) : [name]);
  return { items: scope.items.filter((i) => own.has(i.chartObject.name)), notes: scope.notes };
}

/** A release the last run deployed that the spec no longer lists: no run uninstalls it. */
export interface UnlistedRelease {
  chart: string;
  release: string;
}

/** One release of a diff: what its run would do, and the objects it would change. */
export interface ReleaseDiff {
  object: string;
  /** `namespace/release`. */
  release: string;
  mode: Mode;
  action: PreviewAction | null;
  /** The release's current revision; null when there is none (or it could not be read). */
  revision: number | null;
  reason: string | null;
  /** For an install, upgrade or uninstall: each object that changes, Secrets masked. */
  objects: ObjectDiff[];
  /** A canary upgrade's steps. */
  canary: CanaryStepPreview[] | null;
  /** Why the release could not be previewed; then `action` is null. */
  error: string | null;
}

/** What `armadactl diff -o json` prints. */
export interface DiffReport {
  releases: ReleaseDiff[];
  unlisted: UnlistedRelease[];
  notes: string[];
}

/** How many releases are previewed at once: each runs a few helm processes. */
const PREVIEWS_AT_ONCE = 4;

/** One item previewed (see previewRelease); a failure is kept in the report, not thrown. */
async function diffRelease(item: DiffItem): Promise<ReleaseDiff> {
  const base = { object: item.object, release: `${item.namespace}/${item.release}`, mode: item.mode };
  try {
    const change = await previewRelease(item);
    return {
      ...base,
      action: change.action,
      revision: change.revision,
      reason: change.reason,
      objects: manifestDiff(change.live, change.wanted, item.namespace),
      canary: change.canary ?? null,
      error: null,
    };
  } catch (err) {
    const error = `${item.object} (release ${base.release}): ${rootMessage(err)}`;
    return { ...base, action: null, revision: null, reason: null, objects: [], canary: null, error };
  }
}

/**
 * The releases the latest run of `workflowId` deployed (or found unchanged) that `items` no
 * longer lists, from that run's progress (none when it never ran); with a note instead when the
 * run's progress cannot be read within 5 s.
 */
async function unlistedSince(
  client: Client,
  workflowId: string,
  items: readonly DiffItem[],
): Promise<{ unlisted: UnlistedRelease[]; note?: string }> {
  if (!(await latestRun(client, workflowId))) return { unlisted: [] };
  const asked = await within(
    progressOf(client, workflowId).then(
      (progress) => ({ progress }),
      (err: unknown) => ({ error: rootMessage(err) }),
    ),
    5000,
  );
  if (asked && 'progress' in asked) return { unlisted: unlistedReleases(asked.progress, items) };
  const why = asked?.error ?? 'its progress did not answer within 5 s (is a worker up?)';
  return {
    unlisted: [],
    note: `releases the last run of ${workflowId} deployed that the spec no longer lists are not shown: ${why}`,
  };
}

/**
 * The releases a run's progress shows deployed (or unchanged) that none of `items` deploys:
 * a manifest's run leaves a release it stops listing installed (docs/how-to/operate-runs.md, "Day-two operations").
 */
export function unlistedReleases(
  progress: AnyProgress,
  items: readonly Pick<DiffItem, 'namespace' | 'release'>[],
): UnlistedRelease[] {
  if (isCanary(progress)) return [];
  const listed = new Set(items.map((i) => `${i.namespace}/${i.release}`));
  return progress.groups
    .flatMap((g) => g.charts)
    .filter(
      (c) =>
        (c.state === 'deployed' || c.state === 'unchanged') && !listed.has(`${c.namespace}/${c.release}`),
    )
    .map((c) => ({ chart: c.chart, release: `${c.namespace}/${c.release}` }));
}

/**
 * Previews every release of `scope` (previewRelease, at most four at once) and, for a whole
 * manifest or group, the releases its last run deployed that it no longer lists (`connectTemporal`
 * is asked only then; its failure is a note).
 */
export async function diffScope(
  scope: DiffScope,
  connectTemporal: () => Promise<{ client: Client; close: () => Promise<void> }>,
): Promise<DiffReport> {
  const releases = await inTurns(scope.items, PREVIEWS_AT_ONCE, diffRelease);
  const report: DiffReport = { releases, unlisted: [], notes: [...scope.notes] };
  if (!scope.previousRun) return report;
  let temporal;
  try {
    temporal = await connectTemporal();
  } catch (err) {
    report.notes.push(`the last run of ${scope.previousRun} was not read: ${rootMessage(err)}`);
    return report;
  }
  try {
    const { unlisted, note } = await unlistedSince(temporal.client, scope.previousRun, scope.items);
    report.unlisted = unlisted;
    if (note) report.notes.push(note);
  } finally {
    await temporal.close();
  }
  return report;
}

/**
 * `diff`'s exit code, as diff(1) has it: 2 when a release could not be previewed (trouble wins),
 * 1 when a run would change something (or fail without writing: `refused`), 0 when every
 * release is unchanged. Unlisted releases change nothing: no run touches them.
 */
export function diffExitCode(report: Pick<DiffReport, 'releases'>): 0 | 1 | 2 {
  if (report.releases.some((r) => r.error !== null)) return 2;
  return report.releases.some((r) => r.action !== 'unchanged') ? 1 : 0;
}

/** `hold 1m`, `approval`, or nothing (the final step). */
const holdOf = (s: CanaryStepPreview) =>
  s.approval ? 'approval' : s.holdSeconds !== undefined ? `hold ${formatSeconds(s.holdSeconds)}` : '';

/** A canary's steps as lines: `step 1  10 %  hold 1m  web-canary 1 / web 9`. */
function canaryLines(steps: readonly CanaryStepPreview[]): string[] {
  if (steps.length && !steps[0].splits.length)
    return ['  canary: the new revision has no Deployments; the run upgrades at once'];
  const rows = steps.map((s) => [
    `step ${s.step}`,
    `${s.percent} %`,
    holdOf(s),
    s.splits
      .map((p) => `${p.canary} ${p.replicas.canary} / ${p.stable ?? '(new)'} ${p.replicas.stable}`)
      .join(', '),
  ]);
  const widths = rows[0].map((_, i) => Math.max(...rows.map((r) => r[i].length)));
  return [
    '  canary steps (copies of the new revision stepped up while the stable side steps down):',
    ...rows.map((r) => `    ${r.map((cell, i) => cell.padEnd(widths[i])).join('  ')}`.trimEnd()),
  ];
}

/** The verb of an action in a line: `install`, `upgrade`, ... */
const ACTION_WORDS: Record<PreviewAction, string> = {
  install: 'install',
  upgrade: 'upgrade',
  unchanged: 'unchanged',
  uninstall: 'uninstall',
  recover: 'recover first',
  refused: 'refused',
};

/**
 * The report as text: per release a line `ArmadaChart default/web → apps/web: upgrade (why)`,
 * then its objects' unified diffs and a canary's steps; the unlisted releases; the notes; and a
 * count per action.
 */
export function formatDiff(report: DiffReport): string[] {
  const lines: string[] = [];
  for (const r of report.releases) {
    const head = `${r.object} → ${r.release}`;
    if (r.error !== null) {
      lines.push(`${head}: error: ${r.error}`);
      continue;
    }
    lines.push(`${head}: ${ACTION_WORDS[r.action!]} (${r.reason})`);
    for (const o of r.objects) lines.push(...o.patch.trimEnd().split('\n'));
    if (r.canary) lines.push(...canaryLines(r.canary));
  }
  for (const u of report.unlisted)
    lines.push(
      `release ${u.release} (chart ${u.chart}): no longer listed; a run leaves it installed (helm uninstall it, or list it again)`,
    );
  lines.push(...report.notes.map((n) => `note: ${n}`));
  const counts = new Map<string, number>();
  for (const r of report.releases) {
    const key = r.error !== null ? 'error' : ACTION_WORDS[r.action!];
    counts.set(key, (counts.get(key) ?? 0) + 1);
  }
  const summary = [...counts].map(([what, n]) => `${n} ${what}`).join(', ');
  lines.push(
    `${report.releases.length} release${report.releases.length === 1 ? '' : 's'}${summary ? `: ${summary}` : ''}`,
  );
  return lines;
}

/** What a diff of a file covers, once the file is valid (every problem in the error otherwise). */
export async function scopeOfFile(file: string, namespace: string, manifest?: string): Promise<DiffScope> {
  const report = await validateFiles([file]);
  if (report.problems.length)
    throw new Error(['not diffed:', ...report.problems.map(formatProblem)].join('\n'));
  return scopeOf(await applicableDocuments(file, namespace, manifest));
}
