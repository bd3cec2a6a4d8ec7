import {
  allHandlersFinished,
  CancellationScope,
  condition,
  log,
  makeContinueAsNewFunc,
  setHandler,
  upsertMemo,
  workflowInfo,
  type SignalDefinition,
} from '@temporalio/workflow';
import {
  approveSignal,
  approveUpdate,
  pauseSignal,
  promoteSignal,
  promoteUpdate,
  replanSignal,
  resumeSignal,
  rollbackSignal,
} from './messages';
import type {
  Approval,
  Approved,
  Carried,
  ControlProgress,
  Gate,
  Pause,
  Refusal,
  Replan,
  Request,
} from '../core/control';
import { Holds, type SignalForwarder } from './holds';
import {
  PROOF_WINDOW_MS,
  proofProblem,
  recordedBy,
  ruleRefusal,
  type GateRules,
  type Proof,
  type Steering,
} from '../core/plan/steering';
import type { Change } from '../core/plan/changes';
import type { ObjectRef, SteeringVerb } from '../core/plan/run-objects';

/** What a run hands its child runs at their start (RunControl.handedDown). */
export type HandedDown = Pick<Carried, 'frozen' | 'steering'>;

/** A child's input field `carried` with what its parent hands down; none when there is nothing. */
export function carriedDown(handed: HandedDown): { carried?: HandedDown } {
  return Object.keys(handed).length ? { carried: handed } : {};
}

/**
 * Where a steering message naming an object inside the run goes, when not to the run itself:
 * refused (why), or passed on (`pass` sends it on and answers what it did).
 */
export type TargetRoute =
  { refused: string } | { pass: (signal: SignalDefinition<[Approval?]>, req: Approval) => string };

/** Refusals kept for the progress query: the newest few tell a person enough. */
const REFUSALS_KEPT = 5;

/**
 * Operator control of one run: pause/resume, a stop for rollback, approval gates, promote,
 * cancellation, re-plans. State only; the workflow asks it whether to go on at its safe points
 * (before a chart or group starts) and opens a gate where it waits for approval. A pause is data
 * with a timestamp, so it survives replay and tells a person why the run waits; it is carried
 * (with an approval given in the same moment) into the run a re-plan or a long hold continues as.
 *
 * Approve and promote are checked before they are taken: an approval needs an open gate (the one
 * it names, when it names one); a promote needs a canary that can still promote. An Update is
 * refused to its caller; a signal (for tools that only signal) is refused in the log and in the
 * progress query. Nothing is banked for a later gate.
 *
 * Cancelling a run (Temporal's cancel) is taken as a stop, not as an abort: the workflow body
 * runs in a non-cancellable scope, so Helm calls in flight finish and nothing is left pending;
 * no new chart or group starts; then the workflow decides what to undo and ends cancelled.
 *
 * A re-plan (newer specs from the bridge) also starts nothing more, but undoes nothing: the
 * workflow starts over with the new specs (`startOver`) once what runs has finished. A canary
 * takes it as a rollback of the version in flight, then steps the new one from the first step;
 * a version already Ready at 100 % is kept, and the new one steps from it.
 */
export class RunControl {
  paused: Pause | null;
  stopRequested: Request | null = null;
  /** A canary's promote: skip the remaining steps. */
  promoteRequested: Request | null = null;
  cancelled = false;
  /** The newest specs the bridge sent, if any: the run starts over with them. */
  replan: Replan | null = null;
  /** The approval gate the run waits at now. */
  gate: Gate | null = null;
  /** The approval of the open gate, once given. */
  approved: Approved | null;
  /** Every approval given in this run and the runs it continued from, oldest first. */
  readonly approvals: Approved[];
  readonly refused: Refusal[] = [];
  /**
   * Why promote is refused now, or undefined when it may go ahead. A run without a canary always
   * refuses; a canary sets its own rule.
   */
  promoteRefusal: () => string | undefined = () =>
    'promote steers a canary (an ArmadaChart with canary steps, or a Deployer); this run has none';
  /** Where an approval is refused while no gate waits: what to approve instead. */
  approvalHint: string;
  /**
   * Where a message with a `target` goes (a run with charts inside it sets it: deployRun);
   * undefined, or unset: the run takes it as its own, as every message without one.
   */
  targeted: (verb: SteeringVerb, target: ObjectRef) => TargetRoute | undefined = () => undefined;
  /** Told of each re-plan after it is recorded, e.g. to pass it on to a canary child. */
  onReplan: (replan: Replan) => void = () => {};
  /** The cluster freeze and the run's deploy windows (the workflow sets them: `holds.use`). */
  readonly holds: Holds;
  /** The bridge's key and the specs' authors, as the run was started (the key) and re-planned (the authors). */
  readonly steering: Steering | undefined;
  /** Proofs taken within their window, oldest first. */
  private usedProofs: Proof[];

