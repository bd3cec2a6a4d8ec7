import { durationSeconds } from '../../api/duration';
import type { CanaryStepRecord } from '../progress';
import type { Carried } from '../control';

/**
 * Canary step maths, as argo-rollouts computes it: the replica split of a step is a pure
 * function of the total and the step's percent.
 */
export interface Split {
  percent: number;
  canary: number;
  stable: number;
}

/**
 * Replicas on the new version at `percent` of `total`: ceil(total × percent / 100), at least 1
 * once percent > 0, never more than total; the stable side keeps the rest.
 *
 * Worked examples (total 10): 10 % → 1 canary / 9 stable, 30 % → 3/7, 60 % → 6/4, 100 % → 10/0.
 * Rounding goes toward the canary: total 3 at 33 % → 1/2 (0.99 → 1); total 7 at 1 % → 1/6.
 */
export function splitAt(total: number, percent: number): Split {
  if (!Number.isInteger(total) || total < 0)
    throw new RangeError(`replicas must be a whole number ≥ 0, not ${total}`);
  if (percent < 0 || percent > 100) throw new RangeError(`percent must be from 0 to 100, not ${percent}`);
  // Integer arithmetic first, so 7 × 100 / 100 is exactly 7, never 7.000000001 rounded up to 8.
  const exact = Math.ceil((total * percent) / 100);
  const canary = percent > 0 ? Math.min(total, Math.max(1, exact)) : 0;
  return { percent, canary, stable: total - canary };
}

/**
 * A canary spec's timeouts (ArmadaChart canaries' and Deployers' alike) as the canary takes them,
 * in seconds, and its approval steps' separation-of-duties rules (api/chart.ts approvalRules).
 */
export function canaryTimeoutsOf(spec: {
  step_timeout?: number | string;
  approval_timeout?: number | string;
  on_timeout?: 'rollback' | 'promote';
  distinct_approvers?: number;
  not_author?: boolean;
}): {
  stepTimeoutSeconds?: number;
  approvalTimeoutSeconds?: number;
  onTimeout?: 'rollback' | 'promote';
  approvalRules?: { distinct_approvers?: number; not_author?: boolean };
} {
  const seconds = (value: number | string | undefined) =>
    value === undefined ? undefined : (durationSeconds(value) ?? undefined);
  const { distinct_approvers, not_author } = spec;
  return {
    stepTimeoutSeconds: seconds(spec.step_timeout),
    approvalTimeoutSeconds: seconds(spec.approval_timeout),
    onTimeout: spec.on_timeout,
    ...((distinct_approvers !== undefined || not_author !== undefined) && {
      approvalRules: { distinct_approvers, not_author },
    }),
  };
}

/** One step as the canary workflow runs it: the percent, then a timed hold or an approval. */
export interface CanaryStep {
  percent: number;
  /** Seconds to hold once the step is ready; none for the implied final 100 %. */
  holdSeconds?: number;
  approval?: boolean;
}

/**
 * The steps of a canary spec with durations in seconds and the final 100 % added when the
 * spec stops short of it. Example: [{10, sleep "1m"}, {50, approval}] → 10 % hold 60 s,
 * 50 % approval, 100 %.
 */
export function canarySteps(
  steps: readonly { percent: number; sleep?: number | string; approval?: boolean }[],
): CanaryStep[] {
  const planned = steps.map(({ percent, sleep, approval }) => {
    const holdSeconds = sleep === undefined ? undefined : durationSeconds(sleep);
    if (holdSeconds === null)
      throw new RangeError(`sleep "${sleep}" of the ${percent} % step is not a duration`);
    return { percent, ...(holdSeconds !== undefined && { holdSeconds }), ...(approval && { approval }) };
  });
  return planned.at(-1)?.percent === 100 ? planned : [...planned, { percent: 100 }];
}

/** The Deployments a canary moves: the new version (`canary`) beside the version it replaces. */
export interface DeploymentPair {
  /** The Deployment running the new version. */
  canary: string;
  /** The Deployment running the current version; null when there is none (a new Deployment). */
  stable: string | null;
  /** Replicas at 100 % (R); a chart canary's comes from capacityReplicas. */
  replicas: number;
  /** The stable Deployment's replicas before the canary began: what a rollback restores. */
  stableReplicas: number;
}

/** What a pair's R is decided from: the new revision's replicas and the stable side as it runs now. */
export interface Capacity {
  /** spec.replicas of the rendered Deployment; undefined (the chart leaves it out) counts as 1, the API's default. */
  rendered?: number;
  /** spec.replicas of the live stable Deployment; undefined when there is none. */
  live?: number;
  /** minReplicas of a HorizontalPodAutoscaler whose scaleTargetRef is the stable Deployment; undefined without one. */
  hpaMin?: number;
}

/**
 * R, a pair's replicas at 100 %: max(rendered, live, hpaMin). A canary splits R between the two
 * sides, so R below the live count would shrink the service at the first step: a chart that
 * renders 4 replicas of a Deployment an HPA (or a person) has scaled to 10 would go from 10
 * to 1 + 3. An HPA's minReplicas counts too: a split below it is one the HPA undoes.
 *
 * Worked examples (the split at 10 %):
 * - rendered 4, live 10 → R 10: 1 canary / 9 stable, not 1/3;
 * - rendered 4, live 4, HPA minReplicas 6 → R 6: 1/5;
 * - rendered 4, live 2 (scaled down by hand) → R 4: 1/3, the chart's value;
 * - rendered unset, no stable (the revision adds the Deployment) → R 1: 1/0.
 */
