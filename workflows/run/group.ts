import { driveRelease, writtenRelease } from '../release-driver';
import { rootMessage } from '../../core/failures';
import { chartState } from '../../core/plan/ending';
import { chartRunOf, groupEndState } from '../../core/plan/run';
import type { GroupOutcome } from '../../core/contracts/workflows';
import type { ChartPlan, GroupPlan } from '../../core/plan/plans';
import type { RunControl } from '../control';
import type { CanaryChildren, RunProgress } from './progress';
import type { RunReports } from './reports';

/** What a run's groups and charts work with: its control, its canary children, what it shows. */
export interface RunParts {
  control: RunControl;
  canaries: CanaryChildren;
  shown: RunProgress;
  /** What users see of the run: status, Events, notifications. */
  told: RunReports;
  /** Namespace of the plan's custom resources (its charts' status, their canaries' IDs). */
  namespace: string;
}

/**
 * One group's charts, in the run itself: one after another, stopping at the first failure
 * (`sequenced`), or all at once. A pause holds before the next chart; a rollback, a
 * cancellation or a re-plan starts no more charts and lets running ones finish.
 */
export async function deployGroup(group: GroupPlan, parts: RunParts): Promise<GroupOutcome> {
  const outcome: GroupOutcome = { group: group.name, outcomes: [], failed: [], stopped: false };
  parts.shown.show((p) => {
    p.group = group.name;
    parts.shown.group(group.name).state = 'running';
  });
  parts.told.groupStarted(group);
  const deploy = (chart: ChartPlan) => deployChart(group.name, chart, parts, outcome);
  if (!group.sequenced) {
    if (await parts.control.mayContinue()) await Promise.all(group.charts.map(deploy));
    else outcome.stopped = true;
  } else {
    for (const chart of group.charts) {
      if (!(await parts.control.mayContinue())) {
        outcome.stopped = true;
        break;
      }
      await deploy(chart);
      if (outcome.failed.length) break;
    }
  }
  parts.shown.show(() => (parts.shown.group(group.name).state = groupEndState(outcome)));
  parts.told.groupEnded(group, outcome);
  return outcome;
}

/** One chart's release, driven by the release driver; its outcome or failure goes to the group's. */
async function deployChart(
  group: string,
  chart: ChartPlan,
  { control, canaries, shown, told, namespace }: RunParts,
  outcome: GroupOutcome,
): Promise<void> {
  const row = shown.chart(group, chart.chart);
  shown.show(() => (row.state = 'deploying'));
  told.chartStarted(chart);
  const canary = canaries.open();
  try {
    const done = await driveRelease(chartRunOf(chart, namespace), control, canary);
    outcome.outcomes.push(done);
    told.chartDone(done);
    shown.show(() => Object.assign(row, { state: chartState(done), revision: done.revision ?? undefined }));
  } catch (err) {
    const error = rootMessage(err);
    outcome.failed.push({ chart: chart.chart, error, written: writtenRelease(err) });
    told.chartFailed(chart, error);
    shown.show(() => Object.assign(row, { state: 'failed', error }));
  } finally {
    canaries.close(canary);
  }
}
