import type { ArmadaChartSpec } from '../api/chart';
import type { ArmadaChartGroupSpec } from '../api/chart-group';
import { kinds, type KindName } from '../api/kinds';
import type { ArmadaManifestSpec } from '../api/manifest';
import { gateBefore } from '../core/plan/gates';
import type { ObjectRef } from '../core/plan/run-objects';
import {
  canaryWorkflowId,
  deployerRolloutWorkflowId,
  objectWorkflowId,
  prefixedRelease,
} from '../core/plan/names';
import { releaseOwnerWorkflowId } from '../core/plan/release-lock';

/** The workflow of a manifest: its ID is its lock, so one manifest has one run at a time. */
export function manifestWorkflowId(namespace: string, name: string): string {
  return objectWorkflowId('ArmadaManifest', namespace, name);
}

/** An object a command line names, and the workflow that runs it. */
export interface Target {
  kind: KindName;
  namespace: string;
  name: string;
  /** The workflow steered by status, watch and the control commands (an ArmadaChart's canary). */
  workflowId: string;
}

/**
 * The object a command line names: `NAME` or `amf/NAME` (an ArmadaManifest), `dpl/NAME` (a
 * Deployer), `act/NAME` (an ArmadaChart, steered through its canary), `acg/NAME` (a group no
 * manifest lists; a manifest's groups are steered through the manifest). Kinds go by name,
 * plural, singular or short name, as kubectl takes them.
 */
export function resolveTarget(target: string, namespace: string): Target {
  const slash = target.indexOf('/');
  if (slash < 0)
    return {
      kind: 'ArmadaManifest',
      namespace,
      name: target,
      workflowId: manifestWorkflowId(namespace, target),
    };
  const [kindName, name] = [target.slice(0, slash).toLowerCase(), target.slice(slash + 1)];
  const kind = (Object.keys(kinds) as KindName[]).find((k) => {
    const names = kinds[k];
    return [k.toLowerCase(), names.plural, names.singular, ...names.shortNames].includes(kindName);
  });
  if (kind === undefined)
    throw new Error(
      `unknown kind "${target.slice(0, slash)}" in ${target}; use amf/NAME, acg/NAME, act/NAME or dpl/NAME`,
    );
  const workflowId =
    kind === 'ArmadaChart' ? canaryWorkflowId(namespace, name) : objectWorkflowId(kind, namespace, name);
  return { kind, namespace, name, workflowId };
}

/** The workflow ID of the run a command line names (see resolveTarget). */
export function targetWorkflowId(target: string, namespace: string): string {
  return resolveTarget(target, namespace).workflowId;
}

/** The error for a target that has never run, saying how to start it. */
export function noRun(what: string, cause?: unknown): Error {
  return new Error(`no run of ${what}; start one with \`armadactl apply\``, { cause });
}

/** Where an object sits: what drives it (the manifest or group that lists it) and what it deploys. */
export interface ObjectPlace {
  kind: KindName;
  namespace: string;
  name: string;
  /** The manifest that lists it (a group), or that lists its group (a chart). */
  manifest?: string;
  /** The group that lists it (a chart). */
  group?: string;
  /** A chart's Helm release as its run names it (prefixed when a manifest lists it); unknown: absent. */
  release?: { namespace: string; release: string };
  /** An ArmadaChart with canary steps. */
  canary?: boolean;
}

/** What an operator can do to a run: the control commands, and reading its progress. */
export type Verb = 'pause' | 'resume' | 'approve' | 'promote' | 'rollback' | 'cancel' | 'progress';

/**
 * Where a verb on an object goes: the runs to try, in order (the first one running takes it),
 * with the gate an approval names when the object stands for one, and the object inside the run
 * the message is for (`target`, a chart of the run that deploys it: runs/deploying-run.ts); or
 * why it cannot go anywhere.
 */
export type Route = { workflowIds: string[]; gate?: string; target?: ObjectRef } | { refused: string };

