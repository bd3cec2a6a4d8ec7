/** What a run is asked (pause, approve, ...) and what it keeps and hands on of its control. */

import type { Proof, GateRules, Steering } from './plan/steering';
import type { Change } from './plan/changes';
import type { RunMemo } from './plan/specs';
import type { ObjectRef } from './plan/run-objects';

/**
 * Who asked for something and why; shown by the progress query (and, later, in CR status).
 * `proof`: the bridge's signature (core/plan/steering.ts); without a valid one, `by` is
 * recorded as `temporal-admin:<by>`.
 */
export interface Request {
  by?: string;
  reason?: string;
  proof?: Proof;
  /**
   * The object inside the run the message is for (a chart of a manifest's run): the run passes it
   * on to that chart's canary (core/plan/run-objects.ts, routeInRun). Absent: the run's own, as
   * every message was before targets. Not covered by the proof: a run takes a proof once,
   * whatever it names, so one proof cannot steer two charts.
   */
  target?: ObjectRef;
}

/**
 * An approval of the gate a run waits at: a manifest's `before group NAME`, a canary's `step N
 * (P %)`. Naming the gate makes the approval pass that gate only: one sent for another gate, or
 * while no gate waits, is refused, never kept for a later gate.
 */
export interface Approval extends Request {
  gate?: string;
}

/** A pause as the run keeps it: who asked, why, and since when (RFC 3339). */
export interface Pause extends Request {
  since: string;
}

/** An approval gate the run waits at now. */
export interface Gate {
  name: string;
  since: string;
  /** Its separation-of-duties rules (`distinct_approvers`, `not_author`), when it has any. */
  rules?: GateRules;
  /** The approvals it has taken so far, while it needs more (`distinct_approvers`). */
  approvals?: Approved[];
}

/**
 * An approval taken: who approved, why, and when; `count` `1 of 2` while a gate needs more. Its
 * proof is kept so that a run passing it on (a lockstep set) passes the bridge's word with it.
 */
export interface Approved extends Request {
  gate: string;
  at: string;
  count?: string;
}

/** A control message the run refused (a signal cannot answer its sender): what, and why. */
export interface Refusal extends Request {
  verb: string;
  why: string;
  at: string;
}

/** What a run hands on to the run it continues as (a re-plan, a long hold): pause and approvals stand. */
export interface Carried {
  paused?: Pause;
  /** The gate approved in the same moment the run continued as new: the new run passes it. */
  approved?: Approved;
  /** Approvals already given in this run's chain, for its status. */
  approvals?: Approved[];
  /** The approvals the open gate took so far (`distinct_approvers`), kept for the gate it opens again. */
  gateApprovals?: Approved[];
  /** The bridge's key and the specs' authors (core/plan/steering.ts); the key stays the start's. */
  steering?: Steering;
  /** The proofs the run took within their window: a proof counts once. */
  usedProofs?: Proof[];
  /** The cluster freeze the run is under (the bridge starts runs with it too; see workflows/holds.ts). */
  frozen?: Request;
  /**
   * The saga's record of the runs this one continued from, oldest first: a rollback of this run
   * undoes them too, as one run's changes (a re-plan does not end the run it continues).
   */
  changes?: Change[];
}

/**
 * Newer specs for a running run (the bridge saw a new generation): the run's input and memo as
 * a fresh start would have them. The run starts over with them at its next safe point; a later
 * re-plan replaces an earlier one.
 */
export interface Replan {
  input: unknown;
  memo: RunMemo;
}

/**
 * Why a run holds at a safe point now: a cluster freeze, or its deploy windows closed until
 * `until` (RFC 3339; absent when none opens within a year). Shown in CR status (`held`, condition
 * Held) and by the progress query.
 */
export interface Hold {
  /** Not `on`: YAML 1.1 reads a key `on` as true, which broke the generated CRDs. */
  for: 'freeze' | 'window';
  reason: string;
  since: string;
  until?: string;
}

/** What every run's progress shows of its control: pause, hold, the gate waiting, approvals, refusals. */
export interface ControlProgress {
  paused?: Pause;
  held?: Hold;
  gate?: Gate;
  approvals?: Approved[];
  refused?: Refusal[];
  /** Status writes that failed after their retries (the run went on): how many, the last error. */
  statusWriteFailures?: { count: number; last: string };
}
