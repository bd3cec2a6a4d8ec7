import { driveRelease, writtenRelease } from '../release-driver';
import { rootMessage } from '../../core/failures';
import { chartState } from '../../core/plan/ending';
import { chartRunOf, groupEndState } from '../../core/plan/run';
import { chartsToRun, deployersToRun } from '../../core/plan/run-modes';
import type { GroupOutcome } from '../../core/contracts/workflows';
import type { ChartPlan, GroupPlan } from '../../core/plan/plans';
import type { RunParts } from './parts';
import { rollOutDeployer } from './deployers';
import { closeLockstep, openLockstep } from './lockstep';

/**
 * One group's charts, in the run itself, then its Deployers (child runs): one after another,
 * stopping at the first failure (`sequenced`), or all at once; to uninstall, a sequenced group's
 * last chart first, and no Deployer (an uninstall leaves them, as the group workflow does); a
 * retry leaves what its failed run `finished`. A pause holds before the next one; a rollback, a
 * cancellation or a re-plan starts no more and lets running ones finish. A lockstep group's
 * canaries step together, the run coordinating them.
 */
export async function deployGroup(
  group: GroupPlan,
  runParts: RunParts,
  finished?: readonly string[],
): Promise<GroupOutcome> {
  const outcome: GroupOutcome = { group: group.name, outcomes: [], failed: [], stopped: false };
  const deployers = deployersToRun(group, runParts.mode, finished);
  if (group.deployers && (runParts.mode !== 'uninstall' || deployers.length)) outcome.deployers = [];
  const parts: RunParts = { ...runParts, lockstep: openLockstep(group, runParts) };
  parts.shown.show((p) => {
    p.group = group.name;
    parts.shown.group(group.name).state = 'running';
  });
  parts.told.groupStarted(group);
  const members = [
    ...chartsToRun(group, parts.mode, finished).map(
      (chart) => () => deployChart(group.name, chart, parts, outcome),
    ),
    ...deployers.map((plan) => () => rollOutDeployer(group.name, plan, parts, outcome)),
  ];
  if (!group.sequenced) {
    if (await parts.control.mayContinue()) await Promise.all(members.map((deploy) => deploy()));
    else outcome.stopped = true;
  } else {
    for (const deploy of members) {
      if (!(await parts.control.mayContinue())) {
        outcome.stopped = true;
        break;
      }
      await deploy();
      if (outcome.failed.length) break;
    }
  }
  closeLockstep(parts.lockstep, parts);
  parts.shown.show(() => (parts.shown.group(group.name).state = groupEndState(outcome)));
  parts.told.groupEnded(group, outcome, finished);
  return outcome;
}

/** One chart's release, driven by the release driver; its outcome or failure goes to the group's. */
async function deployChart(
  group: string,
  chart: ChartPlan,
  { control, canaries, shown, told, namespace, mode, lockstep, chartScope }: RunParts,
  outcome: GroupOutcome,
): Promise<void> {
  const row = shown.chart(group, chart.chart);
  shown.show(() => (row.state = 'deploying'));
  told.chartStarted(chart);
  const link = lockstep?.link(chart.chart);
  const canary = canaries.open(chart.chart, link !== undefined);
  try {
    const drive = () => driveRelease(chartRunOf(chart, namespace, mode, link), control, canary);
    const done = await (chartScope ? chartScope.run(drive) : drive());
    lockstep?.memberEnded(chart.chart);
    outcome.outcomes.push(done);
    told.chartDone(done);
    shown.show(() => Object.assign(row, { state: chartState(done), revision: done.revision ?? undefined }));
  } catch (err) {
    const error = rootMessage(err);
    lockstep?.memberEnded(chart.chart, error);
    outcome.failed.push({ chart: chart.chart, error, written: writtenRelease(err) });
    told.chartFailed(chart, error);
    shown.show(() => Object.assign(row, { state: 'failed', error }));
  } finally {
    canaries.close(canary);
  }
}
