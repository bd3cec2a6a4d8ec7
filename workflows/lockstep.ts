import {
  CancellationScope,
  condition,
  getExternalWorkflowHandle,
  setCurrentDetails,
  setHandler,
  workflowInfo,
  type ChildWorkflowHandle,
  type SignalDefinition,
  type Workflow,
} from '@temporalio/workflow';
import type { RunControl } from './control';
import type { SignalForwarder } from './holds';
import {
  approveSignal,
  lockstepGoSignal,
  lockstepReportSignal,
  lockstepSteerableSignal,
  pauseSignal,
  promoteSignal,
  resumeSignal,
  rollbackSignal,
} from './messages';
import type { Approved, Request } from '../core/control';
import type { CanaryProgress } from '../core/progress';
import {
  awaitedOfSet,
  lockstepMembers,
  lockstepView,
  releasedStep,
  takeReport,
  type LockstepLink,
  type LockstepSteerable,
  type MemberReport,
  type MemberState,
} from '../core/plan/lockstep';
import type { GroupPlan } from '../core/plan/plans';
import { markdownOf } from '../core/plan/progress-view';

/** What a member needs of its canary: the progress it shows and the way it shows it. */
interface SteppedCanary {
  readonly progress: CanaryProgress;
  publish(message: string): Promise<number>;
}

/**
 * A canary in a lockstep set (runs in the canary workflow): reports each progress update to
 * the coordinator, and before each step (and before promoting) waits for the coordinator's go.
 * A stop (its own rollback, the coordinator's for the set, a re-plan) ends the wait; the canary
 * then rolls back as it always does.
 */
export class LockstepMember {
  private go = -1;
  private sent = 0;
  private readyFor?: number;

  constructor(
    private readonly link: LockstepLink,
    private readonly control: RunControl,
  ) {
    setHandler(lockstepGoSignal, (index) => {
      this.go = Math.max(this.go, index);
    });
  }

  /**
   * Waits until every member has passed the steps before `index` (`steps`: before promoting),
   * then while paused; false when the canary must roll back instead.
   */
  async mayStart(index: number, canary: SteppedCanary): Promise<boolean> {
    if (this.go < index) {
      this.readyFor = index;
      canary.progress.waitingOn = 'the lockstep set';
      await canary.publish(
        `${canary.progress.target}: waiting for the lockstep set to ${awaitedOfSet(index)}`,
      );
      await condition(() => this.go >= index || this.control.stopping);
      this.readyFor = undefined;
    }
    return this.control.mayContinue();
  }

  /** Tells the coordinator where this canary stands (off the path: a signal, not awaited). */
  report(p: CanaryProgress): void {
    const report: MemberReport = {
      member: this.link.member,
      // Workflow time first: a run this one continues as (a long hold) goes on counting upwards.
      seq: Date.now() * 1000 + (++this.sent % 1000),
      phase: p.phase,
      step: p.step,
      steps: p.steps,
      percent: p.percent,
      ...(p.waitingOn !== undefined && { waitingOn: p.waitingOn }),
      ...(p.gate && { gate: p.gate.name }),
      ...(this.readyFor !== undefined && { readyFor: this.readyFor }),
      ...(p.reason !== undefined && { reason: p.reason }),
    };
    getExternalWorkflowHandle(this.link.coordinator)
      .signal(lockstepReportSignal, report)
      .catch(() => undefined);
  }
}

/** The signals a lockstep set passes on to its members itself (LockstepCoordinator.forward). */
export const STEERED_BY_SET: ReadonlySet<string> = new Set([
  pauseSignal.name,
  resumeSignal.name,
  rollbackSignal.name,
]);

/**
 * The group run's side of a lockstep set (its canary charts and Deployers): lets every member
 * start step k once all have passed step k−1 (and promote once all passed the last), rolls back
 * every member when one fails, and fans pause, resume, rollback, approve and promote sent to the
 * group out to the members. A member that joins late (its chart was still observing) gets what
 * the set already got: the pause, the rollback, the promote. A group workflow's set lives as long
 * as its run; the one-workflow run (workflows/run/lockstep.ts) `close`s each group's set.
 */
export class LockstepCoordinator {
  /** Each member by its name in the set, with the workflow that takes its go, rollback and control. */
  private readonly members = new Map<
    string,
    MemberState & { workflowId: string; told: number; approvalsSent: Set<string> }
  >();
  /** Why every member rolls back, once one failed or the group was told to roll back. */
  private stopFor: Request | null = null;
  /** Gates the group approved, with the approval each member gets when it waits there. */
  private readonly approvedGates = new Map<string, Approved>();
  /** The manifest run this group belongs to, told what of the set it may steer (LockstepRelay). */
  private readonly manifest = workflowInfo().parent?.workflowId;
  /** What the manifest was told last. */
  private told = JSON.stringify({ promotable: false });
  /** The run's hints before the set took them over, given back on `close`. */
  private readonly hints: Pick<RunControl, 'approvalHint' | 'promoteRefusal'>;
  private closed = false;

