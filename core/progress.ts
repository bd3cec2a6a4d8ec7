/** What the `progress` query answers and the Temporal UI, CR status and the CLI show of a run. */

import type { CanaryPhase } from '../api/states';
import type { ControlProgress, Pause } from './control';

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

export interface Progress extends ControlProgress {
  phase: string;
  group?: string;
  waitingOn?: string;
  groups: GroupProgress[];
}

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
  /** The canary's own phase; shown as its word of the state vocabulary (CANARY_STATES). */
  phase: CanaryPhase;
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

/** What the `progress` query answers: a manifest's (group's, chart's) groups and charts, or a canary's steps. */
export type AnyProgress = Progress | CanaryProgress;