export function capacityReplicas({ rendered, live, hpaMin }: Capacity): number {
  return Math.max(rendered ?? 1, live ?? 0, hpaMin ?? 0);
}

export interface Scale {
  name: string;
  replicas: number;
}

/** Replica counts of every pair at `percent`: canaries (scaled up first) and stables. */
export function stepScales(
  pairs: readonly DeploymentPair[],
  percent: number,
): { canary: Scale[]; stable: Scale[] } {
  const splits = pairs.map((pair) => ({ pair, split: splitAt(pair.replicas, percent) }));
  return {
    canary: splits.map(({ pair, split }) => ({ name: pair.canary, replicas: split.canary })),
    stable: splits.flatMap(({ pair, split }) =>
      pair.stable ? [{ name: pair.stable, replicas: split.stable }] : [],
    ),
  };
}

/** The stable state a rollback restores: every stable Deployment at its replicas from before. */
export function restoreScales(pairs: readonly DeploymentPair[]): Scale[] {
  return pairs.flatMap((pair) => (pair.stable ? [{ name: pair.stable, replicas: pair.stableReplicas }] : []));
}

/**
 * What is left of a step's hold: until it ends (none for an approval without a timeout) and
 * until the next analysis check (none without analysis).
 */
export interface HoldLeft {
  remainingMs?: number;
  untilCheckMs?: number;
}

/** How long the hold waits next: until it ends or until the next check, whichever is first. */
export function nextWaitMs(left: HoldLeft): number {
  return Math.min(left.remainingMs ?? Infinity, left.untilCheckMs ?? Infinity);
}

/**
 * What is left after one wait of `waitMs`. A wait that its timer ended spent exactly `waitMs`;
 * only an interrupted one (pause, promote, approval, stop), which has no timer to go by, spent
 * what the workflow clock measured, `clockMs`.
 *
 * The clock must not decide a fired timer's case: a worker whose first task for a run is a query
 * (a watcher polling a restarted worker) replays the run at a workflow time that can lag the
 * server's, and may see the timer fire "early" by it; a later replay reads the real times. A
 * hold that went by the clock there started a second timer for the "rest" that no replay
 * starts, and the run failed with a non-determinism error.
 */
export function afterWait(left: HoldLeft, waitMs: number, timerFired: boolean, clockMs: number): HoldLeft {
  const spent = timerFired ? waitMs : clockMs;
  return {
    ...(left.remainingMs !== undefined && { remainingMs: left.remainingMs - spent }),
    ...(left.untilCheckMs !== undefined && { untilCheckMs: left.untilCheckMs - spent }),
  };
}

/**
 * The timer of a wait of `waitMs` whose status write, shown with the deadline, took `writeMs` of
 * the same workflow task. The timer starts only when that task completes, after the write (a
 * local activity): shorter by the write, it ends at the deadline the status shows instead of
 * that much after it. Never below 1 ms: a timer of 0 is not a timer.
 */
export function holdTimerMs(waitMs: number, writeMs: number): number {
  return Math.max(1, waitMs - Math.max(0, writeMs));
}

/** `90` → `1m30s`, `3600` → `1h`, `1.5` → `1.5s`: how holds read in summaries. */
export function formatSeconds(seconds: number): string {
  const h = Math.floor(seconds / 3600);
  const m = Math.floor((seconds % 3600) / 60);
  const s = Math.round((seconds % 60) * 1000) / 1000;
  const parts = [h && `${h}h`, m && `${m}m`, (s || (!h && !m)) && `${s}s`].filter(Boolean);
  return parts.join('');
}

/** Events a canary's run may reach before it continues as new, unless its input says otherwise. */
export const DEFAULT_HISTORY_LIMIT = 10_000;

/** How long the run's history is now, as `workflowInfo()` tells it. */
export interface HistoryNow {
  /** Events so far (`historyLength`). */
  length: number;
  /** The server's own hint (`continueAsNewSuggested`): its event count or byte size is near its limit. */
  suggested: boolean;
}

/**
 * Whether a run continues as new at its next safe point: its history has `limit` events or more,
 * or the server suggests it. Temporal terminates a run at 51,200 events (or 50 MB); a hold with
 * analysis adds ~11 events a check, so an approval held for ~10 h at the default 10 s interval
 * got there, and the canary copies were left up with the stable side scaled down.
 *
 * Examples (limit 10,000): 9,999 events → no; 10,000 → yes; 200 events and suggested → yes.
 */
export function historyFull({ length, suggested }: HistoryNow, limit = DEFAULT_HISTORY_LIMIT): boolean {
  return suggested || length >= limit;
}

/**
 * Where a canary that continued as new picks up: inside the hold of step `step` (0-based), its
 * scale-up and readiness behind it. `left` is the hold's time left by the rule of afterWait (a
 * fired timer counts as its length), so the hold ends at its original deadline.
 */
export interface CanaryResume {
  step: number;
  left: HoldLeft;
  /** Analysis failures so far (all steps): failure_limit counts across runs. */
  analysisFailures: number;
  /** The step records, startedAt/readyAt/endedAt as the first run wrote them. */
  history: CanaryStepRecord[];
  reason?: string;
  /** Since when the step's approval gate has been open, when it has one. */
  gateSince?: string;
}

/**
 * The input of the run a run continues as: the same input with where it resumes and what its
 * control carries (pause, approvals). Nothing else changes, so a re-plan still starts over from it.
 */
export function continuedRun<Run extends object, Resume>(
  run: Run,
  resume: Resume,
  carried: Carried,
): Run & { resume: Resume; carried: Carried } {
  return { ...run, resume, carried };
}
