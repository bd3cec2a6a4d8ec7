import { WorkflowExecutionAlreadyStartedError, WorkflowNotFoundError } from '@temporalio/client';
import { kinds } from '../api/kinds';
import type { ArmadaChartSpec } from '../api/chart';
import type { ArmadaChartGroupSpec } from '../api/chart-group';
import type { ArmadaManifestSpec } from '../api/manifest';
import { latestRun } from '../runs/control';
import { chartRun, startRun } from '../runs/requests';
import { objectWorkflowId, releaseWorkflowId } from '../workflows/plan/names';
import { formatSpecs, generationIn, type RunMemo } from '../workflows/plan/specs';
import { ArmadaKind, ArmadaName, ArmadaNamespace } from '../workflows/search-attributes';
import type { BridgeContext } from './reconcile';
import type { ArmadaObject } from './watch';

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
 * Returns whether anything is still being cleared; the manifest's run then waits (the bridge
 * reconciles the manifest again when each of these runs ends), so a chart's status is written
 * by the uninstall first and by the manifest's run last.
 */
export async function clearStandaloneLeftovers(
  ctx: BridgeContext,
  manifest: ArmadaObject,
  opts: {
    /** The manifest's queue key, reconciled again when a run cleared here ends. */
    key: string;
    /** The release a chart deploys now (with its owners' prefix). */
    releaseOf(chart: ArmadaObject): { namespace: string; release: string };
  },
): Promise<boolean> {
  const { namespace } = manifest.metadata;
  const spec = manifest.spec as ArmadaManifestSpec;
  if (!spec.release_prefix) return false; // the manifest deploys the very releases they did
  const groups = (spec.chart_groups ?? [])
    .map((name) => ctx.objects('ArmadaChartGroup').get(namespace, name))
    .filter((g): g is ArmadaObject => g !== undefined);
  const groupRuns = groups.map((g) => objectWorkflowId('ArmadaChartGroup', namespace, g.metadata.name));
  const charts = [...new Set(groups.flatMap((g) => (g.spec as ArmadaChartGroupSpec).chart_group ?? []))]
    .map((name) => ctx.objects('ArmadaChart').get(namespace, name))
    .filter((c): c is ArmadaObject => c !== undefined);
  const pending = await Promise.all([
    ...groupRuns.map((id) => cancelRunning(ctx, id, opts.key)),
    ...charts.map((chart) => clearChart(ctx, chart, groupRuns, opts)),
  ]);
  return pending.some(Boolean);
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
  chart: ArmadaObject,
  groupRuns: readonly string[],
  opts: Parameters<typeof clearStandaloneLeftovers>[2],
): Promise<boolean> {
  const { namespace, name } = chart.metadata;
  const spec = kinds.ArmadaChart.spec.parse(chart.spec) as ArmadaChartSpec;
  const own = { namespace: spec.namespace, release: spec.release };
  const now = opts.releaseOf(chart);
  if (now.namespace === own.namespace && now.release === own.release) return false;
  const claimant = ctx
    .objects('ArmadaChart')
    .list()
    .find((c) => {
      if (c.metadata.namespace === namespace && c.metadata.name === name) return false;
      const r = opts.releaseOf(c);
      return r.namespace === own.namespace && r.release === own.release;
    });
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
    ? groupRuns.includes(parent)
    : attributes.get(ArmadaKind) === 'ArmadaChart' &&
      attributes.get(ArmadaNamespace) === namespace &&
      attributes.get(ArmadaName) === name;
  if (!itsOwn) return false;
  const running = description.status.name === 'RUNNING';
  if (memo.mode === 'uninstall') {
    if (running) {
      ctx.afterRun(workflowId, opts.key);
      return true;
    }
    if (description.status.name === 'COMPLETED') return false;
  } else if (running) {
    return cancelRunning(ctx, workflowId, opts.key);
  }
  const run = chartRun(
    { kind: 'ArmadaChart', namespace, name, spec },
    'uninstall',
    formatSpecs([{ kind: 'ArmadaChart', name, generation: chart.metadata.generation }]),
  );
  try {
    await startRun(ctx.client, ctx.taskQueue, run);
  } catch (err) {
    // Another start won the race (the workflow ID is the lock): follow that run instead.
    if (!(err instanceof Error && err.cause instanceof WorkflowExecutionAlreadyStartedError)) throw err;
  }
  ctx.log('info', 'uninstalling a standalone release: a manifest lists its chart now', {
    key: opts.key,
    workflowId,
    chart: `${namespace}/${name}`,
    release: `${own.namespace}/${own.release}`,
    deploys: `${now.namespace}/${now.release}`,
    after: `${description.status.name.toLowerCase()} ${memo.mode} run ${description.runId}`,
  });
  ctx.metrics.runStarted(`ArmadaChart/${namespace}/${name}`, 'uninstall'); // the chart's queue key
  ctx.afterRun(workflowId, opts.key);
  return true;
}
