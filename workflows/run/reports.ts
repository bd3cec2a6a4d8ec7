import { setHandler } from '@temporalio/workflow';
import { notificationSignal } from '../messages';
import { CanaryEventsNotifier, RunNotifier } from '../notify';
import { report, reportOffPath, reportPause, statusWritesSettled } from '../status';
import {
  approvedNote,
  gateWaiting,
  reportChartDeploying,
  reportChartDone,
  reportChartFailed,
  reportGroupStarted,
  reportManifestPhase,
  type StatusWrite,
} from '../deploy-status';
import { groupEndMessage, groupEnding } from '../../core/plan/ending';
import { endingEvent, notifyTarget } from '../../core/plan/notifications';
import type { Approved } from '../../core/control';
import type { ChartOutcome, GroupOutcome } from '../../core/contracts/workflows';
import type { DeployRunInput, DeployRunOutcome } from '../../core/contracts/run';
import type { ChartPlan, GroupPlan, ManifestPlan } from '../../core/plan/plans';
import type { RunControl } from '../control';
import type { RunProgress } from './progress';

/**
 * What a run tells its users, as the manifest, group and chart workflows did (decision 5): the
 * status and Events of the ArmadaManifest, of each ArmadaChartGroup and of each ArmadaChart it
 * deploys, the manifest's `ArmadaPhase` search attribute, its notifications and its charts'
 * canaries'. Every status write but the last is off the run's path (`reportOffPath`: writes of
 * one object stay in order), so a group transition costs no round trip for them; the run ends
 * once they are all done.
 */
export class RunReports {
  private readonly notifier: RunNotifier;
  /** The notifiers of the charts whose canaries sent events, by chart. */
  private readonly charts = new Map<string, CanaryEventsNotifier>();
  /** The group whose charts run now: a pause is shown on it too. */
  private runningGroup?: string;
  /** Who approved the gate just passed, for the manifest's next message. */
  private approved = '';
  private readonly plan: ManifestPlan;
  private readonly uninstall: boolean;
  /** A retry's note on the run's first message: the run it takes up. */
  private readonly retry: string;

  constructor(
    { plan, mode, resume }: DeployRunInput,
    private readonly control: RunControl,
    private readonly shown: RunProgress,
  ) {
    this.plan = plan;
    this.uninstall = mode === 'uninstall';
    this.retry = resume ? `; retry of run ${resume.retryOf}` : '';
    // An uninstall notifies no one, as the manifest workflow's.
    this.notifier = new RunNotifier(this.uninstall ? undefined : plan.notify, () => control.approvals);
    setHandler(notificationSignal, (event) => this.canaryEventsOf(event.object.name).take(event));
    control.followPause((paused) => {
      shown.show(() => undefined);
      const { namespace, manifest } = plan;
      const group = this.runningGroup;
      return Promise.all([
        reportPause('ArmadaManifest', namespace, manifest, paused),
        group !== undefined && reportPause('ArmadaChartGroup', namespace, group, paused),
      ]).then(() => undefined);
    });
  }

  /** The run starts: the manifest Running (or Uninstalling), the `started` notification. */
  started(): void {
    const groups = `${this.plan.groups.length} groups${this.retry}`;
    void this.phase(this.working, groups);
    void this.notifier.notify({ event: 'started', reason: groups });
  }

  /** The gate before `group` waits for approval. */
  gateOpened(group: GroupPlan, gate: string): void {
    const waiting = gateWaiting(group.name);
    void this.phase('WaitingApproval', waiting.message, waiting.waitingOn);
    void this.notifier.notify({ event: 'waiting-approval', gate });
  }

  /** The gate `gate` was approved: named in the manifest's next message. */
  gateApproved(gate: string, by: Approved): void {
    this.approved = approvedNote(gate, by);
  }

  /** A group's charts start (its row already shows it running). */
  groupStarted(group: GroupPlan): void {
    const { namespace } = this.plan;
    this.runningGroup = group.name;
    void this.phase(this.working, `group ${group.name}${this.approved}`);
    this.approved = '';
    void reportGroupStarted(namespace, group, this.uninstall, reportOffPath);
    if (this.control.paused) void reportPause('ArmadaChartGroup', namespace, group.name, this.control.paused);
  }

  /** A group's charts ended: its final status; `finished`: those a retry's failed run had done. */
  groupEnded(group: GroupPlan, outcome: GroupOutcome, finished: readonly string[] = []): void {
    this.runningGroup = undefined;
    const { phase } = groupEnding({
      uninstall: this.uninstall,
      standalone: false,
      rollbackRequested: this.control.stopRequested !== null,
      failed: outcome.failed.length > 0,
      stopped: outcome.stopped,
    });
    const message = groupEndMessage({
      phase,
      uninstall: this.uninstall,
      charts: group.charts.length,
      done: outcome.outcomes.length,
      finishedBefore: finished.length,
      failed: outcome.failed.map((f) => f.chart),
    });
    void reportOffPath('ArmadaChartGroup', this.plan.namespace, group.name, phase, message);
  }

  chartStarted(chart: ChartPlan): void {
    void reportChartDeploying(this.plan.namespace, chart, reportOffPath);
  }

  chartDone(outcome: ChartOutcome): void {
    void reportChartDone(this.plan.namespace, outcome, reportOffPath);
  }

  chartFailed(chart: ChartPlan, error: string): void {
    void reportChartFailed(this.plan.namespace, chart.chart, error, reportOffPath);
  }

  /** The run rolls back what it changed, saying why. */
  rollingBack(why: string): Promise<unknown> {
    return this.phase('RollingBack', why);
  }

  /**
   * The run ends as `ending` says (workflows/run/saga.ts): the manifest's final phase, once every
   * write before it is done, then the ending notification; `failure`: why the run failed.
   */
  async ended(ending: { phase: string; state: DeployRunOutcome['state'] }, failure?: string): Promise<void> {
    await Promise.all([
      this.phase(ending.phase, failure ?? `${this.plan.manifest}: ${ending.state}`, undefined, report),
      statusWritesSettled(),
    ]);
    await this.notifier.notify(endingEvent(ending.state, failure));
    await this.settled();
  }

  /** Every notification sent so far delivered or given up (before a run continues as new). */
  async settled(): Promise<void> {
    await Promise.all([
      this.notifier.settled(),
      ...[...this.charts.values()].map((c) => c.notifier.settled()),
    ]);
  }

  /** The manifest's phase while the run works: Running, or Uninstalling. */
  private get working(): string {
    return this.uninstall ? 'Uninstalling' : 'Running';
  }

  /** The manifest's phase, in the run's progress and in its status (off the path unless `write` says). */
  private phase(phase: string, message: string, waitingOn?: string, write: StatusWrite = reportOffPath) {
    this.shown.show((p) => Object.assign(p, { phase, waitingOn }));
    return reportManifestPhase(this.plan, this.shown.now(), phase, message, write);
  }

  /** The notifier of a chart's canary's events (its chart's `notifications`). */
  private canaryEventsOf(chart: string): CanaryEventsNotifier {
    let events = this.charts.get(chart);
    if (!events) {
      const spec = this.plan.groups.flatMap((g) => g.charts).find((c) => c.chart === chart)?.spec;
      events = new CanaryEventsNotifier(
        spec && notifyTarget('ArmadaChart', this.plan.namespace, chart, spec),
        chart,
      );
      this.charts.set(chart, events);
    }
    return events;
  }
}
