import {
  CancellationScope,
  type ChildWorkflowHandle,
  getExternalWorkflowHandle,
  startChild,
  setHandler,
  workflowInfo,
} from '@temporalio/workflow';
import { chartWorkflow } from './chart';
import type { ChartRun, GroupRun, GroupOutcome } from '../core/contracts/workflows';
import { carriedDown, RunControl, startOver, type HandedDown } from './control';
import { rootMessage } from '../core/failures';
import { report, reportOffPath, reportPause, statusWriteFailures, statusWritesSettled } from './status';
import { chartState, groupEndMessage, groupEnding } from '../core/plan/ending';
import {
  reportChartDeploying,
  reportChartDone,
  reportChartFailed,
  reportGroupStarted,
} from './deploy-status';
import { undoChanges } from './saga';
import { groupChanges } from '../core/plan/rollback';
import type { Change } from '../core/plan/changes';
import { chartProgressSignal, progressQuery } from './messages';
import type { ChartProgress, GroupProgress } from '../core/progress';
import { ChildRuns } from './holds';
import type { ChartPlan, DeployerPlan } from '../core/plan/plans';
import { LockstepCoordinator } from './lockstep';
import { writtenRelease } from './release-driver';
import { deployerFailure, lockedChild, pendingRows, startDeployer, underLock } from './group-deployers';
import { deployerMember, type LockstepLink } from '../core/plan/lockstep';
import { chartRunOf } from '../core/plan/run';

/**
 * Deploys one group's charts: all at once (`sequenced: false`), or one at a time in order,
 * stopping at the first failure (`sequenced: true`). Each chart runs as a child workflow whose
 * ID locks its release. Pause holds before the next chart; a rollback signal starts no more
 * charts and lets running ones finish; then a group no manifest lists undoes what this run
 * changed (in a manifest, the manifest's saga does).
 */
export async function groupWorkflow(run: GroupRun): Promise<GroupOutcome> {
  const control = new RunControl(run.carried, {
    approvalHint: workflowInfo().parent
      ? 'the gates of a manifest are approved on the manifest'
      : 'a group has no approval gates; a canary waits at its own: approve act/NAME',
  });
  // The group holds nowhere itself (its charts do): it passes a freeze on to them.
  control.holds.use(undefined);
  const charts = new ChildRuns();
  const lockstep = run.group.lockstep && new LockstepCoordinator(run.group, run.namespace, control);
  control.listen((signal, req) => {
    charts.forward(signal, req);
    lockstep?.forward(signal, req);
  });
  // Cancellation reaches the group through `control`: running charts finish, no new one starts.
  return CancellationScope.nonCancellable(() => new GroupDeploy(run, control, charts, lockstep).execute());
}

/** One group run's state: its charts' progress and what each chart run did. */
class GroupDeploy {
  private readonly uninstall: boolean;
  private readonly progress: GroupProgress;
  private readonly result: GroupOutcome;
  /** The manifest run this group belongs to, if any: it hears of every chart's progress. */
  private readonly parent = workflowInfo().parent;
  /** Progress signals on their way to the manifest, awaited before the group ends (as are status writes off the path). */
  private readonly telling: Promise<void>[] = [];

  constructor(
    private readonly run: GroupRun,
    private readonly control: RunControl,
    /** The charts running now: a freeze is passed on to them. */
    private readonly charts: ChildRuns,
    /** Steps the group's canary charts together, when the group has canary_lockstep. */
    private readonly lockstep?: LockstepCoordinator,
  ) {
    this.uninstall = run.mode === 'uninstall';
    this.result = { group: run.group.name, outcomes: [], failed: [], stopped: false };
    if (run.carried?.changes?.length) this.result.carriedChanges = run.carried.changes;
    this.progress = {
      name: run.group.name,
      sequenced: run.group.sequenced,
      state: 'running',
      charts: pendingRows(run.group),
    };
    if (run.group.deployers && !this.uninstall) this.result.deployers = [];
    // An uninstall leaves the Deployers (see group-deployers.ts).
    if (this.uninstall)
      for (const row of this.progress.charts.slice(run.group.charts.length)) row.state = 'skipped';
    setHandler(progressQuery, () => ({
      phase: this.progress.state,
      group: run.group.name,
      groups: [this.progress],
      ...control.progress(),
      ...statusWriteFailures(),
    }));
    control.followPause((paused) => reportPause('ArmadaChartGroup', run.namespace, run.group.name, paused));
  }