  /**
   * `namespace`: the group's, where its charts' canary workflows are named (lockstepMembers).
   * `show`: where the set's table goes (the run's current details).
   */
  constructor(
    private readonly group: GroupPlan,
    namespace: string,
    private readonly control: RunControl,
    private readonly show: (details: string) => void = setCurrentDetails,
  ) {
    for (const { member, workflowId } of lockstepMembers(group, namespace))
      this.members.set(member, { workflowId, passedBefore: -1, told: -1, approvalsSent: new Set() });
    setHandler(lockstepReportSignal, (report) => this.onReport(report));
    this.hints = { approvalHint: control.approvalHint, promoteRefusal: control.promoteRefusal };
    control.approvalHint = 'no member of the lockstep set waits for approval now';
    control.promoteRefusal = () =>
      this.joined().length ? undefined : 'no canary of the lockstep set is running now';
    // Outside cancellation, as RunControl.followPause: a cancelled group's waits must not reject.
    void CancellationScope.nonCancellable(() => Promise.all([this.fanOutApprovals(), this.fanOutPromote()]));
  }

  /** The link a member's run hands to its canary (a chart's, `deployerMember` for a Deployer's); none outside the set. */
  link(member: string): LockstepLink | undefined {
    return this.members.has(member) ? { coordinator: workflowInfo().workflowId, member } : undefined;
  }

  /** The group's pause, resume and rollback, passed on to every member (see RunControl.listen); a freeze reaches them through their charts. */
  readonly forward: SignalForwarder = (signal, req) => {
    if (signal.name === rollbackSignal.name) this.stopAll(req ?? {});
    else if (STEERED_BY_SET.has(signal.name)) for (const name of this.joined()) this.tell(name, signal, req);
  };

  /**
   * The set's group ended (every member did): the run's approvals, promotes and hints are its own
   * again, for the gates and canaries that come after it.
   */
  close(): void {
    this.closed = true;
    if (this.control.gate) this.control.closeGate();
    this.control.promoteRequested = null;
    Object.assign(this.control, this.hints);
  }

  /** A member's chart or Deployer run ended; a failure rolls back every other member. */
  memberEnded(name: string, error?: string): void {
    const member = this.members.get(name);
    if (!member) return;
    member.ended = error === undefined ? 'deployed' : 'failed';
    if (error !== undefined)
      this.stopAll({ by: `lockstep set ${this.group.name}`, reason: `${name} failed: ${error}` });
    this.release();
  }

  private onReport(report: MemberReport): void {
    if (this.closed) return; // a report that came after its group ended
    const member = this.members.get(report.member);
    const first = member?.report === undefined;
    if (!member || !takeReport(member, report)) return;
    if (report.phase === 'RollingBack' && !this.stopFor)
      this.stopAll({ by: `lockstep set ${this.group.name}`, reason: `${report.member}: ${report.reason}` });
    else if (first && this.stopFor) this.tell(report.member, rollbackSignal, this.stopFor);
    if (first && this.control.paused) this.tell(report.member, pauseSignal, this.control.paused);
    if (first && this.control.promoteRequested)
      this.tell(report.member, promoteSignal, this.control.promoteRequested);
    if (report.gate && this.approvedGates.has(report.gate)) this.passOnApproval(report.member, report.gate);
    this.followGates();
    this.release();
  }

  /** Sends go to each member waiting at a step every member has reached. */
  private release(): void {
    const released = releasedStep(this.members);
    for (const [name, m] of this.members) {
      const waiting = m.report?.readyFor;
      if (m.ended || waiting === undefined || waiting > released || m.told >= waiting) continue;
      m.told = waiting;
      this.tell(name, lockstepGoSignal, waiting);
    }
    this.show(markdownOf(lockstepView(this.group.name, this.members, this.stopFor?.reason)));
    this.tellManifest();
  }

  /** Tells the manifest, when what it may steer changed: the gate the set waits at, a member to promote. */
  private tellManifest(): void {
    if (!this.manifest) return;
    const gate = this.control.approved ? undefined : this.control.gate?.name;
    const steerable: LockstepSteerable = {
      ...(gate !== undefined && { gate }),
      promotable: !this.control.promoteRequested && this.joined().length > 0,
    };
    const told = JSON.stringify(steerable);
    if (told === this.told) return;
    this.told = told;
    getExternalWorkflowHandle(this.manifest)
      .signal(lockstepSteerableSignal, steerable)
      .catch(() => undefined);
  }

  /** Rolls back every member (once): those running now, and any that joins later. */
  private stopAll(req: Request): void {
    if (this.stopFor) return;
    this.stopFor = req;
    for (const name of this.joined()) {
      const phase = this.members.get(name)!.report!.phase;
      if (phase !== 'RollingBack' && phase !== 'RolledBack') this.tell(name, rollbackSignal, req);
    }
    this.show(markdownOf(lockstepView(this.group.name, this.members, req.reason)));
  }

