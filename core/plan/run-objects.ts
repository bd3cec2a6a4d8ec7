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

/**
 * Temporal's default limit on one search attribute's value, the JSON of the list in bytes
 * (`frontend.searchAttributesSizeOfValueLimit`; Temporal Cloud's too). A run that sets a longer
 * value fails in its first workflow task.
 */
export const SEARCH_VALUE_LIMIT_BYTES = 2048;

/**
 * The run's `ArmadaObjects` value: runObjects as far as it fits in SEARCH_VALUE_LIMIT_BYTES. The
 * manifest, groups and Deployers come first (each is found by nothing else when no cluster is
 * there to read), then the charts in plan order until the next one would not fit: a chart left
 * out is found through its group (`ArmadaObjects = 'ArmadaChartGroup/<ns>/<group>'`) or its
 * place. Names are DNS labels, so a key's JSON is its length plus two quotes. About 50 chart
 * keys of 20-character names fit; the run still steers every object it deploys (runObjects).
 */
export function searchedObjects(plan: ManifestPlan): string[] {
  const all = runObjects(plan);
  const isChart = (key: string) => key.startsWith('ArmadaChart/');
  const listed: string[] = [];
  let bytes = '[]'.length;
  for (const key of [...all.filter((k) => !isChart(k)), ...all.filter(isChart)]) {
    const more = JSON.stringify(key).length + (listed.length > 0 ? ','.length : 0);
    if (bytes + more > SEARCH_VALUE_LIMIT_BYTES) break;
    listed.push(key);
    bytes += more;
  }
  return listed;
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

/**
 * What a sender tells of a pause, resume or rollback naming a chart (`target`) that reaches the
 * run deploying it, `run`, not the chart's canary (decision 5): refused when the run's plan has no
 * such chart (`planned`: the charts its progress lists; unknown: not checked), as the run would
 * refuse it (routeInRun) while the sender answered "pausing"; else what the run does with it: pass
 * it on to the chart's canary when one runs, or take it as a whole, for every chart it deploys
 * (a chart without a canary has no pause or rollback of its own inside its manifest's run).
 */
export function chartMessageAtRun(
  verb: 'pause' | 'resume' | 'rollback',
  target: ObjectRef,
  run: string,
  planned: readonly string[] | undefined,
  canary: { workflowId: string; running: boolean },
): { refused: string } | { note: string } {
  const what = describeObject(target);
  if (planned && !planned.includes(target.name))
    return {
      refused: `${what} is not in the plan of the run ${run} (its charts: ${planned.join(', ') || 'none'}): that run started before the chart was listed; steer it by the object it runs, or wait for the run that deploys the chart`,
    };
  if (canary.running) return { note: `passed on to the canary of ${what} (${canary.workflowId})` };
  return {
    note: `${what} has no canary running: ${run} takes the ${verb} as a whole, for every chart it deploys`,
  };
}
