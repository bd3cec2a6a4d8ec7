import {
  CancellationScope,
  condition,
  makeContinueAsNewFunc,
  setHandler,
  upsertMemo,
  type SignalDefinition,
} from '@temporalio/workflow';
import {
  approveSignal,
  pauseSignal,
  promoteSignal,
  replanSignal,
  resumeSignal,
  rollbackSignal,
  type Replan,
  type Request,
} from './messages';

/** Called with every control signal after it is handled, e.g. to pass it on to a child. */
export type SignalForwarder = (signal: SignalDefinition<[Request?]>, req: Request | undefined) => void;

/**
 * Operator control of one run: pause/resume, a stop for rollback, approvals, cancellation. State
 * only; the workflow asks it whether to go on at its safe points (before a chart or group
 * starts). A pause is data with a timestamp, so it survives replay and tells a person why the
 * run waits.
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
  paused: { by?: string; reason?: string; since: string } | null = null;
  stopRequested: Request | null = null;
  /** A canary's promote: skip the remaining steps. */
  promoteRequested: Request | null = null;
  cancelled = false;
  /** The newest specs the bridge sent, if any: the run starts over with them. */
  replan: Replan | null = null;
  private approvals = 0;

  /** Registers the signal handlers and the cancellation listener; call at the top of the workflow. */
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
    setHandler(approveSignal, () => {
      this.approvals++;
    });
    setHandler(promoteSignal, (req) => {
      this.promoteRequested ??= req ?? {};
    });
    setHandler(replanSignal, (replan) => {
      this.replan = replan;
      announceReplan(replan);
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

  /** Whether an approve signal is waiting to be taken. */
  get approvalPending(): boolean {
    return this.approvals > 0;
  }

  /** Takes one pending approval, if any. */
  takeApproval(): boolean {
    if (this.approvals === 0) return false;
    this.approvals--;
    return true;
  }

  /**
   * Waits for one approve signal (an approval that arrived earlier counts), or a stop, or the
   * timeout. Returns how the wait ended.
   */
  async approval(timeout?: number): Promise<'approved' | 'stopped' | 'timed-out'> {
    const decided = () => this.approvalPending || this.stopping;
    const ended =
      timeout === undefined ? (await condition(decided), true) : await condition(decided, timeout);
    if (this.stopping) return 'stopped';
    if (!ended) return 'timed-out';
    this.takeApproval();
    return 'approved';
  }
}

/** Shows in the run's memo (`next`) which specs it will start over with; the bridge reads it. */
export function announceReplan(replan: Replan): void {
  upsertMemo({ next: replan.memo.specs });
}

/** Ends this run and continues as a new one with the re-plan's input and memo. */
export function startOver(replan: Replan): Promise<never> {
  return makeContinueAsNewFunc({ memo: { ...replan.memo } })(replan.input);
}