/**
 * Which run steers an object, for every kind and verb (docs/how-to/operate-runs.md, "Run control"):
 * - a manifest, a group no manifest lists: their own run;
 * - a Deployer: its rollout while one runs (its canary state lives there), else its own run: a
 *   standalone Deployer's rollout is its run's child `Deployer:<ns>/<name>/rollout`; a
 *   group's Deployer, and one an older build runs, roll out under its own ID; cancel too, so a
 *   cancelled Deployer stops its rollout as it did, and its uninstall's ID is the last one;
 * - a group a manifest lists: the manifest's run (its pause, its saga); approving the group
 *   passes the manifest's gate before it, and only that gate;
 * - a chart: its canary while one runs, else the run that drives it: its manifest's, its
 *   group's, or its own (`ArmadaChart:<namespace>/<name>`) when it stands alone;
 *   approve and promote go to its canary only, and a chart without one refuses them; a
 *   manifest's chart is the message's `target`: without a canary running, its manifest's run
 *   takes a pause, resume or rollback as a whole (control says so in its answer);
 * - cancel: the run of the object itself (a manifest, a Deployer, a group or chart on its own),
 *   never a canary alone nor, for a group or chart a manifest or group lists, the run that lists
 *   it: that is refused, naming the run to cancel instead.
 * What a run cannot do (approve with no gate waiting, promote without a canary) it refuses
 * itself, so the refusal names what the run waits for.
 */
export function routeOf(place: ObjectPlace, verb: Verb): Route {
  const { kind, namespace, name } = place;
  const driver = (): string[] => {
    if (place.manifest) return [objectWorkflowId('ArmadaManifest', namespace, place.manifest)];
    if (kind !== 'ArmadaChart') return [objectWorkflowId(kind, namespace, name)];
    return [releaseOwnerWorkflowId(place)];
  };
  if (kind === 'Deployer') return { workflowIds: [deployerRolloutWorkflowId(namespace, name), ...driver()] };
  if (verb === 'cancel') {
    const lister = place.manifest ? `amf/${place.manifest}` : place.group && `acg/${place.group}`;
    if (lister)
      return {
        refused: `${kind} ${namespace}/${name} is deployed by the run of ${lister}: cancel that (armadactl cancel ${lister}) to stop it`,
      };
    return { workflowIds: driver() };
  }
  if (kind !== 'ArmadaChart') {
    const gate =
      kind === 'ArmadaChartGroup' && place.manifest && verb === 'approve' ? gateBefore(name) : undefined;
    return { workflowIds: driver(), ...(gate && { gate }) };
  }
  const canary = canaryWorkflowId(namespace, name);
  // A manifest's run deploys its charts: the message names the chart (decision 5), so the run
  // passes it on to the chart's canary or refuses a chart it does not deploy (runs/control.ts).
  const named = place.manifest && verb !== 'progress' ? { target: { kind, namespace, name } } : {};
  if (verb === 'approve' || verb === 'promote')
    return place.canary
      ? { workflowIds: [canary], ...named }
      : { refused: `ArmadaChart ${namespace}/${name} has no canary steps: nothing to ${verb}` };
  return { workflowIds: place.canary ? [canary, ...driver()] : driver(), ...named };
}

/** The manifest and group specs an object's place is read from (its namespace's, not being deleted). */
export interface Listings {
  groups: { name: string; spec: Pick<ArmadaChartGroupSpec, 'chart_group'> }[];
  manifests: {
    name: string;
    spec: Pick<ArmadaManifestSpec, 'chart_groups'> & Partial<Pick<ArmadaManifestSpec, 'release_prefix'>>;
  }[];
}

/** Where an object sits among the manifests and groups of its namespace (see ObjectPlace). */
export function placeOf(
  kind: KindName,
  namespace: string,
  name: string,
  spec: unknown,
  { groups, manifests }: Listings,
): ObjectPlace {
  const place: ObjectPlace = { kind, namespace, name };
  const manifestOf = (group: string) => manifests.find((m) => m.spec.chart_groups.includes(group));
  if (kind === 'ArmadaChartGroup') place.manifest = manifestOf(name)?.name;
  if (kind === 'ArmadaChart') {
    const chart = spec as Pick<ArmadaChartSpec, 'release' | 'namespace' | 'canary'>;
    const group = groups.find((g) => g.spec.chart_group.includes(name));
    const manifest = group && manifestOf(group.name);
    Object.assign(place, {
      group: group?.name,
      manifest: manifest?.name,
      release: {
        namespace: chart.namespace,
        release: prefixedRelease(manifest?.spec.release_prefix, chart.release),
      },
      canary: chart.canary !== undefined,
    });
  }
  return place;
}
