import {
  ApplicationFailure,
  CancellationScope,
  CancelledFailure,
  getExternalWorkflowHandle,
  setCurrentDetails,
  setHandler,
  startChild,
  upsertSearchAttributes,
  workflowInfo,
  type ChildWorkflowHandle,
} from '@temporalio/workflow';
import { RunControl, startOver } from './control';
import { NonRetryable } from './failures';
import { gateBefore } from './plan/gates';
import { renderDetails } from './details';
import { groupWorkflow, type GroupOutcome } from './group';
import { chartProgressSignal, pauseSignal, progressQuery, type Carried, type Progress } from './messages';
import type { ManifestPlan } from './plan/manifest';
import type { ReleaseChange } from './plan/rollback';
import { changesOf, undoChanges } from './saga';
import { ArmadaPhase } from './search-attributes';
import { report, reportPause, statusWriteFailures } from './status';

export interface ManifestRun {
  plan: ManifestPlan;
  /** `uninstall` removes every release, groups in reverse order. */
  mode?: 'deploy' | 'uninstall';
  /** Pause and approvals from the run this one continued from (a re-plan). */
  carried?: Carried;
}

export interface ManifestOutcome {
  manifest: string;
  state: 'deployed' | 'uninstalled' | 'rolled-back' | 'stopped';
  groups: GroupOutcome[];
  /** Releases put back by a rollback, newest change first. */
  rolledBack: string[];
}

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
  // Cancellation reaches the run through `control` (see RunControl), never mid-step.
  return CancellationScope.nonCancellable(() => runManifest(run, control));
}

