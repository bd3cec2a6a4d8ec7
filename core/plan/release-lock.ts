import { objectWorkflowId } from './names';

/**
 * The release lock (docs/design/one-workflow.md, decision 7): never two helm writes on one
 * release at once. Every write of a release runs under the workflow ID of the object that owns
 * it, and Temporal refuses a second running workflow under one ID. A release has one owner
 * (the bridge's claims refuse a second): the manifest that lists its chart's group, else the
 * group that lists its chart, else the chart itself. Its deploys, uninstalls and retries run
 * under that ID already; a drift repair and an undo of the release start under it too, so a
 * repair waits for a deploy in flight and a deploy for a repair.
 */

/** An ArmadaChart and what lists it (runs/targets.ts, ObjectPlace, reads the same). */
export interface ReleaseOwnerPlace {
  /** The chart's namespace (its manifest's and group's too). */
  namespace: string;
  /** The chart's name. */
  name: string;
  /** The manifest that lists the chart's group. */
  manifest?: string;
  /** The group that lists the chart. */
  group?: string;
}

/**
 * The workflow ID of a chart that stands alone: its one-workflow run's, a plan of one
 * (`ArmadaChart:<namespace>/<name>`). An older build ran it as a chart workflow under its
 * release's ID (`helm:<namespace>/<release>`): see core/plan/legacy-chart-runs.ts.
 */
export function standaloneChartWorkflowId(chart: { namespace: string; name: string }): string {
  return objectWorkflowId('ArmadaChart', chart.namespace, chart.name);
}

/**
 * The workflow ID every write of a chart's release runs under (its owner's run): the manifest's
 * (`ArmadaManifest:<ns>/<name>`), else the group's (`ArmadaChartGroup:<ns>/<name>`), else the
 * chart's own (standaloneChartWorkflowId).
 */
export function releaseOwnerWorkflowId(place: ReleaseOwnerPlace): string {
  if (place.manifest) return objectWorkflowId('ArmadaManifest', place.namespace, place.manifest);
  if (place.group) return objectWorkflowId('ArmadaChartGroup', place.namespace, place.group);
  return standaloneChartWorkflowId(place);
}
