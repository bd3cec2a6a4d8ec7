/** The one-workflow run's decisions (workflows/run/): what it drives, and when a group ends it. */

import type { ChartRun, GroupOutcome } from '../contracts/workflows';
import type { GroupProgress } from '../progress';
import type { ChartPlan, GroupPlan, ManifestPlan } from './plans';

/**
 * What the run cannot run yet, by group (it refuses the plan before it starts): Deployers and
 * canary lockstep still need their group workflow. Undefined when it runs every group.
 */
export function unsupportedInRun(plan: ManifestPlan): string | undefined {
  const problems = plan.groups.flatMap((group: GroupPlan) => [
    ...(group.deployers?.length ? [`group ${group.name} lists Deployers`] : []),
    ...(group.lockstep ? [`group ${group.name} steps its canaries in lockstep`] : []),
  ]);
  return problems.length
    ? `${plan.manifest}: deployRun does not run this plan yet: ${problems.join('; ')}`
    : undefined;
}

/**
 * What the release driver drives for one chart of a group whose objects live in
 * `resourceNamespace`: its deploy, or its uninstall.
 */
export function chartRunOf(
  plan: ChartPlan,
  resourceNamespace: string,
  mode: ChartRun['mode'] = 'deploy',
): ChartRun {
  return {
    chart: plan.chart,
    release: plan.release,
    namespace: plan.namespace,
    spec: plan.spec,
    mode,
    resourceNamespace,
    ...(plan.dependencies && { dependencies: plan.dependencies }),
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