async function runManifest(run: ManifestRun, control: RunControl): Promise<ManifestOutcome> {
  const { plan } = run;
  const uninstall = run.mode === 'uninstall';
  let currentGroup: ChildWorkflowHandle<typeof groupWorkflow> | undefined;
  // Signals and a cancellation go on to the group that runs (it may have just finished).
  const cancelGroup = () => {
    if (currentGroup)
      getExternalWorkflowHandle(currentGroup.workflowId)
        .cancel()
        .catch(() => undefined);
  };
  control.listen((signal, req) => {
    currentGroup?.signal(signal, req).catch(() => undefined);
  }, cancelGroup);
  const progress: Progress = {
    phase: 'Running',
    groups: plan.groups.map((g) => ({
      name: g.name,
      sequenced: g.sequenced,
      state: 'pending',
      charts: g.charts.map((c) => ({
        chart: c.chart,
        release: c.release,
        namespace: c.namespace,
        state: 'pending',
      })),
    })),
  };
  setHandler(chartProgressSignal, (groupName, chart) => {
    const charts = progress.groups.find((g) => g.name === groupName)?.charts ?? [];
    const i = charts.findIndex((c) => c.chart === chart.chart);
    if (i >= 0) charts[i] = chart;
    setCurrentDetails(renderDetails(progress));
  });
  setHandler(progressQuery, () => ({ ...progress, ...control.progress(), ...statusWriteFailures() }));
  control.followPause((paused) => reportPause('ArmadaManifest', plan.namespace, plan.manifest, paused));
  const total = plan.groups.length;
  const setPhase = async (phase: string, message: string, waitingOn?: string) => {
    progress.phase = phase;
    progress.waitingOn = waitingOn;
    upsertSearchAttributes([{ key: ArmadaPhase, value: phase }]);
    setCurrentDetails(renderDetails(progress));
    const ready = progress.groups.filter((g) => g.state === 'done').length;
    await report('ArmadaManifest', plan.namespace, plan.manifest, phase, message, {
      progress: {
        group: progress.group,
        ready,
        total,
        summary: `${ready}/${total}${progress.group ? ` ${progress.group}` : ''}`,
      },
    });
  };
  await setPhase(uninstall ? 'Uninstalling' : 'Running', `${total} groups`);

  const changes: ReleaseChange[] = [];
  const outcomes: GroupOutcome[] = [];
  let failure: string | undefined;
  /** What a timed-out approval gate asked for, if one timed out. */
  let timedOutInto: 'stop' | 'rollback' | undefined;
  const groups = uninstall ? [...plan.groups].reverse() : plan.groups;
  /** Who approved the gate just passed, for the next status write. */
  let approvedNote = '';

  for (const group of groups) {
    const groupProgress = progress.groups.find((g) => g.name === group.name)!;
    if (!(await control.mayContinue())) break;
    if (group.approval && !uninstall) {
      groupProgress.state = 'waiting-approval';
      await setPhase(
        'WaitingApproval',
        `waiting for approval before group ${group.name}`,
        `approve before group ${group.name}`,
      );
      const timeout = group.approval.timeoutSeconds;
      const gate = gateBefore(group.name);
      const wait = await control.approval(gate, timeout === undefined ? undefined : timeout * 1000);
      if (wait.decision === 'stopped') break;
      if (wait.decision === 'timed-out' && group.approval.onTimeout !== 'continue') {
        failure = `approval before group ${group.name} timed out`;
        timedOutInto = group.approval.onTimeout;
        groupProgress.state = 'stopped';
        break;
      }
      if (wait.decision === 'approved') {
        const { by, reason } = wait.by;
        approvedNote = `; ${gate} approved by ${by ?? 'an operator'}${reason ? ` (${reason})` : ''}`;
      }
    }
    groupProgress.state = 'running';
    progress.group = group.name;
    await setPhase(uninstall ? 'Uninstalling' : 'Running', `group ${group.name}${approvedNote}`);
    approvedNote = '';
    currentGroup = await startChild(groupWorkflow, {
      workflowId: `${workflowInfo().workflowId}/group/${group.name}`,
      args: [{ group, namespace: plan.namespace, mode: run.mode }],
      memo: workflowInfo().memo,
      staticSummary: `group ${group.name}: ${group.charts.length} charts, ${group.sequenced ? 'sequenced' : 'parallel'}`,
    });
    if (control.paused) await currentGroup.signal(pauseSignal, control.paused);
    if (control.cancelled) cancelGroup();
    const outcome = await currentGroup.result();
    currentGroup = undefined;
    outcomes.push(outcome);
    // Chart states arrived by chartProgress signals; here only the saga's record of changes.
    changes.push(...changesOf(outcome));
    groupProgress.state = outcome.failed.length ? 'failed' : outcome.stopped ? 'stopped' : 'done';
    if (outcome.failed.length) {
      failure = `group ${group.name} failed: ${outcome.failed.map((f) => `${f.chart}: ${f.error}`).join('; ')}`;
      break;
    }
    if (outcome.stopped) break;
  }
  // Newer specs arrived: what ran stays (no rollback), and the run starts over with them; its
  // charts still at their spec come out unchanged.
  if (control.replan && failure === undefined && !control.stopRequested && !control.cancelled)
    return startOver(control.replan, control);
  setCurrentDetails(renderDetails(progress));

  const rollBack =
    !uninstall &&
    (control.stopRequested !== null ||
      timedOutInto === 'rollback' ||
      (control.cancelled && plan.onFailure === 'rollback') ||
      (failure !== undefined && timedOutInto === undefined && plan.onFailure === 'rollback'));
  const rolledBack: string[] = [];
  if (rollBack) {
    await setPhase(
      'RollingBack',
      failure ??
        `rollback requested${control.stopRequested?.reason ? `: ${control.stopRequested.reason}` : ''}`,
    );
    rolledBack.push(
      ...(await undoChanges(changes, (where) => {
        for (const g of progress.groups)
          for (const c of g.charts) if (`${c.namespace}/${c.release}` === where) c.state = 'rolled-back';
      })),
    );
  }

  const result: ManifestOutcome = {
    manifest: plan.manifest,
    state: rollBack ? 'rolled-back' : failure ? 'stopped' : uninstall ? 'uninstalled' : 'deployed',
    groups: outcomes,
    rolledBack,
  };
  const final = failure ? 'Failed' : rollBack ? 'RolledBack' : uninstall ? 'Uninstalled' : 'Deployed';
  await setPhase(final, failure ?? `${plan.manifest}: ${result.state}`);
  if (failure) throw ApplicationFailure.nonRetryable(failure, NonRetryable.ManifestFailed, result);
  if (control.cancelled) throw new CancelledFailure(`run cancelled; ${result.state}`);
  return result;
}
