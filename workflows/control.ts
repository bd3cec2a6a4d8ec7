import {
  allHandlersFinished,
  CancellationScope,
  condition,
  log,
  makeContinueAsNewFunc,
  setHandler,
  upsertMemo,
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
  type Approval,
  type Approved,
  type Carried,
  type ControlProgress,
  type Gate,
  type Pause,
  type Refusal,
  type Replan,
  type Request,
} from './messages';
import { Holds } from './holds';
import type { Change } from './plan/rollback';

/** Called with every pause, resume and rollback after it is handled, e.g. to pass it on to a child. */
export type SignalForwarder = (signal: SignalDefinition<[Request?]>, req: Request | undefined) => void;

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
  /** Told of each re-plan after it is recorded, e.g. to pass it on to a canary child. */
  onReplan: (replan: Replan) => void = () => {};
  /** The cluster freeze and the run's deploy windows (the workflow sets them: `holds.use`). */
  readonly holds: Holds;

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
  }

  /** Registers the handlers and the cancellation listener; call at the top of the workflow. */
  listen(forward: SignalForwarder = () => {}, onCancel: () => void = () => {}): this {
    CancellationScope.current().cancelRequested.catch(() => {
      this.cancelled = true;
      onCancel();
    });
    setHandler(pauseSignal, (req) => {
      this.paused ??= { ...req, since: new Date().toISOString() };
      forward(pauseSignal, req);
    });
    setHandler(resumeSignal, (req) => {
      this.paused = null;
      forward(resumeSignal, req);
    });
    setHandler(rollbackSignal, (req) => {
      this.stopRequested ??= req ?? {};
      forward(rollbackSignal, req);
    });
    // `temporal workflow update execute` may send no input: taken as an approval without a name.
    setHandler(approveUpdate, (req) => this.approve(req ?? {}), {
      validator: (req) => refuseWith(this.approvalRefusal(req ?? {})),
    });
    setHandler(approveSignal, (req = {}) => {
      if (!this.refusedSignal('approve', req, this.approvalRefusal(req))) this.approve(req);
    });
    setHandler(promoteUpdate, (req) => this.promote(req ?? {}), {
      validator: (_req) => refuseWith(this.promoteRefusal()),
    });
    setHandler(promoteSignal, (req = {}) => {
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
  openGate(name: string, since = new Date().toISOString()): void {
    this.gate = { name, since };
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
  ): Promise<{ decision: 'approved'; by: Approved } | { decision: 'stopped' | 'timed-out' }> {
    this.openGate(name);
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
    };
  }

  /** The control part of the progress query's answer. */
  progress(): ControlProgress {
    return {
      ...(this.paused && { paused: this.paused }),
      ...(this.holds.held && { held: this.holds.held }),
      ...(this.gate && { gate: this.gate }),
      ...(this.approvals.length && { approvals: this.approvals }),
      ...(this.refused.length && { refused: this.refused }),
    };
  }

  private approvalRefusal(req: Approval): string | undefined {
    if (!this.gate) return `no approval gate is waiting${this.approvalHint ? `; ${this.approvalHint}` : ''}`;
    if (req.gate !== undefined && req.gate !== this.gate.name)
      return `the gate waiting is "${this.gate.name}", not "${req.gate}"`;
    if (this.approved) return `"${this.gate.name}" is approved already (by ${who(this.approved)})`;
    return undefined;
  }

  private approve(req: Approval): string {
    const gate = this.gate!.name;
    this.approved = { by: req.by, reason: req.reason, gate, at: new Date().toISOString() };
    this.approvals.push(this.approved);
    return `approved ${gate}`;
  }

  private promote(req: Request): string {
    this.promoteRequested = req;
    return 'promoting: the remaining steps are skipped';
  }

  /** Records and logs a refused signal; returns whether it was refused. */
  private refusedSignal(verb: string, req: Request, why: string | undefined): boolean {
    if (why === undefined) return false;
    log.warn(`${verb} refused`, { by: req.by, why });
    this.refused.push({ verb, by: req.by, reason: req.reason, why, at: new Date().toISOString() });
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
  return makeContinueAsNewFunc({ memo: { ...replan.memo } })({
    ...(replan.input as object),
    carried: { ...control.carry(), ...(changes.length && { changes: [...changes] }) },
  });
}
