import {
  ApplicationFailure,
  CancellationScope,
  CancelledFailure,
  getExternalWorkflowHandle,
  setCurrentDetails,
  setHandler,
  startChild,
  workflowInfo,
  type ChildWorkflowHandle,
} from '@temporalio/workflow';
import { RunControl, startOver } from './control';
import { NonRetryable } from '../core/failures';
import { gateBefore } from '../core/plan/gates';
import { gateRules } from '../core/plan/steering';
import { groupChildWorkflowId } from '../core/plan/names';
import { renderDetails } from './details';
import { groupWorkflow } from './group';
import type { GroupOutcome, ManifestRun, ManifestOutcome } from '../core/contracts/workflows';
import { chartProgressSignal, pauseSignal, progressQuery } from './messages';
import type { GroupProgress, Progress } from '../core/progress';
import type { Hold } from '../core/control';
import { manifestEnding } from '../core/plan/ending';
import { groupFailure } from '../core/plan/run';
import { groupsInOrder } from '../core/plan/run-modes';
import { pendingRows } from './group-deployers';
import { finishedBefore } from '../core/plan/finished-runs';
import type { GroupPlan, ManifestPlan } from '../core/plan/plans';
import { groupChanges, markUndone } from '../core/plan/rollback';
import type { Change } from '../core/plan/changes';
import { undoChanges } from './saga';
import { approvedNote, gateWaiting, reportManifestPhase, type StatusWrite } from './deploy-status';
import {
  report,
  reportHeld,
  reportOffPath,
  reportPause,
  statusWriteFailures,
  statusWritesSettled,
} from './status';
import { RunNotifier } from './notify';
import { endingEvent } from '../core/plan/notifications';
import { passSafePoint } from './holds';
import { LockstepRelay } from './lockstep';

/**
 * A manifest run: its groups strictly in order, each as a child workflow; before a group behind
 * an approval gate, wait for approve. When a group fails: `on_failure: stop` leaves what
 * deployed; `rollback` (or a rollback signal at any time) undoes every change of this run,
 * newest first, even if the run is being cancelled.
 */
export async function manifestWorkflow(run: ManifestRun): Promise<ManifestOutcome> {
  const control = new RunControl(run.carried, {
    approvalHint: 'a canary waits at its own gates: approve act/NAME or dpl/NAME',
  });
  control.holds.use(run.plan.windows);
  // Cancellation reaches the run through `control` (see RunControl), never mid-step.
  return CancellationScope.nonCancellable(() => new ManifestDeploy(run, control).execute());
}

/** One manifest run's state: its progress, the saga's record of changes, and how it is going. */
class ManifestDeploy {
  private readonly plan: ManifestPlan;
  private readonly uninstall: boolean;
  private readonly progress: Progress;
  /** The saga's record: every change of this run and of the runs it continued from, in order. */
  private readonly changes: Change[];
  private readonly outcomes: GroupOutcome[] = [];
  /** The group that runs now: signals and a cancellation go on to it. */
  private currentGroup?: ChildWorkflowHandle<typeof groupWorkflow>;
  private failure?: string;
  /** What a timed-out approval gate asked for, if one timed out. */
  private timedOutInto?: 'stop' | 'rollback';
  /** Who approved the gate just passed, for the next status write. */
  private approvedNote = '';
  /** Webhook notifications of this run's events; none for an uninstall. */
  private readonly notifier: RunNotifier;
  /** Passes approve and promote on to a running lockstep group. */
  private readonly lockstep: LockstepRelay;

  constructor(
    private readonly run: ManifestRun,
    private readonly control: RunControl,
  ) {
    this.plan = run.plan;
    this.changes = [...(run.carried?.changes ?? [])];
    this.uninstall = run.mode === 'uninstall';
    this.notifier = new RunNotifier(this.uninstall ? undefined : run.plan.notify, () => control.approvals);
    this.progress = { phase: 'Running', groups: run.plan.groups.map(pendingGroup) };
    control.listen(
      (signal, req) => {
        this.currentGroup?.signal(signal, req).catch(() => undefined);
      },
      () => this.cancelGroup(),
    );
    this.lockstep = new LockstepRelay(control, () => this.currentGroup);
    setHandler(chartProgressSignal, (groupName, chart) => {
      const charts = this.groupProgress(groupName)?.charts ?? [];
      const i = charts.findIndex((c) => c.chart === chart.chart);
      if (i >= 0) charts[i] = chart;
      this.showDetails();
    });
    setHandler(progressQuery, () => this.progressNow());
    control.followPause((paused) => {
      this.showDetails();
      return reportPause('ArmadaManifest', this.plan.namespace, this.plan.manifest, paused);
    });
  }

