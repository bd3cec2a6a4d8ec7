import { upsertSearchAttributes } from '@temporalio/workflow';
import { ArmadaObjects } from '../search-attributes';
import { describeObject, routeInRun, runObjects, searchedObjects } from '../../core/plan/run-objects';
import type { ManifestPlan } from '../../core/plan/plans';
import type { RunControl } from '../control';
import type { CanaryChildren } from './progress';

/**
 * The objects a run deploys (docs/design/one-workflow.md, decisions 4 and 5): listed in its
 * `ArmadaObjects` search attribute (as many as Temporal's size limit holds, searchedObjects), so
 * that a chart, group or Deployer finds the run that deploys it; and the addressees of messages that name one (`target`): a chart's goes to its canary
 * child while one runs. Set at the run's start; a re-plan continues as new, and the new run sets
 * them from its own plan. Call before `control.listen`.
 */
export function steerObjects(plan: ManifestPlan, control: RunControl, canaries: CanaryChildren): void {
  const deployed = runObjects(plan);
  upsertSearchAttributes([{ key: ArmadaObjects, value: searchedObjects(plan) }]);
  control.targeted = (verb, target) => {
    const canary = canaries.of(target.name);
    const route = routeInRun(verb, target, deployed, canary !== undefined);
    if ('refused' in route) return route;
    if (route.to === 'run') return undefined;
    return {
      pass: (signal, req) => {
        canary!.signal(signal, req);
        return `${verb} passed on to the canary of ${describeObject(target)} (${canary!.running}), which checks it there`;
      },
    };
  };
}
