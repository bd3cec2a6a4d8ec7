/**
 * Drift: an object of a managed Helm release deleted, or its spec changed, by someone other than
 * Helm. The bridge notices it on a watch; a drift run confirms it against the release's current
 * revision and, by the chart's `drift` setting, re-applies that revision or only reports it.
 */

/** One object of a release that changed outside Helm. */
export interface DriftedObject {
  apiVersion: string;
  kind: string;
  namespace: string;
  name: string;
  change: 'deleted' | 'edited';
  /** The field manager of the edit (e.g. `kubectl-edit`); unknown for a deletion. */
  by?: string;
}

export type DriftPolicy = 'repair' | 'report' | 'ignore';

export interface DriftRun {
  release: string;
  /** Namespace of the release. */
  namespace: string;
  /** The ArmadaChart that manages the release: where the Events go, and the ServiceAccount its runs act as. */
  chart: { namespace: string; name: string; uid?: string; serviceAccount?: string };
  policy: Exclude<DriftPolicy, 'ignore'>;
  objects: DriftedObject[];
}

export interface DriftOutcome {
  result: 'none' | 'reported' | 'repaired';
  /** The revision re-applied (repaired) or found (reported). */
  revision?: number;
  /** The revision the repair wrote. */
  repairedAs?: number;
  objects: DriftedObject[];
}

/** The key that identifies an object across its kinds: `apps/v1 Deployment apps/web`. */
export function objectId(obj: Pick<DriftedObject, 'apiVersion' | 'kind' | 'namespace' | 'name'>): string {
  return `${obj.apiVersion} ${obj.kind} ${obj.namespace}/${obj.name}`;
}

/** `Deployment web deleted, ConfigMap web-config edited by kubectl-edit` (at most 5 named). */
export function describeDrift(objects: DriftedObject[]): string {
  const named = objects
    .slice(0, 5)
    .map((o) => `${o.kind} ${o.name} ${o.change}${o.by ? ` by ${o.by}` : ''}`)
    .join(', ');
  return objects.length > 5 ? `${named} and ${objects.length - 5} more` : named;
}

/** Adds newly drifted objects to those already waiting; the newest word on an object wins. */
export function mergeDrift(waiting: DriftedObject[], more: DriftedObject[]): DriftedObject[] {
  const byId = new Map(waiting.map((o) => [objectId(o), o]));
  for (const o of more) byId.set(objectId(o), o);
  return [...byId.values()];
}
