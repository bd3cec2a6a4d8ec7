import { upsertSearchAttributes } from '@temporalio/workflow';
import { ArmadaPhase } from './search-attributes';
import { report, reportOffPath } from './status';
import { chartOutcomeStatus } from '../core/plan/ending';
import type { Approved } from '../core/control';
import type { ChartOutcome } from '../core/contracts/workflows';
import type { Progress } from '../core/progress';
import type { ChartPlan, ManifestPlan } from '../core/plan/plans';

/*
 * What a deploy writes in the status of the objects it deploys (the manifest, its groups, their
 * charts): one wording whichever run writes it, today's tree of workflows (manifest → group →
 * chart) or the one-workflow run (workflows/run/).
 */

/** A status write: in line (`report`) or off the run's path (`reportOffPath`). */
export type StatusWrite = typeof report | typeof reportOffPath;

/**
 * The manifest's phase: its `ArmadaPhase` search attribute, and its status with how far the
 * groups got (`progress`: the groups done of all, and the one that runs now).
 */
export async function reportManifestPhase(
  plan: ManifestPlan,
  progress: Progress,
  phase: string,
  message: string,
  write: StatusWrite = report,
): Promise<void> {
  upsertSearchAttributes([{ key: ArmadaPhase, value: phase }]);
  await write(
    'ArmadaManifest',
    plan.namespace,
    plan.manifest,
    phase,
    message,
    manifestProgress(plan, progress),
  );
}

/** The manifest status's `progress`: the groups done of all, and the one that runs now. */
export function manifestProgress(plan: ManifestPlan, progress: Progress) {
  const ready = progress.groups.filter((g) => g.state === 'done').length;
  const total = plan.groups.length;
  return {
    progress: {
      group: progress.group,
      ready,
      total,
      summary: `${ready}/${total}${progress.group ? ` ${progress.group}` : ''}`,
    },
  };
}

/** The manifest's message, and what its run waits on, while the gate before `group` waits. */
export function gateWaiting(group: string): { message: string; waitingOn: string } {
  return {
    message: `waiting for approval before group ${group}`,
    waitingOn: `approve before group ${group}`,
  };
}

/** Who approved the gate just passed, appended to the manifest's next message. */
export function approvedNote(gate: string, { by, reason }: Approved): string {
  return `; ${gate} approved by ${by ?? 'an operator'}${reason ? ` (${reason})` : ''}`;
}

/** A group's status as its charts start. */
export function reportGroupStarted(
  namespace: string,
  group: { name: string; charts: readonly unknown[] },
  uninstall: boolean,
  write: StatusWrite,
): Promise<unknown> {
  const phase = uninstall ? 'Uninstalling' : 'Deploying';
  return write('ArmadaChartGroup', namespace, group.name, phase, `${group.charts.length} charts`);
}

/** A run's link to put in a status, when it is not the writing run's own (a child's). */
type Linked = { workflow?: { id: string; run_id: string } };

/** A chart's status as its release is driven: where. */
export function reportChartDeploying(
  namespace: string,
  plan: ChartPlan,
  write: StatusWrite,
  linked: Linked = {},
): Promise<unknown> {
  return write(
    'ArmadaChart',
    namespace,
    plan.chart,
    'Deploying',
    `${plan.namespace}/${plan.release}`,
    linked,
  );
}

/** A chart's status once its release is driven: what was done, and the Helm revisions. */
export function reportChartDone(
  namespace: string,
  outcome: ChartOutcome,
  write: StatusWrite,
  linked: Linked = {},
): Promise<unknown> {
  const done = chartOutcomeStatus(outcome);
  return write('ArmadaChart', namespace, outcome.chart, done.phase, done.message, {
    ...linked,
    helm: done.helm,
  });
}

/** A chart's status once its release failed. */
export function reportChartFailed(
  namespace: string,
  chart: string,
  error: string,
  write: StatusWrite,
  linked?: Linked,
): Promise<unknown> {
  return write('ArmadaChart', namespace, chart, 'Failed', error, linked);
}
