/**
 * The objects a run deploys and the messages that name one of them (docs/design/one-workflow.md,
 * decisions 4 and 5): the run's `ArmadaObjects` search attribute, the visibility query that finds
 * the run deploying an object, and where a steering message naming an object goes in the run.
 */

import type { KindName } from '../../api/kinds';
import type { ManifestPlan } from './plans';

/** An object a run deploys, as a steering message names it (its `target`). */
export interface ObjectRef {
  kind: KindName;
  namespace: string;
  name: string;
}

/** How `ArmadaObjects` lists an object: `<Kind>/<namespace>/<name>`. */
export function objectKey({ kind, namespace, name }: ObjectRef): string {
  return `${kind}/${namespace}/${name}`;
}

/** An object as messages show it: `ArmadaChart apps/web`. */
export function describeObject({ kind, namespace, name }: ObjectRef): string {
  return `${kind} ${namespace}/${name}`;
}

/**
 * The run's `ArmadaObjects`: the manifest, then each group with its charts and Deployers, in plan
 * order, each once. All of them live in the plan's namespace.
 */
export function runObjects(plan: ManifestPlan): string[] {
  const at = (kind: KindName, name: string) => objectKey({ kind, namespace: plan.namespace, name });
  const keys = [
    at('ArmadaManifest', plan.manifest),
    ...plan.groups.flatMap((group) => [
      at('ArmadaChartGroup', group.name),
      ...group.charts.map((chart) => at('ArmadaChart', chart.chart)),
      ...(group.deployers ?? []).map((deployer) => at('Deployer', deployer.name)),
    ]),
  ];
  return [...new Set(keys)];
}

/** The visibility query of the running runs that deploy `object`. */
export function deployingRunsQuery(object: ObjectRef): string {
  return `ArmadaObjects = '${objectKey(object)}' AND ExecutionStatus = 'Running'`;
}

/** The steering messages that may name an object inside a run. */
export type SteeringVerb = 'pause' | 'resume' | 'rollback' | 'approve' | 'promote';

/**
 * Where a message naming `target` goes in a run that deploys `deployed`: on to the chart's canary
 * while one runs (`canary`), else to the run itself (`run`: a pause, resume or rollback of what
 * drives the chart, as armadactl routes one to a chart without a canary); or refused, saying why:
 * an object the run does not deploy, or an approve or promote for a chart with no canary running
 * (the run's own gates are not the chart's).
 */
export function routeInRun(
  verb: SteeringVerb,
  target: ObjectRef,
  deployed: readonly string[],
  canaryRunning: boolean,
): { to: 'run' | 'canary' } | { refused: string } {
  const what = describeObject(target);
  if (!deployed.includes(objectKey(target))) return { refused: `${what} is not deployed by this run` };
  if (target.kind !== 'ArmadaChart') return { to: 'run' };
  if (canaryRunning) return { to: 'canary' };
  if (verb === 'approve' || verb === 'promote')
    return { refused: `${what} has no canary running in this run: nothing to ${verb} there` };
  return { to: 'run' };
}