  async execute(): Promise<GroupOutcome> {
    const { run, control, result } = this;
    const charts = run.group.charts;
    // Off the path: the first chart starts in the same workflow task.
    await reportGroupStarted(run.namespace, run.group, this.uninstall, reportOffPath);
    await this.deployCharts();
    await Promise.all([...this.telling, statusWritesSettled()]);
    // Only a group no manifest lists gets a re-plan (from the bridge): it starts over with it.
    if (control.replan && !result.failed.length) return startOver(control.replan, control, this.changes());
    const deployers = result.deployers?.length ?? 0;
    const ran = charts.length - (run.finished?.length ?? 0) + this.deployers().length;
    result.stopped = control.stopping && result.outcomes.length + deployers + result.failed.length < ran;
    const ending = groupEnding({
      uninstall: this.uninstall,
      standalone: !this.parent,
      rollbackRequested: control.stopRequested !== null,
      failed: result.failed.length > 0,
      stopped: result.stopped,
    });
    this.progress.state = ending.state;
    if (ending.rollBack) {
      // A group no manifest lists undoes what this run changed, as a manifest's rollback does.
      await this.reportGroup(
        'RollingBack',
        `rollback requested by ${control.stopRequested!.by ?? 'an operator'}`,
      );
      result.rolledBack = await undoChanges(this.changes(), undefined, { takeLocks: true });
      await this.reportGroup(
        ending.phase,
        `rolled back: ${result.rolledBack.join(', ') || 'nothing had changed'}`,
      );
      return result;
    }
    const message = groupEndMessage({
      phase: ending.phase,
      uninstall: this.uninstall,
      charts: charts.length,
      done: result.outcomes.length,
      finishedBefore: run.finished?.length ?? 0,
      ...(result.deployers && { deployers: { rolledOut: deployers, total: this.deployers().length } }),
      failed: result.failed.map((f) => f.chart),
    });
    const finalStatus = { phase: ending.phase, message };
    if (run.manifestWritesFinalStatus) return { ...result, finalStatus };
    await this.reportGroup(finalStatus.phase, finalStatus.message);
    return result;
  }

  /** The saga's record: what the runs this one continued from changed, then what this run changed. */
  private changes(): Change[] {
    const { run, result } = this;
    return [...(run.carried?.changes ?? []), ...groupChanges(result, run.group, run.namespace)];
  }

  /**
   * All charts and Deployers at once, or one at a time in order, charts first (the charts in
   * reverse to uninstall; an uninstall leaves the Deployers), until one fails.
   */
  private async deployCharts(): Promise<void> {
    const finished = new Set(this.run.finished);
    const order = this.run.group.charts
      .map((plan, i) => ({ plan, chartProgress: this.progress.charts[i] }))
      .filter(({ plan, chartProgress }) => {
        if (!finished.has(plan.chart)) return true;
        chartProgress.state = 'unchanged'; // finished in the run this retry takes up
        return false;
      });
    if (!this.run.group.sequenced) {
      if (await this.control.mayContinue())
        await Promise.all([
          ...order.map(({ plan, chartProgress }) => this.deploy(plan, chartProgress)),
          ...this.deployers().map(({ plan, row }) => this.rollOut(plan, row)),
        ]);
      return;
    }
    // Uninstalling undoes the order: the chart deployed last goes first.
    if (this.uninstall) order.reverse();
    for (const { plan, chartProgress } of order) {
      if (!(await this.control.mayContinue())) return;
      await this.deploy(plan, chartProgress);
      if (this.result.failed.length) return;
    }
    for (const { plan, row } of this.deployers()) {
      if (!(await this.control.mayContinue())) return;
      await this.rollOut(plan, row);
      if (this.result.failed.length) return;
    }
  }

  /** The Deployers this run rolls out, with their progress rows: none to uninstall. */
  private deployers(): { plan: DeployerPlan; row: ChartProgress }[] {
    const { charts, deployers = [] } = this.run.group;
    if (this.uninstall) return [];
    return deployers.map((plan, i) => ({ plan, row: this.progress.charts[charts.length + i] }));
  }