  async execute(): Promise<ManifestOutcome> {
    const retry = this.run.resume ? `; retry of run ${this.run.resume.retryOf}` : '';
    await this.setPhase(
      this.uninstall ? 'Uninstalling' : 'Running',
      `${this.plan.groups.length} groups${retry}`,
    );
    void this.notifier.notify({ event: 'started', reason: `${this.plan.groups.length} groups${retry}` });
    const complete = await this.runGroups();
    // Newer specs arrived: what ran stays (no rollback), and the run starts over with them; its
    // charts still at their spec come out unchanged.
    const { control } = this;
    if (control.replan && this.failure === undefined && !control.stopRequested && !control.cancelled) {
      // A run that continues as new drops the activities it has not seen finish.
      await statusWritesSettled();
      await this.notifier.settled();
      return startOver(control.replan, control, this.changes);
    }
    this.showDetails();
    return this.end(complete);
  }

  /** The groups in order (reversed to uninstall); true when every one ran to its end. */
  private async runGroups(): Promise<boolean> {
    const groups = groupsInOrder(this.plan, this.run.mode ?? 'deploy');
    const { resume } = this.run;
    for (const group of groups) {
      if (!(await this.control.mayContinue())) return false;
      const finished = resume?.finished[group.name];
      if (finished) this.showFinished(group.name, finished);
      if (
        finishedBefore(
          resume,
          group.name,
          group.charts.map((c) => c.chart),
        )
      ) {
        this.groupProgress(group.name)!.state = 'done';
        continue;
      }
      // A retry passes no gate the failed run passed: it started the group behind it.
      if (!finished && !(await this.passGate(group))) return false;
      // After the gate: an approval given under a freeze or outside the windows waits too.
      const held = (hold: Hold | null) => this.showHold(hold);
      if (!(await passSafePoint(this.control, held))) return false;
      if (!(await this.deployGroup(group))) return false;
    }
    return true;
  }

  /** Charts of a group that finished in the run this retry takes up: shown unchanged, not run. */
  private showFinished(group: string, charts: readonly string[]): void {
    for (const chart of this.groupProgress(group)!.charts)
      if (charts.includes(chart.chart)) chart.state = 'unchanged';
  }

  /** Before a group behind an approval gate, waits for approve; false when the run goes no further. */
  private async passGate(group: GroupPlan): Promise<boolean> {
    if (!group.approval || this.uninstall) return true;
    const groupProgress = this.groupProgress(group.name)!;
    groupProgress.state = 'waiting-approval';
    const waiting = gateWaiting(group.name);
    await this.setPhase('WaitingApproval', waiting.message, waiting.waitingOn);
    const timeout = group.approval.timeoutSeconds;
    const gate = gateBefore(group.name);
    void this.notifier.notify({ event: 'waiting-approval', gate });
    const rules = gateRules(group.approval, `ArmadaManifest/${this.plan.manifest}`, this.control.steering);
    const wait = await this.control.approval(gate, timeout === undefined ? undefined : timeout * 1000, rules);
    if (wait.decision === 'stopped') return false;
    if (wait.decision === 'timed-out' && group.approval.onTimeout !== 'continue') {
      this.failure = `approval before group ${group.name} timed out`;
      this.timedOutInto = group.approval.onTimeout;
      groupProgress.state = 'stopped';
      return false;
    }
    if (wait.decision === 'approved') this.approvedNote = approvedNote(gate, wait.by);
    return true;
  }

