import type { Client } from '@temporalio/client';
import {
  deployingRunsQuery,
  describeObject,
  type ObjectRef,
  type SteeringVerb,
} from '../core/plan/run-objects';
import { ControlRefused, firstRunning } from './control';
import { routeOf, type ObjectPlace, type Route } from './targets';

/** The running runs that deploy `object` (their `ArmadaObjects` lists it), by workflow ID. */
export async function runsDeploying(client: Client, object: ObjectRef): Promise<string[]> {
  const workflowIds: string[] = [];
  for await (const run of client.workflow.list({ query: deployingRunsQuery(object) }))
    workflowIds.push(run.workflowId);
  return workflowIds;
}

/**
 * Where a steering verb on an object goes (routeOf), and for an ArmadaChart whose place names
 * no manifest or group (no cluster to read it from, or a chart standing alone) and which has no
 * run of its own running (no canary, no release run): the one run that deploys it, found by its
 * `ArmadaObjects`, with the chart as the message's target, so that the run passes it on to that
 * chart alone (docs/design/one-workflow.md, decision 5). Refused, naming what was looked at,
 * when no run deploys it, or when several do (steer the one meant by its own object).
 */
export async function routeToDeployingRun(
  client: Client,
  place: ObjectPlace,
  verb: SteeringVerb,
): Promise<Route> {
  const route = routeOf(place, verb);
  if (place.kind !== 'ArmadaChart' || place.manifest || place.group) return route;
  let nothing = 'refused' in route ? route.refused : '';
  if (!('refused' in route)) {
    try {
      await firstRunning(client, route.workflowIds, verb);
      return route;
    } catch (err) {
      if (!(err instanceof ControlRefused)) throw err;
      nothing = err.message;
    }
  }
  const target: ObjectRef = { kind: place.kind, namespace: place.namespace, name: place.name };
  const runs = await runsDeploying(client, target);
  if (runs.length === 1) return { workflowIds: runs, target };
  const what = describeObject(target);
  if (runs.length > 1)
    return {
      refused: `${what} is deployed by ${runs.length} running runs (${runs.join(', ')}): steer the one you mean through the object it runs (armadactl ${verb} amf/NAME)`,
    };
  return { refused: `${nothing}; and no running run deploys ${what} (ArmadaObjects)` };
}