  /**
   * `carried`: what the run this one continued from handed on. Set the hints (and a canary's
   * promote rule) before `listen`: an Update in the run's first task is checked as its handler
   * is registered.
   */
  constructor(carried: Carried = {}, { approvalHint = '' }: { approvalHint?: string } = {}) {
    this.approvalHint = approvalHint;
    this.paused = carried.paused ?? null;
    this.approved = carried.approved ?? null;
    this.approvals = [...(carried.approvals ?? [])];
    this.holds = new Holds(carried.frozen);
    this.steering = carried.steering;
    this.usedProofs = [...(carried.usedProofs ?? [])];
    this.carriedGateApprovals = carried.gateApprovals ?? [];
  }

  private carriedGateApprovals: Approved[];

  /** Registers the handlers and the cancellation listener; call at the top of the workflow. */
  listen(forward: SignalForwarder = () => {}, onCancel: () => void = () => {}): this {
    CancellationScope.current().cancelRequested.catch(() => {
      this.cancelled = true;
      onCancel();
    });
    setHandler(pauseSignal, (req) => {
      if (this.steeredElsewhere('pause', pauseSignal, req)) return;
      const taken = this.take('pause', req);
      this.paused ??= { ...taken, since: new Date().toISOString() };
      forward(pauseSignal, req);
    });
    setHandler(resumeSignal, (req) => {
      if (this.steeredElsewhere('resume', resumeSignal, req)) return;
      this.take('resume', req);
      this.paused = null;
      forward(resumeSignal, req);
    });
    setHandler(rollbackSignal, (req) => {
      if (this.steeredElsewhere('rollback', rollbackSignal, req)) return;
      const taken = this.take('rollback', req);
      this.stopRequested ??= taken;
      forward(rollbackSignal, req);
    });
    // `temporal workflow update execute` may send no input: taken as an approval without a name.
    setHandler(
      approveUpdate,
      (req) => this.passOn('approve', approveSignal, req) ?? this.approve(req ?? {}),
      {
        validator: (req) =>
          refuseWith(this.refusalFor('approve', req, () => this.approvalRefusal(req ?? {}))),
      },
    );
    setHandler(approveSignal, (req = {}) => {
      if (this.steeredElsewhere('approve', approveSignal, req)) return;
      if (!this.refusedSignal('approve', req, this.approvalRefusal(req))) this.approve(req);
    });
    setHandler(
      promoteUpdate,
      (req) => this.passOn('promote', promoteSignal, req) ?? this.promote(req ?? {}),
      {
        validator: (req) => refuseWith(this.refusalFor('promote', req, () => this.promoteRefusal())),
      },
    );
    setHandler(promoteSignal, (req = {}) => {
      if (this.steeredElsewhere('promote', promoteSignal, req)) return;
      if (!this.refusedSignal('promote', req, this.promoteRefusal())) this.promote(req);
    });
    this.holds.listen(forward);
    setHandler(replanSignal, (replan) => {
      this.replan = replan;
      announceReplan(replan);
      this.onReplan(replan);
    });
    return this;
  }

  /** Whether the run must start nothing more: a rollback signal, a cancellation or a re-plan. */
  get stopping(): boolean {
    return this.stopRequested !== null || this.cancelled || this.replan !== null;
  }

  /** Waits while paused; returns false when the run is stopping. */
  async mayContinue(): Promise<boolean> {
    await condition(() => this.paused === null || this.stopping);
    return !this.stopping;
  }

  /**
   * Opens the gate `name`: approvals are taken for it from now on. An approval carried from the
   * run this one continued from passes it at once when it was for the same gate. `since`: when
   * the gate opened, for one that a run continuing as new opens again.
   */
  openGate(name: string, since = new Date().toISOString(), rules?: GateRules): void {
    const taken = this.carriedGateApprovals.filter((a) => a.gate === name);
    this.carriedGateApprovals = [];
    this.gate = { name, since, ...(rules && { rules }), ...(taken.length && { approvals: taken }) };
    if (this.approved && this.approved.gate !== name) this.approved = null;
  }

  /** Closes the open gate; returns its approval, if it was given. */
  closeGate(): Approved | null {
    const approved = this.approved;
    this.gate = null;
    this.approved = null;
    return approved;
  }

