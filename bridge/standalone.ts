import { WorkflowNotFoundError } from '@temporalio/client';
import { latestRun } from '../runs/control';
import { chartRun } from '../runs/requests';
import { objectWorkflowId, releaseWorkflowId } from '../workflows/plan/names';
import { generationIn, type RunMemo } from '../workflows/plan/specs';
import { ArmadaKind, ArmadaName, ArmadaNamespace } from '../workflows/search-attributes';
import type { BridgeContext } from './reconcile';
import { startObjectRun } from './start';
import { chartRelease, ownedKeys, parseKey, specsOf, validSpec, type ObjectView, type Views } from './view';

/**
 * What a manifest's charts and groups left behind while they had no owner yet.
 *
 * `kubectl apply -f dir/` creates files in name order, so a chart can arrive before the group
 * that lists it, and a group before its manifest. The bridge then runs each on its own (a chart:
 * workflow `helm:<namespace>/<release>`; a group: `ArmadaChartGroup:<namespace>/<name>`, its
 * charts as children under the same release IDs), installing the *unprefixed* release
 * `<release>`, while the manifest deploys `<release_prefix>-<release>`.
 *
 * The rule: once a manifest with a release_prefix lists a chart (through a group), the chart gives
 * up the unprefixed release that a standalone run of its own (or of the group listing it) installed.
 * Before the manifest's run starts or re-plans, for each group it lists the group's own run is
 * cancelled if it still runs, and for each chart the latest run of `helm:<namespace>/<release>`
 * is looked at:
 * - none, or one this chart's standalone runs did not start (its memo names no `ArmadaChart/<chart>`,
 *   or it ran for another namespace's object): left alone;
 * - a release another object claims now (a chart whose release is that unprefixed one): left alone;
 * - a deploy still running: cancelled; looked at again when it ends;
 * - a deploy that ended: uninstalled by an uninstall run of the chart (same workflow ID, the lock);
 * - that uninstall completed: done. Failed: run again.
 *
 * Only the charts and groups that may have run on their own (BridgeContext.maybeRanAlone) are
 * looked at, and each is forgotten once nothing of it is left to clear: a manifest reconciled
 * again and again (its charts' status writes, resyncs) asks Temporal nothing.
 *
 * Returns whether anything is still being cleared; the manifest's run then waits (the bridge
 * reconciles the manifest again when each of these runs ends), so a chart's status is written
 * by the uninstall first and by the manifest's run last.
 */
export async function clearStandaloneLeftovers(
  ctx: BridgeContext,
  manifest: ObjectView<'ArmadaManifest'>,
): Promise<boolean> {
  if (!manifest.releasePrefix) return false; // the manifest deploys the very releases they did
  const { groupRuns, groups, charts } = standaloneSuspects(ctx.objects, manifest, ctx.maybeRanAlone);
  if (!groups.length && !charts.length) return false;
  // An invalid chart stays a suspect: the manifest cannot run until it is valid again.
  const validCharts = charts.filter((c) => c.parsed.valid);
  const holders = validCharts.length ? releaseHolders(ctx.objects) : new Map<string, string[]>();
  const pending = (
    await Promise.all([
      ...groups.map((g) =>
        cancelRunning(ctx, objectWorkflowId('ArmadaChartGroup', g.namespace, g.name), manifest.key),
      ),
      ...validCharts.map((c) => clearChart(ctx, c, { manifestKey: manifest.key, groupRuns, holders })),
    ])
  ).some(Boolean);
  // Forgotten together, once nothing is pending: a group's run being cancelled may still start
  // a child run of a chart that was found clear.
  if (!pending) for (const view of [...groups, ...validCharts]) ctx.maybeRanAlone.delete(view.key);
  return pending;
}

/** Notes a chart or group that reconcile runs on its own, and a group's charts with it. */
export function noteStandalone(ctx: BridgeContext, view: ObjectView): void {
  if (view.kind !== 'ArmadaChart' && view.kind !== 'ArmadaChartGroup') return;
  ctx.maybeRanAlone.add(view.key);
  // Its charts' releases a manifest would prefix; its Deployers' Deployments keep their names.
  for (const key of ownedKeys(view)) if (parseKey(key).kind === 'ArmadaChart') ctx.maybeRanAlone.add(key);
}

/**
 * The cached groups a manifest lists and the cached charts they list that may have run on their
 * own (`suspects` holds their keys), and the workflow IDs of all its groups' own runs (a chart
 * run whose parent is one of them was started by a standalone group).
 */
