import type { ArmadaChartSpec } from '../api/chart';
import type { ArmadaChartGroupSpec } from '../api/chart-group';
import type { DeployerSpec } from '../api/deployer';
import type { KindName } from '../api/kinds';
import type { ArmadaManifestSpec } from '../api/manifest';
import { describeProblems, validateObject, type Problem } from '../api/validate';
import type { ClaimDocument, ClaimKey } from '../core/plan/manifest';
import { DOC_PAGES, pointingTo } from '../core/doc-pages';
import { prefixedRelease } from '../core/plan/names';
import { pendingGeneration } from '../core/plan/status';
import { formatSpecs } from '../core/plan/specs';
import { stableJson } from '../core/stable-json';
import {
  ACTION_ANNOTATION,
  ACTION_ANNOTATIONS,
  AUTHOR_ANNOTATION,
  BY_ANNOTATION,
  GATE_ANNOTATION,
  NOW_ANNOTATION,
  REASON_ANNOTATION,
  RUN_ANNOTATION,
} from '../runs/annotations';
import type { ArmadaObject } from './watch';

/** Added before a run starts, removed once the uninstall path has finished. */
export const FINALIZER = 'armada.airshipit.org/finalizer';

/** The queue's key of an object: `ArmadaChart/default/shop`. */
export function objectKey(kind: KindName, namespace: string, name: string): string {
  return `${kind}/${namespace}/${name}`;
}

export function parseKey(key: string): { kind: KindName; namespace: string; name: string } {
  const [kind, namespace, name] = key.split('/');
  return { kind: kind as KindName, namespace, name };
}

/** Each kind's spec as its schema parses it. */
interface Specs {
  ArmadaManifest: ArmadaManifestSpec;
  ArmadaChartGroup: ArmadaChartGroupSpec;
  ArmadaChart: ArmadaChartSpec;
  Deployer: DeployerSpec;
}

/** The spec as the planners take it (parsed, defaults filled in), or why the object is invalid. */
export type ParsedSpec<K extends KindName> =
  { valid: true; spec: Specs[K] } | { valid: false; problems: Problem[] };

/** An operator's command through the action annotation, with who wrote it. */
export interface ActionRequest {
  command: string;
  reason?: string;
  gate?: string;
  /** An undo's run (RUN_ANNOTATION) and whether a Deployer goes back at once (NOW_ANNOTATION). */
  run?: string;
  now?: boolean;
  /**
   * Who wrote it, as the API server authenticated them (BY_ANNOTATION); absent when the
   * admission policies that write it are not installed, and then the action is refused.
   */
  by?: string;
  /** The action's annotations present on the object (ACTION_ANNOTATION and those beside it). */
  written: string[];
}

interface ViewOf<K extends KindName> {
  kind: K;
  namespace: string;
  name: string;
  /** The queue's key (objectKey). */
  key: string;
  uid?: string;
  resourceVersion?: string;
  generation?: number;
  /** creationTimestamp in ms (0 when unknown): of two rival claims the older one wins. */
  createdAt: number;
  /** Its deletion has been asked for (it has a deletionTimestamp). */
  deleting: boolean;
  finalizers: string[];
  parsed: ParsedSpec<K>;
  /*
   * What the spec says about other objects and releases, read from the stored spec even when
   * it is invalid (the API server's schema has checked these fields' types): an invalid group
   * still holds the charts it lists, as an invalid chart still claims its release.
   */
  /** The groups a manifest lists, or the charts a group lists, in order; empty for the others. */
  lists: string[];
  /** The Deployers a group lists (`deployers`); empty for the others. */
  deployers: string[];
  /** A manifest's release_prefix. */
  releasePrefix?: string;
  /** The Helm release a chart names itself (unprefixed). */
  release?: { namespace: string; release: string };
  /** A Deployer's Deployments: their namespace and base name. */
  deployment?: { namespace: string; name: string };
  /** A chart with canary steps. */
  canary: boolean;
  targetState?: string;
  /** The action annotation, when an operator has set one. */
  action?: ActionRequest;
  /** Who last changed the spec, as the API server authenticated them (AUTHOR_ANNOTATION). */
  author?: string;
  /** The message of the object's Invalid condition while that is True (what the bridge said). */
  statedInvalid?: string;
  /**
   * Its status says `satisfied: true` of an older generation than its spec's: what its next run
   * deploys is not deployed yet (the bridge says so: markGenerationPending).
   */
  satisfiedBefore?: { generation: number; observedGeneration: number };
}

/**
 * One cached armada object as the bridge reads it, built once (viewOf) when the watch caches or
 * changes it: reconcile, the standalone clean-up and drift read these fields and never the raw
 * object. Narrowed by `kind`.
 */
export type ObjectView<K extends KindName = KindName> = { [k in K]: ViewOf<k> }[K];

/** The cached views of one kind. */
export interface ViewCache<K extends KindName> {
  get(namespace: string, name: string): ObjectView<K> | undefined;
  /** The views of one namespace, or of all. */
  list(namespace?: string): ObjectView<K>[];
}

