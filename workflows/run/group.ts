import { driveRelease, writtenRelease } from '../release-driver';
import { rootMessage } from '../../core/failures';
import { chartState } from '../../core/plan/ending';
import { chartRunOf, groupEndState } from '../../core/plan/run';
import { chartsToRun, type RunMode } from '../../core/plan/run-modes';
import type { GroupOutcome } from '../../core/contracts/workflows';
import type { ChartPlan, GroupPlan } from '../../core/plan/plans';
import type { RunControl } from '../control';
import type { CanaryChildren, RunProgress } from './progress';

/** What a run's groups and charts work with: its control, its canary children, what it shows. */
export interface RunParts {
  control: RunControl;
  canaries: CanaryChildren;
  shown: RunProgress;
  /** Namespace of the plan's custom resources (its charts' status, their canaries' IDs). */
  namespace: string;
  /** Deploy, or uninstall every release (a sequenced group's charts in reverse). */
  mode: RunMode;
}

/**
 * One group's charts, in the run itself: one after another, stopping at the first failure
 * (`sequenced`), or all at once; to uninstall, a sequenced group's last chart first; a retry
 * leaves the charts its failed run `finished`. A pause holds before the next chart; a rollback,
 * a cancellation or a re-plan starts no more charts and lets running ones finish.
 */
export async function deployGroup(
  group: GroupPlan,
  parts: RunParts,
  finished?: readonly string[],
): Promise<GroupOutcome> {
  const outcome: GroupOutcome = { group: group.name, outcomes: [], failed: [], stopped: false };
  parts.shown.show((p) => {
    p.group = group.name;
    parts.shown.group(group.name).state = 'running';
  });
  const deploy = (chart: ChartPlan) => deployChart(group.name, chart, parts, outcome);
  const charts = chartsToRun(group, parts.mode, finished);
  if (!group.sequenced) {
    if (await parts.control.mayContinue()) await Promise.all(charts.map(deploy));
    else outcome.stopped = true;
  } else {
    for (const chart of charts) {
      if (!(await parts.control.mayContinue())) {
        outcome.stopped = true;
        break;
      }
      await deploy(chart);
      if (outcome.failed.length) break;
    }
  }
  parts.shown.show(() => (parts.shown.group(group.name).state = groupEndState(outcome)));
  return outcome;
}

/** One chart's release, driven by the release driver; its outcome or failure goes to the group's. */
async function deployChart(
  group: string,
  chart: ChartPlan,
  { control, canaries, shown, namespace, mode }: RunParts,
  outcome: GroupOutcome,
): Promise<void> {
  const row = shown.chart(group, chart.chart);
  shown.show(() => (row.state = 'deploying'));
  const canary = canaries.open(chart.chart);
  try {
    const done = await driveRelease(chartRunOf(chart, namespace, mode), control, canary);
    outcome.outcomes.push(done);
    shown.show(() => Object.assign(row, { state: chartState(done), revision: done.revision ?? undefined }));
  } catch (err) {
    const error = rootMessage(err);
    outcome.failed.push({ chart: chart.chart, error, written: writtenRelease(err) });
    shown.show(() => Object.assign(row, { state: 'failed', error }));
  } finally {
    canaries.close(canary);
  }
}