  /** One Deployer's run (it writes its Deployer's status itself); a rollback of it fails the group, as a chart's canary's does. */
  private async rollOut(plan: DeployerPlan, row: ChartProgress): Promise<void> {
    const { run, result } = this;
    const member = deployerMember(plan.name);
    row.state = 'deploying';
    await this.publish(row);
    let error: string | undefined;
    try {
      const child = await startDeployer(
        plan,
        run.namespace,
        this.control.handedDown(),
        this.lockstep?.link(member),
      );
      const outcome = await this.charts.follow(child, child.result());
      result.deployers!.push({ name: plan.name, ...outcome });
      error = deployerFailure(outcome);
      row.state = error === undefined ? 'deployed' : 'rolled-back';
    } catch (err) {
      error = rootMessage(err);
      row.state = 'failed';
      await report('Deployer', run.namespace, plan.name, 'Failed', error);
    }
    this.lockstep?.memberEnded(member, error);
    if (error !== undefined) {
      result.failed.push({ chart: member, error });
      row.error = error;
    }
    await this.publish(row);
  }

  /** One chart's run, with its ArmadaChart's status and the manifest told of its progress. */
  private async deploy(plan: ChartPlan, chartProgress: ChartProgress): Promise<void> {
    const { run, result } = this;
    chartProgress.state = 'deploying';
    // The progress signal goes out alongside what it waits for (the child's start, the chart's
    // status write), not before or after it: one server round trip less at each end of a chart.
    const announced = this.publish(chartProgress);
    announced.catch(() => undefined); // awaited below, after the start
    // The chart's status links to its own workflow, once that has started.
    let workflow: { id: string; run_id: string } | undefined;
    let published = false;
    try {
      const child = await startChart(
        plan,
        run.mode,
        run.namespace,
        this.control.handedDown(),
        this.lockstep?.link(plan.chart),
      );
      workflow = { id: child.workflowId, run_id: child.firstExecutionRunId };
      await reportChartDeploying(run.namespace, plan, report, { workflow });
      const outcome = await this.charts.follow(child, child.result());
      this.lockstep?.memberEnded(plan.chart);
      result.outcomes.push(outcome);
      chartProgress.state = chartState(outcome);
      chartProgress.revision = outcome.revision ?? undefined;
      await announced; // delivered long ago, while the chart ran; keeps the signals in order
      // The next chart starts without waiting for the manifest to take the signal (a server
      // round trip); the group waits for it before it ends.
      const told = this.publish(chartProgress);
      told.catch(() => undefined);
      this.telling.push(told);
      // So does the chart's final status.
      await reportChartDone(run.namespace, outcome, reportOffPath, { workflow });
      published = true;
    } catch (err) {
      const error = rootMessage(err);
      this.lockstep?.memberEnded(plan.chart, error);
      result.failed.push({ chart: plan.chart, error, written: writtenRelease(err) });
      chartProgress.state = 'failed';
      chartProgress.error = error;
      await reportChartFailed(run.namespace, plan.chart, error, report, workflow && { workflow });
    }
    await announced;
    if (!published) await this.publish(chartProgress);
  }

  private async publish(chart: ChartProgress): Promise<void> {
    if (this.parent)
      await getExternalWorkflowHandle(this.parent.workflowId).signal(
        chartProgressSignal,
        this.run.group.name,
        chart,
      );
  }

  private async reportGroup(phase: string, message: string): Promise<void> {
    await report('ArmadaChartGroup', this.run.namespace, this.run.group.name, phase, message);
  }
}

/**
 * Starts a chart's child workflow under its release lock. A release that another run drives is
 * refused with a message naming that run, never deployed twice at once.
 */
function startChart(
  plan: ChartPlan,
  mode: ChartRun['mode'],
  resourceNamespace: string,
  handed: HandedDown,
  lockstep?: LockstepLink,
): Promise<ChildWorkflowHandle<typeof chartWorkflow>> {
  const start = () =>
    startChild(chartWorkflow, {
      workflowId: plan.workflowId,
      args: [
        {
          ...chartRunOf(plan, resourceNamespace, mode, lockstep),
          ...carriedDown(handed),
        },
      ],
      staticSummary: `${mode === 'uninstall' ? 'uninstall' : 'deploy'} ${plan.release} in ${plan.namespace}`,
      ...lockedChild(),
    });
  return underLock(start, plan.workflowId, `release ${plan.namespace}/${plan.release}`, true);
}
