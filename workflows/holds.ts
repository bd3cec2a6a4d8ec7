import {
  condition,
  setHandler,
  type ChildWorkflowHandle,
  type SignalDefinition,
  type Workflow,
} from '@temporalio/workflow';
import type { DeployWindow } from '../api/windows';
import { freezeSignal, unfreezeSignal } from './messages';
import type { Hold, Pause, Request } from '../core/control';
import { holdTimerMs } from '../core/plan/canary';
import { isOpen, nextOpening } from '../core/plan/windows';

/** Called with every pause, resume and rollback after it is handled, e.g. to pass it on to a child. */
export type SignalForwarder = (signal: SignalDefinition<[Request?]>, req: Request | undefined) => void;

/** What a safe point reads of a run's control (RunControl): its pause, whether it stops, its holds. */
export interface SafePointControl {
  readonly paused: Pause | null;
  readonly stopping: boolean;
  readonly holds: Holds;
  mayContinue(): Promise<boolean>;
}

/** How long a run whose windows never open waits before it looks again (their spec may be replanned). */
const NEVER_OPENS_RECHECK_MS = 24 * 3600 * 1000;

/**
 * A run's deploy windows and the cluster freeze: what holds it at its safe points (before a new
 * group, a canary step, a chart's helm write) besides a pause. The freeze is carried into the run
 * a re-plan or a long hold continues as. With no windows and no freeze, `pass` returns at once without a command, so such runs keep their exact
 * command sequence.
 */
export class Holds {
  frozen: Request | null;
  /** The hold the run is in now, for its progress. */
  held: Hold | null = null;
  private windows: readonly DeployWindow[] = [];

  /** `frozen`: the freeze the run starts under (carried from the run it continues, or from the bridge). */
  constructor(frozen?: Request) {
    this.frozen = frozen ?? null;
  }

  /** The run's deploy windows. */
  use(windows: readonly DeployWindow[] | undefined): void {
    this.windows = windows ?? [];
  }

  /**
   * Registers the freeze handlers; `forward` passes a change on to a child run (one that changes
   * nothing, such as a bridge's first word to a run never frozen, is not passed on).
   */
  listen(forward: SignalForwarder): void {
    const take = (frozen: Request | null, signal: typeof freezeSignal, req: Request | undefined) => {
      const changed = JSON.stringify(frozen) !== JSON.stringify(this.frozen);
      this.frozen = frozen;
      if (changed) forward(signal, req);
    };
    setHandler(freezeSignal, (req) => take(req ?? {}, freezeSignal, req));
    setHandler(unfreezeSignal, (req) => take(null, unfreezeSignal, req));
  }

  /**
   * Waits while the cluster is frozen or the windows are closed, on a durable timer until the
   * next opening (workflow time), or until `interrupted` (a stop, a pause: the caller decides).
   * `show` is told each hold as it begins, and null once the run goes on after one; it resolves
   * to the milliseconds its status writes took, which the timer is shortened by (they hold the
   * timer's start back, as a canary's hold's: see holdTimerMs), so the run goes on at the opening.
   * `own`: windows of the object at this safe point (a chart's, at its helm write), which must be
   * open too.
   */
  async pass(
    interrupted: () => boolean,
    show: (hold: Hold | null) => Promise<number>,
    own: readonly DeployWindow[] = [],
  ): Promise<void> {
    let shown: Hold | null = null;
    /** Shows a hold unless it is shown already; the milliseconds that took. */
    const showing = async (hold: Hold): Promise<number> => {
      if (shown?.for === hold.for && shown.reason === hold.reason && shown.until === hold.until) return 0;
      shown = { ...hold, since: shown?.for === hold.for ? shown.since : hold.since };
      this.held = shown;
      return show(shown);
    };
    while (!interrupted()) {
      const now = Date.now();
      const since = new Date(now).toISOString();
      if (this.frozen) {
        await showing({ for: 'freeze', reason: freezeReason(this.frozen), since });
        await condition(() => this.frozen === null || interrupted());
        continue;
      }
      const closed = [this.windows, own].find((windows) => windows.length > 0 && !isOpen(windows, now));
      if (!closed) break;
      const opens = nextOpening(closed, now);
      const until = opens === null ? undefined : new Date(opens).toISOString();
      const wroteMs = await showing({
        for: 'window',
        reason: until ? 'outside its deploy windows' : 'its deploy windows open at no time within a year',
        since,
        ...(until && { until }),
      });
      await condition(
        () => this.frozen !== null || interrupted(),
        opens === null ? NEVER_OPENS_RECHECK_MS : holdTimerMs(opens - now, wroteMs),
        {
          summary: until
            ? `deploy window opens at ${until}`
            : 'deploy windows never open; looking again in a day',
        },
      );
    }
    // Charts of a parallel group pass their safe points at once: one that never held must not
    // clear the hold another still shows.
    if (shown && this.held === shown) this.held = null;
    if (shown) await show(null);
  }
}

/**
 * A run's safe point with its holds: waits out a pause (RunControl.mayContinue), then a freeze
 * and closed windows (the run's, and `own`: see Holds.pass), then a pause sent meanwhile. False
 * when the run is stopping.
 */
export async function passSafePoint(
  control: SafePointControl,
  show: (hold: Hold | null) => Promise<number>,
  own?: readonly DeployWindow[],
): Promise<boolean> {
  for (;;) {
    if (!(await control.mayContinue())) return false;
    await control.holds.pass(() => control.stopping || control.paused !== null, show, own);
    if (control.stopping) return false;
    if (control.paused === null) return true;
  }
}

/** `incident 42 (ArmadaPolicy incident)`: why the cluster is frozen, and by which policies. */
function freezeReason(req: Request): string {
  return [req.reason ?? 'frozen', ...(req.by ? [`(${req.by})`] : [])].join(' ');
}

/** A hold in a sentence, for status messages: `frozen: incident 42 (…)`, `outside its deploy windows until …`. */
export function heldMessage(hold: Hold): string {
  if (hold.for === 'freeze') return `frozen: ${hold.reason}`;
  return hold.until ? `${hold.reason} until ${hold.until}` : hold.reason;
}

/**
 * The child runs a run has going (a group's charts), which carry no namespace search attribute
 * the bridge could find them by: a freeze and its lifting are passed on to them, as a manifest
 * passes them to its group and a chart to its canary.
 */
export class ChildRuns {
  private readonly running = new Set<ChildWorkflowHandle<Workflow>>();

  /** A RunControl forwarder: passes a freeze or its lifting to every child running. */
  readonly forward: SignalForwarder = (signal, req) => {
    if (signal.name !== freezeSignal.name && signal.name !== unfreezeSignal.name) return;
    for (const child of this.running) child.signal(signal, req).catch(() => undefined);
  };

  /** Follows `child` until its result is in. */
  async follow<T>(child: ChildWorkflowHandle<Workflow>, result: Promise<T>): Promise<T> {
    this.running.add(child);
    try {
      return await result;
    } finally {
      this.running.delete(child);
    }
  }
}