  /**
   * Waits at the gate `name` for its approval, a stop, or the timeout. Returns how the wait
   * ended (and who approved).
   */
  async approval(
    name: string,
    timeoutMs?: number,
    rules?: GateRules,
  ): Promise<{ decision: 'approved'; by: Approved } | { decision: 'stopped' | 'timed-out' }> {
    this.openGate(name, undefined, rules);
    const decided = () => this.approved !== null || this.stopping;
    const ended =
      timeoutMs === undefined ? (await condition(decided), true) : await condition(decided, timeoutMs);
    const approved = this.closeGate();
    if (this.stopping) return { decision: 'stopped' };
    if (!ended || !approved) return { decision: 'timed-out' };
    return { decision: 'approved', by: approved };
  }

  /**
   * Calls `write` each time the run is paused or resumed, in order (e.g. to show it in CR
   * status). Outside cancellation: a cancelled run's pending wait would otherwise reject with
   * nobody to catch it, and fail every workflow task of the run from then on.
   */
  followPause(write: (paused: Pause | null) => Promise<void>): void {
    let shown = this.paused;
    void CancellationScope.nonCancellable(async () => {
      for (;;) {
        await condition(() => this.paused !== shown);
        shown = this.paused;
        await write(shown);
      }
    });
  }

  /** What a run continuing as new takes along (see Carried). */
  carry(): Carried {
    return {
      ...(this.paused && { paused: this.paused }),
      ...(this.approved && { approved: this.approved }),
      ...(this.approvals.length && { approvals: this.approvals }),
      ...(this.holds.frozen && { frozen: this.holds.frozen }),
      ...(this.gate?.approvals && { gateApprovals: this.gate.approvals }),
      ...this.handedDown(),
      ...(this.usedProofs.length && { usedProofs: this.usedProofs }),
    };
  }

  /**
   * What a child run (a group's chart, a chart's canary) starts with: the freeze it is under, and
   * the bridge's key and the authors, so that steering passed on to it is checked the same way.
   */
  handedDown(): HandedDown {
    return {
      ...(this.holds.frozen && { frozen: this.holds.frozen }),
      ...(this.steering && { steering: this.steering }),
    };
  }

  /** The control part of the progress query's answer. */
  progress(): ControlProgress {
    return {
      ...(this.paused && { paused: withoutProof(this.paused) }),
      ...(this.holds.held && { held: this.holds.held }),
      ...(this.gate && {
        gate: {
          ...this.gate,
          ...(this.gate.approvals && { approvals: this.gate.approvals.map(withoutProof) }),
        },
      }),
      ...(this.approvals.length && { approvals: this.approvals.map(withoutProof) }),
      ...(this.refused.length && { refused: this.refused }),
    };
  }

  /** Where a message goes when it names an object the run does not take messages for itself. */
  private targetRoute(verb: SteeringVerb, req: Approval | undefined): TargetRoute | undefined {
    return req?.target && this.targeted(verb, req.target);
  }

  /** An Update's refusal: its target's, or when the run takes it, the run's own (`own`). */
  private refusalFor(
    verb: SteeringVerb,
    req: Approval | undefined,
    own: () => string | undefined,
  ): string | undefined {
    const route = this.targetRoute(verb, req);
    if (!route) return own();
    return 'refused' in route ? route.refused : undefined;
  }

  /** An accepted Update passed on to its target: the answer; undefined when the run takes it. */
  private passOn(
    verb: SteeringVerb,
    signal: SignalDefinition<[Approval?]>,
    req: Approval | undefined,
  ): string | undefined {
    const route = this.targetRoute(verb, req);
    return route && 'pass' in route ? route.pass(signal, this.take(verb, req)) : undefined;
  }

  /**
   * A signal for an object the run does not take messages for itself: passed on, or refused
   * (recorded as a refused signal is). False: the run takes it.
   */
  private steeredElsewhere(
    verb: SteeringVerb,
    signal: SignalDefinition<[Approval?]>,
    req: Approval | undefined,
  ): boolean {
    const route = this.targetRoute(verb, req);
    if (!route) return false;
    if ('refused' in route) this.refusedSignal(verb, req ?? {}, route.refused);
    else route.pass(signal, this.take(verb, req));
    return true;
  }

  private approvalRefusal(req: Approval): string | undefined {
    if (!this.gate) return `no approval gate is waiting${this.approvalHint ? `; ${this.approvalHint}` : ''}`;
    if (req.gate !== undefined && req.gate !== this.gate.name)
      return `the gate waiting is "${this.gate.name}", not "${req.gate}"`;
    if (this.approved) return `"${this.gate.name}" is approved already (by ${who(this.approved)})`;
    const { rules } = this.gate;
    if (!rules) return undefined;
    const approvers = (this.gate.approvals ?? []).map((a) => a.by ?? '');
    return ruleRefusal(rules, req.by, this.unauthenticated('approve', req), approvers);
  }

