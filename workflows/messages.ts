import { defineQuery, defineSignal, defineUpdate } from '@temporalio/workflow';
import type { Change } from './plan/rollback';
import type { RunMemo } from './plan/specs';
import type { GateRules, Proof, Steering } from './plan/steering';

/**
 * Who asked for something and why; shown by the progress query (and, later, in CR status).
 * `proof`: the bridge's signature (workflows/plan/steering.ts); without a valid one, `by` is
 * recorded as `temporal-admin:<by>`.
 */
export interface Request {
  by?: string;
  reason?: string;
  proof?: Proof;
}

/** Hold before the next chart or group starts; Helm calls already running finish. */
export const pauseSignal = defineSignal<[Request?]>('pause');
export const resumeSignal = defineSignal<[Request?]>('resume');
/** Start no more charts, let running ones finish, then undo what this run changed. */
export const rollbackSignal = defineSignal<[Request?]>('rollback');
/**
 * An approval of the gate a run waits at: a manifest's `before group NAME`, a canary's `step N
 * (P %)`. Naming the gate makes the approval pass that gate only: one sent for another gate, or
 * while no gate waits, is refused, never kept for a later gate.
 */
export interface Approval extends Request {
  gate?: string;
}

/**
 * Approve and promote are Updates: the validator refuses (the caller sees why) when no gate
 * waits, the gate named is not the one waiting, or the run has no canary to promote; the
 * accepted ones stand in the history with who and why. They answer what they did.
 */
export const approveUpdate = defineUpdate<string, [Approval]>('approve');
export const promoteUpdate = defineUpdate<string, [Request]>('promote');
/**
 * The same as signals, for tools that can only signal (`temporal workflow signal`, the UI's
 * signal form): checked the same way; a refused one is logged and shown by the progress query
 * and the run's current details, never silently dropped.
 */
export const approveSignal = defineSignal<[Approval?]>('approve');
export const promoteSignal = defineSignal<[Request?]>('promote');

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
  /** The bridge's key and the specs' authors (workflows/plan/steering.ts); the key stays the start's. */
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
export const replanSignal = defineSignal<[Replan]>('replan');

export type ChartState =
  'pending' | 'deploying' | 'deployed' | 'unchanged' | 'skipped' | 'failed' | 'rolled-back' | 'uninstalled';

export interface ChartProgress {
  chart: string;
  release: string;
  namespace: string;
  state: ChartState;
  revision?: number;
  error?: string;
}

export interface GroupProgress {
  name: string;
  sequenced: boolean;
  state: 'pending' | 'waiting-approval' | 'running' | 'done' | 'failed' | 'stopped';
  charts: ChartProgress[];
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

export interface Progress extends ControlProgress {
  phase: string;
  group?: string;
  waitingOn?: string;
  groups: GroupProgress[];
}

export const progressQuery = defineQuery<Progress>('progress');

/** One canary step: its split (replicas summed over the Deployments) and when it ran. */
export interface CanaryStepRecord {
  step: number;
  percent: number;
  canary: number;
  stable: number;
  /** Seconds the step holds once ready, or `approval`. */
  hold?: number | 'approval';
  startedAt?: string;
  /** When the canary's pods were Ready and the stable side scaled down: the hold starts. */
  readyAt?: string;
  endedAt?: string;
  ended?: 'held' | 'approved' | 'timed-out' | 'promoted' | 'rolled-back';
}

export interface CanaryProgress extends Omit<ControlProgress, 'paused'> {
  kind: 'canary';
  /** What is rolled out, e.g. `blog-2` or `web/nginx-1.26.0`. */
  target: string;
  phase: 'Progressing' | 'Promoting' | 'Promoted' | 'RollingBack' | 'RolledBack';
  /** 1-based step; 0 before the first. */
  step: number;
  steps: number;
  percent: number;
  /** What the current step waits for: readiness, a hold, an approval, an analysis check. */
  waitingOn?: string;
  /** When the current hold ends (RFC 3339); absent while paused or waiting for approval. */
  nextStepAt?: string;
  paused?: Pause & { remainingSeconds?: number };
  /** Why the canary rolled back or was promoted early. */
  reason?: string;
  /** The HTTPRoute weights last set (`traffic.gateway_api`), e.g. `HTTPRoute shop rule 0: shop 90 / shop-canary 10`. */
  weights?: string;
  history: CanaryStepRecord[];
}

/** The same `progress` query, as a canary (a Deployer, a chart's canary child) answers it. */
export const canaryProgressQuery = defineQuery<CanaryProgress>('progress');

/** What the `progress` query answers: a manifest's (group's, chart's) groups and charts, or a canary's steps. */
export type AnyProgress = Progress | CanaryProgress;

/** A group tells its manifest about each chart's progress, so the manifest's query is live. */
export const chartProgressSignal = defineSignal<[string, ChartProgress]>('chartProgress');

/** The message at the bottom of a failure chain (child workflow → activity → helm's words). */
export function rootMessage(err: unknown): string {
  let e: unknown = err;
  while (e instanceof Error && e.cause instanceof Error) e = e.cause;
  return e instanceof Error ? e.message : String(e);
}
