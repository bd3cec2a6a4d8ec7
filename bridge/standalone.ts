import { WorkflowNotFoundError, type WorkflowExecutionDescription } from '@temporalio/client';
import { writeStatus } from '../kube/status';
import { describeLatest, latestRun } from '../runs/control';
import { rootMessage } from '../core/failures';
import { objectWorkflowId, releaseWorkflowId } from '../core/plan/names';
import type { RunMemo } from '../core/plan/specs';
import { decideLeftover, type LeftoverDecision } from '../core/bridge/decide-leftover';
import { standaloneChartWorkflowId } from '../core/plan/release-lock';
import { releaseRunOf } from './legacy-chart-run';
import { runOf } from './run-of';
import type { BridgeContext } from './context';
import { startObjectRun } from './start';
import {
  chartRelease,
  ownedKeys,
  parseKey,
  validSpec,
  type Cache,
  type ObjectView,
  type Views,
} from './view';

/**
 * What a manifest's charts and groups left behind while they had no owner yet.
 *
 * `kubectl apply -f dir/` creates files in name order, so a chart can arrive before the group
 * that lists it, and a group before its manifest. The bridge then runs each on its own (a chart:
 * workflow `ArmadaChart:<namespace>/<name>`, `helm:<namespace>/<release>` on an older build; a
 * group: `ArmadaChartGroup:<namespace>/<name>`, its charts as children under their release IDs
 * `helm:<namespace>/<release>`), installing the *unprefixed* release
 * `<release>`, while the manifest deploys `<release_prefix>-<release>`.
 *
 * The rule: once a manifest with a release_prefix lists a chart (through a group), the chart gives
 * up the unprefixed release that a standalone run of its own (or of the group listing it) installed.
 * Before the manifest's run starts or re-plans, for each group it lists the group's own run is
 * cancelled if it still runs, and for each chart the newest of its own runs that touched the
 * release is looked at (leftoverRun: under either ID above):
 * - none, or one this chart's standalone runs did not start (its memo names no `ArmadaChart/<chart>`,
 *   or it ran for another namespace's object): left alone;
 * - a release another object claims now (a chart whose release is that unprefixed one): left alone;
 * - a deploy still running: cancelled; looked at again when it ends;
 * - a deploy that ended: uninstalled by an uninstall run of the chart (its own workflow ID, the lock),
 *   acting as the ServiceAccount its standalone runs act as (its own service_account_name, else
 *   the bridge's default; never the manifest's): an uninstall as the worker itself was refused
 *   where the worker may not read a tenant's release Secrets, and, retried at once, looped;
 * - that uninstall completed: done. Failed: run again after a backoff (leftover-retries.ts: 1 s
 *   after the first failure, doubling up to 5 min; counted per chart in the bridge's memory, and
 *   started afresh for a new chart spec, which is tried at once). Until then the manifest waits,
 *   and its status (Ready False, Reconciling True, reason `StandaloneUninstallFailed`) and a
 *   Warning Event name the release, the failed run, its failure and when it is tried again.
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
  if (!manifest.releasePrefix) {
    // The manifest deploys the very releases they did: it waits for no uninstall.
    ctx.leftoverRetries.forgetBut(manifest.key, new Set());
    return false;
  }
  const { groupRuns, groups, charts } = standaloneSuspects(ctx.objects, manifest, ctx.maybeRanAlone);
  // A chart whose uninstall failed but that the manifest lists no more is not retried for it:
  // its entry and its timer go.
  ctx.leftoverRetries.forgetBut(manifest.key, new Set(charts.map((c) => c.key)));
  if (!groups.length && !charts.length) return false;
  // An invalid chart stays a suspect: the manifest cannot run until it is valid again.
  const validCharts = charts.filter((c) => c.parsed.valid);
  const holders = validCharts.length ? releaseHolders(ctx) : new Map<string, string[]>();
  const pending = (
    await Promise.all([
      ...groups.map((g) =>
        cancelRunning(ctx, objectWorkflowId('ArmadaChartGroup', g.namespace, g.name), manifest.key),
      ),
      ...validCharts.map((c) => clearChart(ctx, c, { manifest, groupRuns, holders })),
    ])
  ).some(Boolean);
  // Forgotten together, once nothing is pending: a group's run being cancelled may still start
  // a child run of a chart that was found clear.
  if (!pending)
    for (const view of [...groups, ...validCharts]) {
      ctx.maybeRanAlone.delete(view.key);
      ctx.leftoverRetries.forget(view.key);
    }
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

/**
 * The keys of the charts (all namespaces) that deploy each release now, by `namespace/release`:
 * one pass over the charts, each O(1) (chartRelease). Built once per manifest reconcile that has
 * charts to clear, which is rare: they are forgotten once cleared. Not read from the claims
 * index's `release` claims: those name the objects that run (a manifest, a standalone group),
 * not the chart, and leave out uninitialized ones, which hold their release here.
 */
