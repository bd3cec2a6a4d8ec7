import { defineQuery, defineSignal } from '@temporalio/workflow';
import type { RunMemo } from './plan/specs';

/** Who asked for something and why; shown by the progress query (and, later, in CR status). */
export interface Request {
  by?: string;
  reason?: string;
}

/** Hold before the next chart or group starts; Helm calls already running finish. */
export const pauseSignal = defineSignal<[Request?]>('pause');
export const resumeSignal = defineSignal<[Request?]>('resume');
/** Start no more charts, let running ones finish, then undo what this run changed. */
export const rollbackSignal = defineSignal<[Request?]>('rollback');
/** Pass the approval gate the run waits at. */
export const approveSignal = defineSignal<[Request?]>('approve');
/** A canary skips its remaining steps and goes to 100 %. */
export const promoteSignal = defineSignal<[Request?]>('promote');

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

export interface Progress {
  phase: string;
  group?: string;
  waitingOn?: string;
  paused?: { by?: string; reason?: string; since: string };
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

export interface CanaryProgress {
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
  paused?: { by?: string; reason?: string; since: string; remainingSeconds?: number };
  /** Why the canary rolled back or was promoted early. */
  reason?: string;
  history: CanaryStepRecord[];
}

/** The same `progress` query, as a canary (a Deployer, a chart's canary child) answers it. */
export const canaryProgressQuery = defineQuery<CanaryProgress>('progress');

/** A group tells its manifest about each chart's progress, so the manifest's query is live. */
export const chartProgressSignal = defineSignal<[string, ChartProgress]>('chartProgress');

/** The message at the bottom of a failure chain (child workflow → activity → helm's words). */
export function rootMessage(err: unknown): string {
  let e: unknown = err;
  while (e instanceof Error && e.cause instanceof Error) e = e.cause;
  return e instanceof Error ? e.message : String(e);
}
