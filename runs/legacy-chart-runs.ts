import type { ChartRun } from '../core/contracts/workflows';
import type { DeployRunInput } from '../core/contracts/run';
import { chartPlanOfOne } from '../core/plan/plans-of-one';
import { ArmadaKind, ArmadaName, ArmadaNamespace } from '../workflows/search-attributes';
import type { ObjectPlace } from './targets';

/**
 * A standalone ArmadaChart's runs of an older build (docs/how-to/scale-and-upgrade.md, "Worker upgrades"): `chartWorkflow`
 * under its release's ID `helm:<ns>/<release>`, with undos and drift repairs under it too; this
 * build runs the chart as `deployRun` under `ArmadaChart:<ns>/<name>`. The day-two commands read
 * both (runs/day-two.ts), so `rollback --previous` and `retry` still reach a deploy of the older
 * build. Found by the chart's search attributes, so also when its release is not known.
 */

/** A chart no manifest or group lists: its runs are its own. */
function standsAlone(place: ObjectPlace): boolean {
  return place.kind === 'ArmadaChart' && place.manifest === undefined && place.group === undefined;
}

/** A visibility query for an object's runs (`query`), with a standalone chart's older runs added. */
export function withLegacyChartRuns(place: ObjectPlace, query: string): string {
  if (!standsAlone(place)) return query;
  const { namespace, name } = place;
  const legacy = `WorkflowId STARTS_WITH 'helm:' AND ${ArmadaKind.name} = 'ArmadaChart' AND ${ArmadaNamespace.name} = '${namespace}' AND ${ArmadaName.name} = '${name}'`;
  return `(${query}) OR (${legacy})`;
}

/** The input of the run that takes up a chart workflow of the older build: its plan of one. */
export function legacyChartRetry(input: ChartRun): DeployRunInput {
  return { plan: chartPlanOfOne(input), mode: input.mode };
}
