import type { KindName } from '../../api/kinds';
import type { RunMemo } from '../plan/specs';

/** What Temporal says of the latest run of a workflow ID (runs/control.ts, latestRun). */
export interface RunState {
  runId: string;
  /** Its workflow type: a drift repair or an undo holds the object's ID as its deploys do. */
  type: string;
  running: boolean;
  status: string;
  memo: RunMemo;
  /** When this run (not the chain it continues) started, in ms. */
  startedAt: number;
}

/**
 * How far the API server's clock and Temporal's may be apart, beyond which ranForAnother trusts
 * them for a run that names no object. An object's own run starts after it (a watch event and a
 * reconcile later), and a timestamp of the API server's is whole seconds, so at most a second
 * before the creation it stands for.
 */
export const CLOCK_SKEW_MS = 1000;

/**
 * Whether `run` was for another object of the same name than `object` (a cluster rebuilt, or
 * the object deleted and created again while no bridge watched), whose generations started at
 * 1 as this one's do, so its specs read the same. A run the bridge started names its object's
 * uid (memo `uid`), which both sides agree on whatever their clocks say. A run that names none
 * (started by `armadactl apply`, or by a bridge before 0.2) is told by time: it started before
 * the object was created (`createdAt`, ms; 0 when unknown).
 */
export function ranForAnother(
  run: Pick<RunState, 'startedAt' | 'memo'>,
  object: { uid?: string; createdAt: number },
): boolean {
  if (run.memo.uid !== undefined && object.uid !== undefined) return run.memo.uid !== object.uid;
  return object.createdAt > 0 && run.startedAt < object.createdAt - CLOCK_SKEW_MS;
}

/** What the bridge knows when it brings an object's run in line with the object (bridge/reconcile.ts, ensureRun). */
export interface RunFacts {
  /** The object: its kind, its metadata.uid, when it was created (ms; 0 when unknown). */
  object: { kind: KindName; uid?: string; createdAt: number };
  /** The memo of the run the object gets now: the specs (their generations) and the mode. */
  planned: RunMemo;
  /** The workflow type of the run the object gets now (`deployRun`); absent: any run takes its re-plan. */
  plannedType?: string;
  /**
   * The object's latest run: `followed` when this bridge started it with the very memo planned
   * and follows it still (then Temporal was not asked), else what Temporal said (null: none).
   */
  latest: 'followed' | RunState | null;
  /**
   * When (epoch ms) the object's specs and those of what it lists will have settled
   * (bridge/settle.ts); undefined once they have. Only a manifest's or a group's run waits for it.
   */
  settlesAt?: number;
}

/** What to do about an object's run. */
export type RunDecision =
  /** Nothing: the run of these specs runs or has run. */
  | { do: 'leave'; why: 'followed' | 'running these specs' | 'these specs have had their run' }
  /** Send the planned run as a re-plan signal to the run `runId` (running `from`), then follow it. */
  | { do: 'replan'; runId: string; from?: string }
  /** Follow the running run: the object is reconciled again when it ends. */
  | {
      do: 'follow';
      why:
        | 'another mode runs'
        | 'already re-planned'
        | 'a repair or an undo holds the lock'
        | 'an older build runs it as another workflow type';
    }
  /** Reconcile again at `until`, when the specs have settled. */
  | { do: 'wait'; until: number }
  /** Start the planned run (if the API server holds no owner of the object that the cache lacks yet). */
  | { do: 'start' };

/**
 * The runs that hold an object's workflow ID without deploying its specs: a drift repair and an
 * undo of a release it owns (core/plan/release-lock.ts). They take no re-plan; they copy the
 * memo of the run before them, so the bridge reads the specs that run deployed.
 */
const LOCK_HOLDERS: ReadonlySet<string> = new Set(['driftWorkflow', 'undoWorkflow']);

/** Whether a run of this workflow type only holds its object's ID: a drift repair or an undo (LOCK_HOLDERS). */
export const holdsLockOnly = (type: string): boolean => LOCK_HOLDERS.has(type);

/**
 * Workflow types an older build ran an object's run as, that take the planned type's input as a
 * re-plan: a `manifestWorkflow` takes a `deployRun`'s (the same shape). A standalone group's
 * `groupWorkflow` or a Deployer's `deployerWorkflow` takes another input: it is followed to its
 * end, and the new run starts then (docs/design/one-workflow.md, "Wiring: status").
 */
const TAKES_REPLAN_OF: Readonly<Record<string, string>> = { manifestWorkflow: 'deployRun' };

/** Whether a run of `type` can take the planned run's input as its re-plan. */
const takesReplan = (type: string, planned?: string): boolean =>
  planned === undefined || type === planned || TAKES_REPLAN_OF[type] === planned;

/**
 * Whether an object's run starts, re-plans, is followed or left, or waits. A run exists for the
 * object's current specs (their generations): it is left alone. A run still working on older
 * specs of the same mode gets the new ones as a re-plan signal and starts over with them at its
 * next safe point (see docs/explanation/architecture.md, "a spec changed while its run is in flight"); a run of the other mode
 * finishes first, and the run is started when it ends; so does a drift repair or an undo under
 * the object's ID (they write a release it owns): a deploy asked meanwhile is not lost, it starts
 * when they end, with what the specs are then; so does a run of an older build that runs the
 * object as a workflow type which cannot take the new input (takesReplan). A paused run is running to Temporal: it
 * is re-planned like any other. A run that ended (completed, failed, cancelled, terminated,
 * timed out) with these specs has had its run: a failed one is retried by a person (the `retry`
 * action), not by the bridge. A manifest's or group's run starts only once the specs have
 * settled.
 */
export function decideRun({ object, planned, plannedType, latest, settlesAt }: RunFacts): RunDecision {
  if (latest === 'followed') return { do: 'leave', why: 'followed' };
  // Specs name generations, which start at 1 again for an object created anew: a run for an
  // earlier object of the name deployed nothing of this one.
  const same =
    latest !== null &&
    latest.memo.specs === planned.specs &&
    latest.memo.mode === planned.mode &&
    !ranForAnother(latest, object);
  if (latest?.running) {
    if (same) return { do: 'leave', why: 'running these specs' };
    if (holdsLockOnly(latest.type)) return { do: 'follow', why: 'a repair or an undo holds the lock' };
    if (latest.memo.mode !== planned.mode) return { do: 'follow', why: 'another mode runs' };
    if (!takesReplan(latest.type, plannedType))
      return { do: 'follow', why: 'an older build runs it as another workflow type' };
    if (latest.memo.next === planned.specs) return { do: 'follow', why: 'already re-planned' };
    return { do: 'replan', runId: latest.runId, from: latest.memo.specs };
  }
  if (same) return { do: 'leave', why: 'these specs have had their run' };
  const settles = object.kind === 'ArmadaManifest' || object.kind === 'ArmadaChartGroup';
  if (settles && settlesAt !== undefined) return { do: 'wait', until: settlesAt };
  return { do: 'start' };
}