  /**
   * Keeps the group's gate on the approval its members wait at: opens it when one waits at a gate
   * not approved yet, closes it when none waits there any longer (each approved on its own).
   */
  private followGates(): void {
    const waiting = [...this.members.values()].flatMap((m) =>
      !m.ended && m.report?.gate && !this.approvedGates.has(m.report.gate) ? [m.report.gate] : [],
    );
    const open = this.control.gate?.name;
    if (open !== undefined && !waiting.includes(open) && !this.control.approved) this.control.closeGate();
    if (this.control.gate === null && waiting.length) this.control.openGate(waiting[0]);
  }

  /** An approval of the group passes its gate for every member, now or when it gets there. */
  private async fanOutApprovals(): Promise<void> {
    for (;;) {
      await condition(() => this.control.approved !== null || this.closed);
      if (this.closed) return;
      const approved = this.control.closeGate()!;
      this.approvedGates.set(approved.gate, approved);
      for (const [name, m] of this.members)
        if (m.report?.gate === approved.gate) this.passOnApproval(name, approved.gate);
      this.followGates();
      this.tellManifest();
    }
  }

  private passOnApproval(name: string, gate: string): void {
    const member = this.members.get(name)!;
    if (member.approvalsSent.has(gate)) return;
    member.approvalsSent.add(gate);
    const approved = this.approvedGates.get(gate)!;
    // With the bridge's proof: the member checks it as the group did (its root or parent was steered).
    this.tell(name, approveSignal, { gate, by: approved.by, reason: approved.reason, proof: approved.proof });
  }

  /** A promote of the group promotes every member, now or when it joins. */
  private async fanOutPromote(): Promise<void> {
    await condition(() => this.control.promoteRequested !== null || this.closed);
    if (this.closed) return;
    for (const name of this.joined()) this.tell(name, promoteSignal, this.control.promoteRequested!);
    this.tellManifest();
  }

  /** Members whose canary has reported and whose chart run has not ended. */
  private joined(): string[] {
    return [...this.members].filter(([, m]) => m.report && !m.ended).map(([name]) => name);
  }

  private tell<Args extends unknown[]>(member: string, signal: SignalDefinition<Args>, ...args: Args): void {
    getExternalWorkflowHandle(this.members.get(member)!.workflowId)
      .signal(signal, ...args)
      .catch(() => undefined);
  }
}

/**
 * The manifest's side of its lockstep groups: approve and promote sent to the manifest go on to
 * the group that runs now, when its set waits at an approval or has a canary to promote (the
 * group says so: lockstepSteerableSignal). The set's gate opens on the manifest meanwhile, so an
 * approval names it and is checked as the manifest's own gates are. Pause, resume and rollback
 * reach the group as they always did.
 */
export class LockstepRelay {
  private steerable: LockstepSteerable = { promotable: false };
  /** The set's gate, while it is open on the manifest. */
  private gate?: string;

  constructor(
    private readonly control: RunControl,
    /** The group that runs now, if any. */
    private readonly group: () => ChildWorkflowHandle<Workflow> | undefined,
  ) {
    setHandler(lockstepSteerableSignal, (steerable) => this.take(steerable));
    const refusePromote = control.promoteRefusal;
    control.promoteRefusal = () => (this.steerable.promotable ? undefined : refusePromote());
    void CancellationScope.nonCancellable(() => Promise.all([this.passOnApprovals(), this.passOnPromotes()]));
  }

  /** The group ended: nothing of its set is left to steer. */
  groupEnded(): void {
    this.take({ promotable: false });
  }

  private take(steerable: LockstepSteerable): void {
    this.steerable = steerable;
    const { control } = this;
    if (this.gate !== undefined && this.gate !== steerable.gate && control.gate?.name === this.gate) {
      control.closeGate();
      this.gate = undefined;
    }
    if (steerable.gate !== undefined && control.gate === null) {
      control.openGate(steerable.gate);
      this.gate = steerable.gate;
    }
  }

  private async passOnApprovals(): Promise<void> {
    const { control } = this;
    for (;;) {
      await condition(
        () => this.gate !== undefined && control.gate?.name === this.gate && control.approved !== null,
      );
      const { gate, by, reason, proof } = control.closeGate()!;
      this.gate = undefined;
      this.group()
        ?.signal(approveSignal, { gate, by, reason, proof })
        .catch(() => undefined);
    }
  }

  private async passOnPromotes(): Promise<void> {
    const { control } = this;
    for (;;) {
      await condition(() => control.promoteRequested !== null);
      const req = control.promoteRequested!;
      control.promoteRequested = null;
      this.steerable = { ...this.steerable, promotable: false };
      this.group()
        ?.signal(promoteSignal, req)
        .catch(() => undefined);
    }
  }
}