/** Every kind's cache. */
export type Views = <K extends KindName>(kind: K) => ViewCache<K>;

/** The views of every kind and the claims index the same watch events keep (bridge/claims.ts). */
export interface Cache {
  objects: Views;
  /** ClaimIndex.owner (bridge/claims.ts): the document whose run deploys an object. */
  claims: { owner(target: ClaimKey): ClaimDocument | undefined };
}

const text = (value: unknown): string | undefined => (typeof value === 'string' ? value : undefined);
const texts = (value: unknown): string[] =>
  Array.isArray(value) ? value.filter((v): v is string => typeof v === 'string') : [];

/** The view of a cached object of `kind` (see ObjectView); validates and parses its spec once. */
export function viewOf<K extends KindName>(kind: K, obj: ArmadaObject): ObjectView<K> {
  const { metadata } = obj;
  const validation = validateObject(obj);
  const declared = (typeof obj.spec === 'object' && obj.spec !== null ? obj.spec : {}) as Record<
    string,
    unknown
  >;
  const [release, releaseNamespace] = [text(declared.release), text(declared.namespace)];
  const annotations = metadata.annotations ?? {};
  const command = annotations[ACTION_ANNOTATION];
  const status = obj.status as
    | {
        conditions?: { type: string; status: string; message?: string }[];
        satisfied?: boolean;
        observedGeneration?: number;
      }
    | undefined;
  const invalid = status?.conditions?.find((c) => c.type === 'Invalid');
  const view: ViewOf<K> = {
    kind,
    namespace: metadata.namespace,
    name: metadata.name,
    key: objectKey(kind, metadata.namespace, metadata.name),
    uid: metadata.uid,
    resourceVersion: metadata.resourceVersion,
    generation: metadata.generation,
    createdAt: new Date(metadata.creationTimestamp ?? 0).getTime(),
    deleting: metadata.deletionTimestamp !== undefined,
    finalizers: metadata.finalizers ?? [],
    parsed: validation.problems.length
      ? { valid: false, problems: validation.problems }
      : { valid: true, spec: validation.spec as Specs[K] },
    lists: texts(
      kind === 'ArmadaManifest'
        ? declared.chart_groups
        : kind === 'ArmadaChartGroup'
          ? declared.chart_group
          : [],
    ),
    deployers: texts(kind === 'ArmadaChartGroup' ? declared.deployers : []),
    releasePrefix: text(declared.release_prefix),
    release:
      kind === 'ArmadaChart' && release !== undefined && releaseNamespace !== undefined
        ? { namespace: releaseNamespace, release }
        : undefined,
    deployment: kind === 'Deployer' ? deployerTarget(declared.deployment) : undefined,
    canary: kind === 'ArmadaChart' && declared.canary !== undefined,
    targetState: text(declared.target_state),
    action:
      command === undefined
        ? undefined
        : {
            command,
            reason: annotations[REASON_ANNOTATION],
            gate: annotations[GATE_ANNOTATION],
            ...(annotations[RUN_ANNOTATION] !== undefined && { run: annotations[RUN_ANNOTATION] }),
            ...(annotations[NOW_ANNOTATION] === 'true' && { now: true }),
            by: annotations[BY_ANNOTATION],
            written: ACTION_ANNOTATIONS.filter((a) => annotations[a] !== undefined),
          },
    author: annotations[AUTHOR_ANNOTATION],
    statedInvalid: invalid?.status === 'True' ? (invalid.message ?? '') : undefined,
    satisfiedBefore:
      (status?.satisfied === true && pendingGeneration(metadata.generation, status.observedGeneration)) ||
      undefined,
  };
  return view as ObjectView<K>;
}

/** A Deployer's `deployment.namespace` and `deployment.name`, when both are strings. */
function deployerTarget(deployment: unknown): { namespace: string; name: string } | undefined {
  const fields = (typeof deployment === 'object' && deployment !== null ? deployment : {}) as Record<
    string,
    unknown
  >;
  const [namespace, name] = [text(fields.namespace), text(fields.name)];
  return namespace !== undefined && name !== undefined ? { namespace, name } : undefined;
}

// Shared with the worker, which refuses a run by the same words (activities/policy.ts).
export { describeProblems };

/**
 * The parsed spec of an object a run deploys. A listed chart or group that is invalid stops the
 * run of what lists it (the error is retried; the object itself is marked Invalid).
 */
export function validSpec<K extends KindName>(view: ViewOf<K>): Specs[K] {
  if (view.parsed.valid) return view.parsed.spec;
  throw new Error(
    pointingTo(
      `${view.kind} ${view.namespace}/${view.name} is invalid: ${describeProblems(view.parsed.problems)}`,
      DOC_PAGES.resources,
    ),
  );
}

/**
 * Whether an update left everything reconcile reads as it was: the object's `resourceVersion`
 * moved, nothing else of its view (a run's status write, the Invalid condition as before). Such an
 * update is not reconciled: at 1,000 charts a run's status writes were three of every four watch
 * events, each a reconcile ahead of the starts still queued (benchmark 2).
 */