export function releaseHolders(cache: Cache): Map<string, string[]> {
  const holders = new Map<string, string[]>();
  for (const chart of cache.objects('ArmadaChart').list()) {
    const deploys = chartRelease(cache, chart);
    if (!deploys) continue;
    const release = `${deploys.namespace}/${deploys.release}`;
    holders.set(release, [...(holders.get(release) ?? []), chart.key]);
  }
  return holders;
}

/** The reason of a manifest's status and Event while a leftover's uninstall waits for its retry. */
export const LEFTOVER_UNINSTALL_FAILED = 'StandaloneUninstallFailed';

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
    /** The manifest, reconciled again when a run cleared here ends, told when an uninstall failed. */
    manifest: ObjectView<'ArmadaManifest'>;
    groupRuns: readonly string[];
    holders: ReadonlyMap<string, readonly string[]>;
  },
): Promise<boolean> {
  const spec = validSpec(chart);
  const own = { namespace: spec.namespace, release: spec.release };
  const release = `${own.namespace}/${own.release}`;
  const now = chartRelease(ctx, chart);
  if (now?.namespace === own.namespace && now.release === own.release) return false;
  const claimant = opts.holders.get(release)?.some((key) => key !== chart.key);
  if (claimant) return false;
  const found = await leftoverRun(ctx, chart, own, opts.groupRuns);
  if (!found) return false; // never installed on its own
  const { description, decision } = found;
  const { workflowId } = description;
  const memo = (description.memo ?? {}) as unknown as RunMemo;
  switch (decision.do) {
    case 'none':
      return false;
    case 'follow':
      ctx.afterRun(workflowId, opts.manifest.key);
      return true;
    case 'cancel':
      return cancelRunning(ctx, workflowId, opts.manifest.key);
    case 'retry': {
      const failed = { run: description, ranWith: decision.ranWith };
      if (await retryLater(ctx, chart, release, failed, opts.manifest)) return true;
    }
  }
  // Its deploy ended, or its failed uninstall is due again.
  await startObjectRun(ctx, chart.key, runOf(ctx, chart, 'uninstall'), {
    follow: opts.manifest.key,
    message: 'uninstalling a standalone release: a manifest lists its chart now',
    fields: {
      manifest: opts.manifest.key,
      release,
      deploys: now && `${now.namespace}/${now.release}`,
      after: `${description.status.name.toLowerCase()} ${memo.mode} run ${description.runId}`,
    },
  });
  return true;
}

/**
 * The latest run that may have left a chart's unprefixed release `own`, and what to do about it
 * (decideLeftover): of the runs under the chart's own ID (`ArmadaChart:<ns>/<name>`, a plan of
 * one), under the release's (`helm:<ns>/<release>`: an older build's chart workflow, or a
 * standalone group's chart child of an older build) and of its manifest's groups that ran on
 * their own with the chart (`groupRuns`: a group's `deployRun` deploys its charts itself, with
 * no child run of theirs to find; its memo names the chart's spec), the newest that was the
 * chart's own; none: the release was never installed on its own.
 */