  private approve(req: Approval): string {
    const gate = this.gate!;
    const taken = this.take('approve', req);
    const needed = gate.rules?.distinctApprovers || 1;
    const approvals = [...(gate.approvals ?? [])];
    const approval: Approved = { ...taken, gate: gate.name, at: new Date().toISOString() };
    if (needed > 1) approval.count = `${approvals.length + 1} of ${needed}`;
    approvals.push(approval);
    this.approvals.push(approval);
    if (approvals.length < needed) {
      gate.approvals = approvals;
      return `approval ${approval.count} of ${gate.name} taken; it needs ${needed - approvals.length} more by other users`;
    }
    this.approved = approval;
    return `approved ${gate.name}`;
  }

  private promote(req: Request): string {
    this.promoteRequested = this.take('promote', req);
    return 'promoting: the remaining steps are skipped';
  }

  /** Why a steering message is not the bridge's (see proofProblem), or undefined when it is. */
  private unauthenticated(verb: string, req: Request & { gate?: string }): string | undefined {
    const info = workflowInfo();
    const workflowIds = [info.workflowId, info.parent?.workflowId, info.root?.workflowId].flatMap((id) =>
      id === undefined ? [] : [id],
    );
    const used = new Set(this.usedProofs.map((p) => p.sig));
    return proofProblem(req.proof, this.steering?.key, { workflowIds, verb, req, nowMs: Date.now(), used });
  }

  /**
   * Whether the run tells the bridge's steering from a Temporal client's: a bridge started it
   * (its key). A run without a key was started by a Temporal client (armadactl
   * apply from files, a test): all its steering is a Temporal administrator's, recorded as sent
   * (`armadactl --as-temporal-admin` names itself `temporal-admin:$USER`), and its
   * distinct_approvers and not_author gates take no approval.
   */
  private get checksProofs(): boolean {
    return this.steering?.key !== undefined;
  }

  /**
   * A steering message as the run records it: `by` the authenticated user, or `temporal-admin:<by>`
   * without a valid proof; a valid proof is spent. In a run that does not check proofs: as sent.
   */
  private take<R extends Request & { gate?: string }>(verb: string, req: R | undefined): R {
    const message = (req ?? {}) as R;
    if (!this.checksProofs) return message;
    const unauthenticated = this.unauthenticated(verb, message);
    const now = Date.now();
    this.usedProofs = this.usedProofs.filter((p) => Math.abs(now - Date.parse(p.at)) <= PROOF_WINDOW_MS);
    if (unauthenticated === undefined) this.usedProofs.push(message.proof!);
    return { ...message, by: recordedBy(message.by, unauthenticated === undefined) };
  }

  /** Records and logs a refused signal; returns whether it was refused. */
  private refusedSignal(verb: string, req: Request, why: string | undefined): boolean {
    if (why === undefined) return false;
    const by = this.checksProofs ? recordedBy(req.by, this.unauthenticated(verb, req) === undefined) : req.by;
    log.warn(`${verb} refused`, { by, why });
    this.refused.push({ verb, by, reason: req.reason, why, at: new Date().toISOString() });
    this.refused.splice(0, this.refused.length - REFUSALS_KEPT);
    return true;
  }
}

/** An Update validator's refusal: the caller gets `why` as the error. */
function refuseWith(why: string | undefined): void {
  if (why !== undefined) throw new Error(why);
}

function who(req: Request): string {
  return req.by ?? 'an operator';
}

/** A record as the progress query shows it: the bridge's signature is no one's business there. */
function withoutProof<R extends Request>({ proof: _proof, ...record }: R): Omit<R, 'proof'> {
  return record;
}

/** Shows in the run's memo (`next`) which specs it will start over with; the bridge reads it. */
export function announceReplan(replan: Replan): void {
  upsertMemo({ next: replan.memo.specs });
}

/**
 * Ends this run and continues as a new one with the re-plan's input and memo, carrying the
 * control state (pause, approvals) and the saga's record of every change the run made so far
 * (`changes`: the record it was carried, then its own). Waits for running handlers first, so an
 * Update accepted in this task is answered and its effect carried.
 */
export async function startOver(
  replan: Replan,
  control: RunControl,
  changes: readonly Change[] = [],
): Promise<never> {
  await condition(allHandlersFinished);
  const input = replan.input as { carried?: Carried };
  // The bridge's key stays the one the run started with; the authors are the new specs'.
  const authors = input.carried?.steering?.authors;
  const steering = control.steering && { ...control.steering, ...(authors && { authors }) };
  return makeContinueAsNewFunc({ memo: { ...replan.memo } })({
    ...input,
    carried: {
      ...control.carry(),
      ...(steering && { steering }),
      ...(changes.length && { changes: [...changes] }),
    },
  });
}
