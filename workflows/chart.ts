import { setHandler, workflowInfo } from '@temporalio/workflow';
import { RunControl, startOver } from './control';
import { undoChanges } from './saga';
import { report, reportPause, statusWriteFailures } from './status';
import { CanaryEventsNotifier, type RunNotifier } from './notify';
import { endingEvent, notifyTarget } from '../core/plan/notifications';
import { chartOutcomeStatus, chartRollback, chartState } from '../core/plan/ending';
import { rootMessage } from '../core/failures';
import { notificationSignal, progressQuery, replanSignal } from './messages';
import type { ChartProgress, GroupProgress } from '../core/progress';
import { chartWrites, isReleaseChange } from '../core/plan/rollback';
import type { ChartRun, ChartOutcome } from '../core/contracts/workflows';
import type { ReleaseChange } from '../core/plan/changes';
import { CanaryChild, chartObject, driveRelease } from './release-driver';

/**
 * Drives one Helm release: observe (activity) → decide (pure) → act (one activity), until the
 * release runs the wanted chart and values. A release left pending by a killed helm is first
 * recovered; an unchanged release is left alone (no new revision). After an install or upgrade:
 * the Armada wait, then `helm test` when enabled.
 *
 * The workflow ID is the release's lock (`helm:<namespace>/<release>`): one run per release.
 */
export async function chartWorkflow(run: ChartRun): Promise<ChartOutcome> {
  const canary = new CanaryChild();
  const control = new RunControl(run.carried, {
    approvalHint: run.spec.canary
      ? `a chart's gates are its canary's steps: approve act/${run.chart} while a step waits`
      : `ArmadaChart ${run.chart} has no canary, so no approval gates`,
  });
  control.holds.use(run.spec.windows);
  control.onReplan = (replan) => canary.signal(replanSignal, replan);
  canary.control = control;
  const shown = new ChartRunProgress(run, control);
  control.listen((signal, req) => canary.signal(signal, req));
  const parts: ChartRunParts = { run, control, canary, shown, notifier: chartNotifier(run) };
  // A chart of a group has its status written by the group, and its rollback is the saga of
  // the manifest or group that runs it; a standalone chart does both itself.
  return workflowInfo().parent ? driveInGroup(parts) : driveStandalone(parts);
}

/** What a chart run's steps work with. */
interface ChartRunParts {
  run: ChartRun;
  control: RunControl;
  canary: CanaryChild;
  shown: ChartRunProgress;
  notifier: RunNotifier;
}

/** What a chart run shows while it runs (the progress query): its phase and its chart's row. */
class ChartRunProgress {
  private phase = 'Running';
  private readonly row: ChartProgress;

  constructor(run: ChartRun, control: RunControl) {
    this.row = { chart: run.chart, release: run.release, namespace: run.namespace, state: 'deploying' };
    setHandler(progressQuery, () => ({
      phase: this.phase,
      groups: [{ name: run.chart, sequenced: true, state: groupStateOf(this.phase), charts: [this.row] }],
      ...control.progress(),
      ...statusWriteFailures(),
    }));
  }

  finished(outcome: ChartOutcome): ChartOutcome {
    this.phase = chartOutcomeStatus(outcome).phase;
    Object.assign(this.row, { state: chartState(outcome), revision: outcome.revision ?? undefined });
    return outcome;
  }

  failed(err: unknown): void {
    this.phase = 'Failed';
    Object.assign(this.row, { state: 'failed', error: rootMessage(err) });
  }
}

/** The run's notifier: the canary child's events come here, to be notified in this run's order. */
function chartNotifier(run: ChartRun): RunNotifier {
  const events = new CanaryEventsNotifier(
    run.mode === 'uninstall'
      ? undefined
      : notifyTarget('ArmadaChart', chartObject(run).namespace, run.chart, run.spec),
  );
  setHandler(notificationSignal, (event) => events.take(event));
  return events.notifier;
}

/** A chart of a group: only its release; the group reports it. */
async function driveInGroup({ run, control, canary, shown, notifier }: ChartRunParts): Promise<ChartOutcome> {
  try {
    return shown.finished(await driveRelease(run, control, canary));
  } catch (err) {
    shown.failed(err);
    throw err;
  } finally {
    await notifier.settled();
  }
}

/** A chart that stands alone: its release, its status and notifications, and its own rollback. */
async function driveStandalone(parts: ChartRunParts): Promise<ChartOutcome> {
  const { run, control, canary, shown, notifier } = parts;
  const where = `${run.namespace}/${run.release}`;
  const resource = chartResource(run);
  control.followPause((paused) => reportPause(...resource, paused));
  await report(...resource, 'Deploying', where);
  void notifier.notify({ event: 'started', reason: where });
  let outcome: ChartOutcome | undefined;
  try {
    outcome = await driveRelease(run, control, canary);
  } catch (err) {
    // A failure under a re-plan (its canary rolled back for it) is not the end: the new specs run.
    if (!control.replan) {
      shown.failed(err);
      await report(...resource, 'Failed', rootMessage(err));
      await notifier.notify({ event: 'failed', reason: rootMessage(err) });
      throw err;
    }
  }
  // The writes of the runs this one continued from (re-plans): undone with its own.
  const carried = (run.carried?.changes ?? []).filter(isReleaseChange);
  if (control.replan) {
    await notifier.settled();
    return startOver(control.replan, control, [...carried, ...(outcome ? chartWrites(outcome) : [])]);
  }
  return endStandalone(parts, outcome!, carried);
}

/**
 * A standalone chart's end: a rollback asked for while helm wrote the release puts it back as it
 * was before this run and the runs it continued from; then its final status and notification.
 */
async function endStandalone(
  { run, control, shown, notifier }: ChartRunParts,
  driven: ChartOutcome,
  carried: ReleaseChange[],
): Promise<ChartOutcome> {
  const resource = chartResource(run);
  let outcome = driven;
  const undo = chartRollback(outcome, control.stopRequested !== null, carried);
  if (undo.length) {
    await report(
      ...resource,
      'RollingBack',
      `rollback requested by ${control.stopRequested!.by ?? 'an operator'}`,
    );
    await undoChanges(undo);
    outcome = { ...outcome, action: 'rolled-back', revision: undo[0].before };
  } else if (carried.length) outcome = { ...outcome, carriedChanges: carried };
  const done = chartOutcomeStatus(shown.finished(outcome));
  await report(...resource, done.phase, done.message, { helm: done.helm });
  await notifier.notify({ ...endingEvent(outcome.action), reason: done.message });
  return outcome;
}

/** The ArmadaChart object whose status a standalone chart run writes: kind, namespace, name. */
function chartResource(run: ChartRun) {
  return ['ArmadaChart', chartObject(run).namespace, run.chart] as const;
}

/** The one group row of a chart run's progress, by the run's phase. */
function groupStateOf(phase: string): GroupProgress['state'] {
  return phase === 'Running' ? 'running' : phase === 'Failed' ? 'failed' : 'done';
}
