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
  manifestProgress,
  reportGroupStarted,
  reportManifestPhase,
  type StatusWrite,
} from '../deploy-status';
import { groupEndState } from '../../core/plan/run';
import { groupEndMessage, groupEnding } from '../../core/plan/ending';
import { endingEvent, notifyTarget } from '../../core/plan/notifications';
import { reportedObjects } from '../../core/plan/plans-of-one';
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
  /** Which objects of the plan it writes the status of (a plan of one's kind: reportedObjects). */
  private readonly writes: ReturnType<typeof reportedObjects>;

  constructor(
    { plan, mode, resume }: DeployRunInput,
    private readonly control: RunControl,
    private readonly shown: RunProgress,
  ) {
    this.plan = plan;
    this.uninstall = mode === 'uninstall';
    this.retry = resume ? `; retry of run ${resume.retryOf}` : '';
    this.writes = reportedObjects(plan.kind);
    // An uninstall notifies no one, as the manifest workflow's.
    this.notifier = new RunNotifier(this.uninstall ? undefined : plan.notify, () => control.approvals);
    setHandler(notificationSignal, (event) => this.canaryEventsOf(event.object.name).take(event));
    control.followPause((paused) => {
      shown.show(() => undefined);
      const { namespace, manifest } = plan;
      const group = this.runningGroup;
      return Promise.all([
        this.writes.manifest && reportPause('ArmadaManifest', namespace, manifest, paused),
        this.writes.groups &&
          group !== undefined &&
          reportPause('ArmadaChartGroup', namespace, group, paused),
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
    if (!this.writes.groups) return;
    void reportGroupStarted(namespace, group, this.uninstall, reportOffPath);
    if (this.control.paused) void reportPause('ArmadaChartGroup', namespace, group.name, this.control.paused);
  }

  /** A group's charts ended: its final status; `finished`: those a retry's failed run had done. */
  groupEnded(group: GroupPlan, outcome: GroupOutcome, finished: readonly string[] = []): void {
    this.runningGroup = undefined;
    // The manifest's PROGRESS counts a group as it ends, not only as the next one starts: a run
    // paused, held or at a gate before its next group shows how far it got. (Its status only:
    // the phase, and so ArmadaPhase, is unchanged.)
    if (this.writes.manifest && groupEndState(outcome) === 'done')
      void reportOffPath(
        'ArmadaManifest',
        this.plan.namespace,
        this.plan.manifest,
        this.working,
        `group ${group.name} done`,
        manifestProgress(this.plan, this.shown.now()),
      );
    if (!this.writes.groups) return;
    const { phase, rollBack } = groupEnding({
      uninstall: this.uninstall,
      standalone: this.writes.standaloneGroup,
      rollbackRequested: this.control.stopRequested !== null,
      failed: outcome.failed.length > 0,
      stopped: outcome.stopped,
    });
    // A standalone group that rolls back says so, and how it ended, as the run's saga undoes (ended).
    if (rollBack) return;
    const message = groupEndMessage({
      phase,
      uninstall: this.uninstall,
      charts: group.charts.length,
      done: outcome.outcomes.length,
      finishedBefore: finished.length,
      ...(outcome.deployers && {
        deployers: { rolledOut: outcome.deployers.length, total: group.deployers?.length ?? 0 },
      }),
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

  /** A Deployer's rollout could not start (its ID held, say): the Deployer says so, as a group workflow's did. */
  deployerFailed(name: string, error: string): void {
    void reportOffPath('Deployer', this.plan.namespace, name, 'Failed', error);
  }

  /** The run rolls back what it changed, saying why (a standalone group: in its own workflow's words). */
  rollingBack(why: string): Promise<unknown> {
    const stop = this.control.stopRequested;
    return Promise.all([
      this.phase('RollingBack', why),
      this.writes.standaloneGroup &&
        reportOffPath(
          'ArmadaChartGroup',
          this.plan.namespace,
          this.plan.manifest,
          'RollingBack',
          stop ? `rollback requested by ${stop.by ?? 'an operator'}` : why,
        ),
    ]);
  }

  /**
   * The run ends as `ending` says (workflows/run/saga.ts): the manifest's final phase, once every
   * write before it is done, then the ending notification; `failure`: why the run failed.
   */
  async ended(
    ending: { phase: string; state: DeployRunOutcome['state']; rollBack: boolean },
    failure?: string,
    rolledBack: readonly string[] = [],
  ): Promise<void> {
    await Promise.all([
      this.phase(ending.phase, failure ?? `${this.plan.manifest}: ${ending.state}`, undefined, report),
      statusWritesSettled(),
    ]);
    // A standalone group's rollback ends as its own workflow's did (groupEnded left it).
    if (this.writes.standaloneGroup && ending.rollBack)
      await report(
        'ArmadaChartGroup',
        this.plan.namespace,
        this.plan.manifest,
        'RolledBack',
        `rolled back: ${rolledBack.join(', ') || 'nothing had changed'}`,
      );
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
    // A plan of one has no ArmadaManifest: its phase goes to the run's search attribute alone.
    const written: StatusWrite = this.writes.manifest ? write : () => Promise.resolve();
    return reportManifestPhase(this.plan, this.shown.now(), phase, message, written);
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