export function standaloneSuspects(
  objects: Views,
  manifest: ObjectView<'ArmadaManifest'>,
  suspects: ReadonlySet<string>,
): { groupRuns: string[]; groups: ObjectView<'ArmadaChartGroup'>[]; charts: ObjectView<'ArmadaChart'>[] } {
  const { namespace } = manifest;
  const cached = <K extends 'ArmadaChartGroup' | 'ArmadaChart'>(kind: K, names: readonly string[]) =>
    [...new Set(names)]
      .map((name) => objects(kind).get(namespace, name))
      .filter((v): v is ObjectView<K> => v !== undefined);
  const groups = cached('ArmadaChartGroup', manifest.lists);
  const charts = cached(
    'ArmadaChart',
    groups.flatMap((g) => g.lists),
  );
  const suspect = (view: ObjectView) => suspects.has(view.key);
  return {
    groupRuns: groups.map((g) => objectWorkflowId('ArmadaChartGroup', namespace, g.name)),
    groups: groups.filter(suspect),
    charts: charts.filter(suspect),
  };
}

/** The keys of the charts (all namespaces) that deploy each release now, by `namespace/release`. */
export function releaseHolders(objects: Views): Map<string, string[]> {
  const holders = new Map<string, string[]>();
  for (const chart of objects('ArmadaChart').list()) {
    const deploys = chartRelease(objects, chart);
    if (!deploys) continue;
    const release = `${deploys.namespace}/${deploys.release}`;
    holders.set(release, [...(holders.get(release) ?? []), chart.key]);
  }
  return holders;
}

/** Cancels the run of `workflowId` if it runs; true while it does. */
async function cancelRunning(ctx: BridgeContext, workflowId: string, key: string): Promise<boolean> {
  const latest = await latestRun(ctx.client, workflowId);
  if (!latest?.running) return false;
  try {
    await ctx.client.workflow.getHandle(workflowId, latest.runId).cancel();
  } catch (err) {
    if (!(err instanceof WorkflowNotFoundError)) throw err; // ended meanwhile
  }
  ctx.log('info', 'cancelled a standalone run: a manifest lists its object now', { key, workflowId });
  ctx.afterRun(workflowId, key);
  return true;
}

/** One chart's unprefixed release (see clearStandaloneLeftovers); true while it is being cleared. */
async function clearChart(
  ctx: BridgeContext,
  chart: ObjectView<'ArmadaChart'>,
  opts: {
    /** The manifest's queue key, reconciled again when a run cleared here ends. */
    manifestKey: string;
    groupRuns: readonly string[];
    holders: ReadonlyMap<string, readonly string[]>;
  },
): Promise<boolean> {
  const { namespace, name } = chart;
  const spec = validSpec(chart);
  const own = { namespace: spec.namespace, release: spec.release };
  const now = chartRelease(ctx.objects, chart);
  if (now?.namespace === own.namespace && now.release === own.release) return false;
  const claimant = opts.holders.get(`${own.namespace}/${own.release}`)?.some((key) => key !== chart.key);
  if (claimant) return false;
  const workflowId = releaseWorkflowId(own.namespace, own.release);
  let description;
  try {
    description = await ctx.client.workflow.getHandle(workflowId).describe();
  } catch (err) {
    if (err instanceof WorkflowNotFoundError) return false; // never installed on its own
    throw err;
  }
  const memo = (description.memo ?? {}) as unknown as RunMemo;
  if (generationIn(memo.specs, 'ArmadaChart', name) === undefined) return false;
  const attributes = description.typedSearchAttributes;
  const parent = description.parentExecution?.workflowId;
  const itsOwn = parent
    ? opts.groupRuns.includes(parent)
    : attributes.get(ArmadaKind) === 'ArmadaChart' &&
      attributes.get(ArmadaNamespace) === namespace &&
      attributes.get(ArmadaName) === name;
  if (!itsOwn) return false;
  const running = description.status.name === 'RUNNING';
  if (memo.mode === 'uninstall') {
    if (running) {
      ctx.afterRun(workflowId, opts.manifestKey);
      return true;
    }
    if (description.status.name === 'COMPLETED') return false;
  } else if (running) {
    return cancelRunning(ctx, workflowId, opts.manifestKey);
  }
  const run = chartRun({ kind: 'ArmadaChart', namespace, name, spec }, 'uninstall', specsOf([chart]));
  await startObjectRun(ctx, chart.key, run, {
    follow: opts.manifestKey,
    message: 'uninstalling a standalone release: a manifest lists its chart now',
    fields: {
      manifest: opts.manifestKey,
      release: `${own.namespace}/${own.release}`,
      deploys: now && `${now.namespace}/${now.release}`,
      after: `${description.status.name.toLowerCase()} ${memo.mode} run ${description.runId}`,
    },
  });
  return true;
}
