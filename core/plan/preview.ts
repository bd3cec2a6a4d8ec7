import type { ArmadaChartSpec } from '../../api/chart';
import { canarySteps, splitAt, type DeploymentPair } from './canary';
import { classifyRelease, nextAction, type ObservedRelease, type ReleaseAction } from './release';

/**
 * What a chart run would do to its release, decided by the run's own planner (classifyRelease,
 * nextAction) from the same observation and digest, so a preview (`armadactl diff`) never says
 * "unchanged" where a run would write:
 * - `install`, `upgrade`, `uninstall`: the run writes the release;
 * - `unchanged`: it writes nothing (in sync; nothing to uninstall; a failed protected release
 *   skipped with `continue_processing`);
 * - `recover`: a helm that died left the release pending; the run first rolls it back (or
 *   uninstalls a first install), then decides again;
 * - `refused`: the run fails without writing (a release armada-temporal did not create and may
 *   not adopt; a failed protected release without `continue_processing`).
 */
export type PreviewAction = 'install' | 'upgrade' | 'unchanged' | 'uninstall' | 'recover' | 'refused';

export interface ReleasePreview {
  action: PreviewAction;
  /** The release's current revision; null when there is none. */
  revision: number | null;
  /** Why, in a phrase: `chart or values changed since revision 3`. */
  reason: string;
}

/** What a run is asked for: to uninstall the release, or to deploy the chart and values of `digest`. */
export type Wanted = { mode: 'uninstall' } | { mode: 'deploy'; digest: string };

/**
 * The first 12 hex digits of a digest, enough to tell two apart in a line; past the form a keyed
 * one starts with (`hmac-sha256:`).
 */
const short = (digest: string | undefined) => (digest ? digest.replace(/^[\w-]+:/, '').slice(0, 12) : 'none');

/**
 * The action a run would take first, from the release as observed (null: none) and what it is
 * asked for; `spec` brings the chart's `adopt` and `protected`.
 *
 * Examples: no release, deploy → install; revision 2 deployed with the wanted digest → unchanged;
 * with another digest → upgrade; revision 2 pending-upgrade, last deployed 1 → recover (roll back
 * to 1); revision 1 written by hand, no adopt → refused; uninstall of revision 3 → uninstall.
 */
export function previewOf(
  observed: ObservedRelease | null,
  wanted: Wanted,
  spec: Pick<ArmadaChartSpec, 'adopt' | 'protected'>,
): ReleasePreview {
  const present = observed && observed.status !== 'uninstalled' ? observed : null;
  const revision = present?.revision ?? null;
  // The chart run's first check, in either mode (workflows/chart.ts, driveRelease).
  if (observed?.createdByArmada === false && !spec.adopt)
    return {
      action: 'refused',
      revision: observed.revision,
      reason:
        'armada-temporal did not create this release: a run leaves it untouched and fails (adopt: true, where an ArmadaPolicy allows adoption, takes it over)',
    };
  if (wanted.mode === 'uninstall')
    return present
      ? { action: 'uninstall', revision, reason: `revision ${revision} (${present.status}) is uninstalled` }
      : { action: 'unchanged', revision, reason: 'no release to uninstall' };
  const state = classifyRelease(observed, wanted.digest);
  const action = nextAction(state, {
    isProtected: spec.protected !== undefined,
    continueProcessing: spec.protected?.continue_processing ?? false,
  });
  return previewOfAction(action, { failed: state.state === 'failed', present, digest: wanted.digest });
}

/**
 * A deploy's first action as a preview says it: `present` is the release observed (null: none or
 * uninstalled), `failed` whether its last revision failed, `digest` the wanted one.
 */
function previewOfAction(
  action: ReleaseAction,
  { failed, present, digest }: { failed: boolean; present: ObservedRelease | null; digest: string },
): ReleasePreview {
  const revision = present?.revision ?? null;
  switch (action.action) {
    case 'install':
      return { action: 'install', revision, reason: 'no release yet' };
    case 'none':
      return {
        action: 'unchanged',
        revision,
        reason: `revision ${revision} runs this chart and these values (digest ${short(digest)})`,
      };
    case 'upgrade':
      return {
        action: 'upgrade',
        revision,
        reason: failed
          ? `revision ${revision} failed; the run upgrades it again`
          : `chart or values changed since revision ${revision} (digest ${short(present?.digest)} → ${short(digest)})`,
      };
    case 'rollback':
      return {
        action: 'recover',
        revision,
        reason: `revision ${revision} is ${present?.status} (its helm died): the run first rolls back to revision ${action.revision}, then upgrades if the chart or values differ`,
      };
    case 'uninstall':
      return {
        action: 'recover',
        revision,
        reason: `the first install (revision ${revision}) is ${present?.status} (its helm died): the run uninstalls it first, then installs`,
      };
    case 'protected':
      return action.then === 'skip'
        ? {
            action: 'unchanged',
            revision,
            reason: `revision ${revision} failed and the chart is protected: the run skips it (continue_processing)`,
          }
        : {
            action: 'refused',
            revision,
            reason: `revision ${revision} failed and the chart is protected: the run stops (fix it by hand, or set protected.continue_processing)`,
          };
    case 'wait':
    case 'test':
      // Only a revision the run itself wrote owes a wait or a test; a preview wrote none.
      throw new Error(`a preview cannot owe a ${action.action}`);
  }
}

/** One canary step as a preview shows it: its percent, its hold, and each Deployment's split. */
export interface CanaryStepPreview {
  /** 1-based, as the canary's progress counts. */
  step: number;
  percent: number;
  holdSeconds?: number;
  approval?: boolean;
  /** Per pair (see DeploymentPair): the copy's replicas and the stable's, at this step. */
  splits: { canary: string; stable: string | null; replicas: { canary: number; stable: number } }[];
}

/**
 * The steps a canary upgrade would run: the spec's steps (canarySteps: durations in seconds, the
 * final 100 % added) with each pair's split at that step (splitAt of its R).
 *
 * Example: steps [{10, sleep 1m}, {50, approval}], one pair web (R 10) → step 1 at 10 %, hold 60 s,
 * web-canary 1 / web 9; step 2 at 50 %, approval, 5/5; step 3 at 100 %, 10/0.
 */
export function canaryPreview(
  steps: readonly { percent: number; sleep?: number | string; approval?: boolean }[],
  pairs: readonly DeploymentPair[],
): CanaryStepPreview[] {
  return canarySteps(steps).map((s, i) => ({
    step: i + 1,
    percent: s.percent,
    ...(s.holdSeconds !== undefined && { holdSeconds: s.holdSeconds }),
    ...(s.approval && { approval: true }),
    splits: pairs.map((pair) => {
      const { canary, stable } = splitAt(pair.replicas, s.percent);
      return { canary: pair.canary, stable: pair.stable, replicas: { canary, stable } };
    }),
  }));
}