export function sameForReconcile<K extends KindName>(previous: ObjectView<K>, view: ObjectView<K>): boolean {
  return stableJson({ ...previous, resourceVersion: '' }) === stableJson({ ...view, resourceVersion: '' });
}

/** Whether an object is on its way out and done with (its finalizer removed). */
export const gone = <K extends KindName>(view: ObjectView<K>): boolean =>
  view.deleting && !view.finalizers.includes(FINALIZER);

/** What a manifest or group lists in `lists` (a group's Deployers are in `deployers`). */
const LISTS = { ArmadaManifest: 'ArmadaChartGroup', ArmadaChartGroup: 'ArmadaChart' } as const;
/** What lists a chart, a Deployer or a group. */
const LISTED_BY = {
  ArmadaChart: 'ArmadaChartGroup',
  Deployer: 'ArmadaChartGroup',
  ArmadaChartGroup: 'ArmadaManifest',
} as const;

/** The kind that may list (and then drives) an object of this kind: none for manifests. */
export function ownerKindOf(kind: KindName): 'ArmadaChartGroup' | 'ArmadaManifest' | undefined {
  return kind in LISTED_BY ? LISTED_BY[kind as keyof typeof LISTED_BY] : undefined;
}

/**
 * Whether `owner`, a manifest or group that is not gone, lists `view` (and so drives it): for an
 * owner read from the API server. Of the cached ones, ClaimIndex.owner answers the same.
 */
export const drives = (owner: ObjectView, view: ObjectView): boolean =>
  !gone(owner) && (view.kind === 'Deployer' ? owner.deployers : owner.lists).includes(view.name);

/**
 * The group that lists a chart or Deployer, or the manifest that lists a group (it drives it), if
 * any; of rivals, the one whose run deploys it (ClaimIndex.owner). Looked up in the claims index,
 * not found by reading every group or manifest of the namespace.
 */
export function ownerOf(
  { objects, claims }: Cache,
  view: ObjectView,
): ObjectView<'ArmadaChartGroup' | 'ArmadaManifest'> | undefined {
  const ownerKind = ownerKindOf(view.kind);
  const owner = ownerKind && claims.owner(view);
  return owner && objects(ownerKind).get(owner.namespace, owner.name);
}

/**
 * The keys of the cached charts that list `view`, a chart, in their `dependencies`: reconciled
 * again when its spec changes, so that what builds it in is planned again with it.
 */
export function dependentKeys(objects: Views, view: ObjectView): string[] {
  if (view.kind !== 'ArmadaChart') return [];
  return objects('ArmadaChart')
    .list(view.namespace)
    .filter((c) => c.parsed.valid && c.parsed.spec.dependencies?.includes(view.name))
    .map((c) => c.key);
}

/** The keys of what a manifest or group lists (a group's Deployers too): reconciled again when it goes. */
export function ownedKeys<K extends KindName>(view: ObjectView<K>): string[] {
  if (!(view.kind in LISTS)) return [];
  const listed = LISTS[view.kind as keyof typeof LISTS];
  return [
    ...view.lists.map((name) => objectKey(listed, view.namespace, name)),
    ...view.deployers.map((name) => objectKey('Deployer', view.namespace, name)),
  ];
}

/**
 * The Helm release an ArmadaChart deploys: `<release_prefix>-<release>` when a manifest lists it
 * (through a group), its own `release` otherwise; unknown when its spec names none.
 */
export function chartRelease(
  cache: Cache,
  chart: ObjectView<'ArmadaChart'>,
): { namespace: string; release: string } | undefined {
  if (!chart.release) return undefined;
  const group = ownerOf(cache, chart);
  const manifest = group && ownerOf(cache, group);
  return {
    namespace: chart.release.namespace,
    release: prefixedRelease(manifest?.releasePrefix, chart.release.release),
  };
}

/** `ArmadaChart/web@2 ArmadaManifest/demo@1 ...`: which specs a run deploys, for its memo. */
export function specsOf(views: readonly ObjectView[]): string {
  return formatSpecs(views.map((v) => ({ kind: v.kind, name: v.name, generation: v.generation })));
}

/** A manifest, group or chart as rivalClaims reads it. */
export function claimOf(view: ObjectView<ClaimDocument['kind']>): ClaimDocument {
  const { kind, namespace, name, createdAt } = view;
  return {
    kind,
    namespace,
    name,
    createdAt,
    spec: {
      target_state: view.targetState,
      release_prefix: view.releasePrefix,
      ...(kind === 'ArmadaManifest' && { chart_groups: view.lists }),
      ...(kind === 'ArmadaChartGroup' && { chart_group: view.lists, deployers: view.deployers }),
      release: view.release?.release,
      namespace: view.release?.namespace,
      ...(view.kind === 'ArmadaChart' &&
        view.parsed.valid &&
        (view.parsed.spec as Specs['ArmadaChart']).dependency_only && { dependency_only: true }),
      deployment: view.deployment,
    },
  };
}
