/** The one-workflow run's decisions (workflows/run/): what it drives, and when a group ends it. */

import type { ChartRun, GroupOutcome } from '../contracts/workflows';
import type { GroupProgress } from '../progress';
import type { LockstepLink } from './lockstep';
import type { ChartPlan } from './plans';

/**
 * What the release driver drives for one chart of a group whose objects live in
 * `resourceNamespace`: its deploy, or its uninstall; `lockstep`: the set its canary steps with,
 * when its group has one.
 */
export function chartRunOf(
  plan: ChartPlan,
  resourceNamespace: string,
  mode: ChartRun['mode'] = 'deploy',
  lockstep?: LockstepLink,
): ChartRun {
  return {
    chart: plan.chart,
    release: plan.release,
    namespace: plan.namespace,
    spec: plan.spec,
    mode,
    resourceNamespace,
    ...(plan.dependencies && { dependencies: plan.dependencies }),
    ...(lockstep && { lockstep }),
  };
}

/** A group's row state once it ran. */
export function groupEndState(outcome: GroupOutcome): GroupProgress['state'] {
  return outcome.failed.length ? 'failed' : outcome.stopped ? 'stopped' : 'done';
}

/** Why a failed group ends the run: each failed chart and its error. */
export function groupFailure(outcome: GroupOutcome): string {
  return `group ${outcome.group} failed: ${outcome.failed.map((f) => `${f.chart}: ${f.error}`).join('; ')}`;
}
