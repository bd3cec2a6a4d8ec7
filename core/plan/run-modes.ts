/**
 * The one-workflow run's modes and saga decisions (workflows/run/): which groups and charts a
 * deploy, an uninstall or a retry runs, in which order, and whether a run starts over.
 */

import { deployerMember } from './lockstep';
import type { ChartPlan, DeployerPlan, GroupPlan, ManifestPlan, Resume } from './plans';

export type RunMode = 'deploy' | 'uninstall';

/** The groups in the order the run takes them: the plan's, reversed to uninstall. */
export function groupsInOrder(plan: ManifestPlan, mode: RunMode): GroupPlan[] {
  return mode === 'uninstall' ? [...plan.groups].reverse() : plan.groups;
}

/**
 * A group's charts the run drives, in order: those a retry's failed run had not finished
 * (`finished`), a sequenced group's in reverse to uninstall (the chart deployed last goes first).
 */
export function chartsToRun(group: GroupPlan, mode: RunMode, finished: readonly string[] = []): ChartPlan[] {
  const charts = group.charts.filter((c) => !finished.includes(c.chart));
  return mode === 'uninstall' && group.sequenced ? charts.reverse() : charts;
}

/**
 * A group's Deployers the run rolls out: to uninstall, only a Deployer's own (a plan of one,
 * `standalone`: a group's uninstall leaves its Deployers, as the group workflow does); not those
 * a retry's failed run `finished` (by their member name).
 */
export function deployersToRun(
  group: GroupPlan,
  mode: RunMode,
  finished: readonly string[] = [],
): DeployerPlan[] {
  const deployers = group.deployers ?? [];
  if (mode === 'uninstall') return deployers.filter((d) => d.standalone);
  return deployers.filter((d) => !finished.includes(deployerMember(d.name)));
}

/**
 * Whether a group's approval gate is passed before it: never to uninstall, and not by a retry
 * that takes up the group (the failed run passed it, as it had started the group).
 */
export function gatedBefore(group: GroupPlan, mode: RunMode, resume?: Resume): boolean {
  return group.approval !== undefined && mode !== 'uninstall' && !resume?.finished[group.name];
}

/** What a run knows when it stops walking its groups, for whether it starts over. */
export interface ReplanFacts {
  /** Newer specs arrived (a re-plan signal). */
  replanned: boolean;
  failed: boolean;
  rollbackRequested: boolean;
  cancelled: boolean;
}

/**
 * A re-plan starts the run over with the newer specs, keeping what ran (no rollback), unless the
 * run failed, a rollback was asked for or it was cancelled: then it ends as those say.
 */
export function startsOver(f: ReplanFacts): boolean {
  return f.replanned && !f.failed && !f.rollbackRequested && !f.cancelled;
}