  /** Runs one group as a child workflow; false when the run goes no further (it failed or stopped). */
  private async deployGroup(group: GroupPlan): Promise<boolean> {
    const groupProgress = this.groupProgress(group.name)!;
    groupProgress.state = 'running';
    this.progress.group = group.name;
    // Off the path: the group starts in the same workflow task.
    await this.setPhase(
      this.uninstall ? 'Uninstalling' : 'Running',
      `group ${group.name}${this.approvedNote}`,
      undefined,
      reportOffPath,
    );
    this.approvedNote = '';
    this.currentGroup = await startChild(groupWorkflow, {
      workflowId: groupChildWorkflowId(workflowInfo().workflowId, group.name),
      args: [
        {
          group,
          namespace: this.plan.namespace,
          mode: this.run.mode,
          ...(this.run.resume && { finished: this.run.resume.finished[group.name] }),
          manifestWritesFinalStatus: true,
          // The bridge's key and the authors only: a freeze reaches the group as a signal.
          ...(this.control.steering && { carried: { steering: this.control.steering } }),
        },
      ],
      memo: workflowInfo().memo,
      staticSummary: `group ${group.name}: ${group.charts.length} charts, ${group.sequenced ? 'sequenced' : 'parallel'}`,
    });
    if (this.control.paused) await this.currentGroup.signal(pauseSignal, this.control.paused);
    if (this.control.cancelled) this.cancelGroup();
    const { workflowId, firstExecutionRunId } = this.currentGroup;
    const outcome = await this.currentGroup.result();
    this.currentGroup = undefined;
    this.lockstep.groupEnded();
    if (outcome.finalStatus) {
      const { phase, message } = outcome.finalStatus;
      // Linked to the group's run, as the group's own writes are.
      await reportOffPath('ArmadaChartGroup', this.plan.namespace, group.name, phase, message, {
        workflow: { id: workflowId, run_id: firstExecutionRunId },
      });
    }
    this.outcomes.push(outcome);
    // Chart states arrived by chartProgress signals; here only the saga's record of changes.
    this.changes.push(...groupChanges(outcome, group, this.plan.namespace));
    groupProgress.state = outcome.failed.length ? 'failed' : outcome.stopped ? 'stopped' : 'done';
    if (outcome.failed.length) {
      this.failure = groupFailure(outcome);
      return false;
    }
    return !outcome.stopped;
  }

  /** Rolls back when the plan says so (see manifestEnding), reports the final phase, and ends. */
  private async end(complete: boolean): Promise<ManifestOutcome> {
    const { control, failure } = this;
    const ending = manifestEnding({
      uninstall: this.uninstall,
      onFailure: this.plan.onFailure,
      failed: failure !== undefined,
      timedOutInto: this.timedOutInto,
      rollbackRequested: control.stopRequested !== null,
      cancelled: control.cancelled,
      complete,
    });
    const rolledBack = ending.rollBack ? await this.rollBack() : [];
    const result: ManifestOutcome = {
      manifest: this.plan.manifest,
      state: ending.state,
      groups: this.outcomes,
      rolledBack,
      ...(this.run.carried?.changes?.length && { carriedChanges: this.run.carried.changes }),
    };
    // With the last group's final status, written off the path as the run ended.
    await Promise.all([
      this.setPhase(ending.phase, failure ?? `${this.plan.manifest}: ${result.state}`),
      statusWritesSettled(),
    ]);
    await this.notifier.notify(endingEvent(result.state, failure));
    if (failure) throw ApplicationFailure.nonRetryable(failure, NonRetryable.ManifestFailed, result);
    if (control.cancelled) throw new CancelledFailure(`run cancelled; ${result.state}`);
    return result;
  }

  /** Undoes every change of this run, newest first; the releases put back. */
  private async rollBack(): Promise<string[]> {
    const requested = this.control.stopRequested?.reason;
    await this.setPhase(
      'RollingBack',
      this.failure ?? `rollback requested${requested ? `: ${requested}` : ''}`,
    );
    return undoChanges(this.changes, (step) => markUndone(this.progress.groups, step), { takeLocks: true });
  }

  /** Shows a freeze or a closed window the run holds for (null: it goes on) in its details and status. */
  private showHold(hold: Hold | null): Promise<number> {
    this.progress.waitingOn = hold?.for;
    this.showDetails();
    return reportHeld('ArmadaManifest', this.plan.namespace, this.plan.manifest, hold);
  }

  /** What the progress query answers: the groups and charts, and the run's control state. */
  private progressNow(): Progress {
    return { ...this.progress, ...this.control.progress(), ...statusWriteFailures() };
  }

  /** The Temporal UI's current details: the same facts as the progress query. */
  private showDetails(): void {
    setCurrentDetails(renderDetails(this.progressNow()));
  }

  private groupProgress(name: string): GroupProgress | undefined {
    return this.progress.groups.find((g) => g.name === name);
  }

  private cancelGroup(): void {
    if (this.currentGroup)
      getExternalWorkflowHandle(this.currentGroup.workflowId)
        .cancel()
        .catch(() => undefined);
  }

  private async setPhase(
    phase: string,
    message: string,
    waitingOn?: string,
    write: StatusWrite = report,
  ): Promise<void> {
    const { progress } = this;
    progress.phase = phase;
    progress.waitingOn = waitingOn;
    this.showDetails();
    await reportManifestPhase(this.plan, progress, phase, message, write);
  }
}

/** A group of the plan as the progress query shows it before it runs. */
export function pendingGroup(g: GroupPlan): GroupProgress {
  return {
    name: g.name,
    sequenced: g.sequenced,
    state: 'pending',
    charts: pendingRows(g),
  };
}