async function leftoverRun(
  ctx: BridgeContext,
  chart: ObjectView<'ArmadaChart'>,
  own: { namespace: string; release: string },
  groupRuns: readonly string[],
): Promise<{ description: WorkflowExecutionDescription; decision: LeftoverDecision } | undefined> {
  const chartIds = [standaloneChartWorkflowId(chart), releaseWorkflowId(own.namespace, own.release)];
  const described = await Promise.all(
    [...chartIds, ...groupRuns].map(async (id) => ({
      id,
      description: await describeLatest(ctx.client, id),
    })),
  );
  const found = described
    .flatMap(({ id, description }) => (description ? [{ id, description }] : []))
    .sort((a, b) => b.description.startTime.getTime() - a.description.startTime.getTime())
    .map(({ id, description }) => {
      const run = releaseRunOf(description);
      // A group's own run ran the chart in itself: as its child did before (groupWorkflow).
      const asRan = chartIds.includes(id) ? run : { ...run, parent: id };
      return { description, decision: decideLeftover(chart, groupRuns, asRan) };
    });
  return found.find((f) => !(f.decision.do === 'none' && f.decision.why === 'not its own')) ?? found[0];
}

/**
 * Whether the failed uninstall run of `chart`'s leftover `release` (`failed`, run with the
 * chart's generation `ranWith`) waits for its retry (see clearStandaloneLeftovers): not when the
 * chart's spec has changed since, nor once the backoff has passed. The first time a failed run
 * is seen, the manifest's status and a Warning Event say which release, why and when; the
 * manifest is queued again when the retry is due.
 */
async function retryLater(
  ctx: BridgeContext,
  chart: ObjectView<'ArmadaChart'>,
  release: string,
  { run: failed, ranWith }: { run: WorkflowExecutionDescription; ranWith: number },
  manifest: ObjectView<'ArmadaManifest'>,
): Promise<boolean> {
  if (ranWith !== chart.generation) return false;
  const failure = ctx.leftoverRetries.failure(
    chart.key,
    { runId: failed.runId, generation: ranWith, endedAt: (failed.closeTime ?? new Date()).getTime() },
    manifest.key,
  );
  if (failure.retryAt <= Date.now()) return false;
  if (!failure.told) {
    const error = await failureOf(ctx, failed);
    const message = `the uninstall of release ${release}, which ArmadaChart ${chart.name} installed on its own, failed (${failed.workflowId}, run ${failed.runId}; ${failure.failures} in a row): ${error}; tried again at ${new Date(failure.retryAt).toISOString()}`;
    const condition = (type: string, status: 'True' | 'False') => ({
      type,
      status,
      reason: LEFTOVER_UNINSTALL_FAILED,
      message,
    });
    await writeStatus({
      kind: manifest.kind,
      namespace: manifest.namespace,
      name: manifest.name,
      // kstatus: not Ready, and Reconciling, not Stalled: the bridge tries again by itself.
      status: {
        reason: message,
        conditions: [condition('Ready', 'False'), condition('Reconciling', 'True')],
      },
      event: { type: 'Warning', reason: LEFTOVER_UNINSTALL_FAILED, message },
    });
    failure.told = true;
    ctx.log('warn', 'a standalone release’s uninstall failed; trying again later', {
      manifest: manifest.key,
      chart: chart.key,
      workflowId: failed.workflowId,
      runId: failed.runId,
      failures: failure.failures,
      retryAt: new Date(failure.retryAt).toISOString(),
      error,
    });
  }
  ctx.leftoverRetries.wakeAt(chart.key, failure.retryAt, () => ctx.enqueue(manifest.key));
  return true;
}

/** Why a run that did not complete ended (its root failure's message). */
async function failureOf(ctx: BridgeContext, run: WorkflowExecutionDescription): Promise<string> {
  try {
    await ctx.client.workflow.getHandle(run.workflowId, run.runId, { followRuns: false }).result();
    return 'it completed';
  } catch (err) {
    return rootMessage(err);
  }
}
