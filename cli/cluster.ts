import { ApiException, CustomObjectsApi } from '@kubernetes/client-node';
import { GROUP, VERSION } from '../api/common';
import { kinds, type KindName } from '../api/kinds';
import type { Condition } from '../core/contracts/kube';
import { abortWith, apiMessage, kubeApi } from '../kube/client';
import { placeOf, type ObjectPlace } from '../runs/targets';
import type { ObjectRef } from './ownership';

/** The kinds a namespace holds runs of (ArmadaPolicy is cluster-scoped and runs nothing). */
export const RUN_KINDS = ['ArmadaManifest', 'ArmadaChartGroup', 'ArmadaChart', 'Deployer'] as const;
export type RunKind = (typeof RUN_KINDS)[number];

/** A custom resource as armadactl reads it from the API server. */
export interface ClusterObject {
  kind: RunKind;
  metadata: {
    name: string;
    namespace: string;
    creationTimestamp?: string;
    deletionTimestamp?: string;
    generation?: number;
    finalizers?: string[];
    uid?: string;
    resourceVersion?: string;
    annotations?: Record<string, string>;
  };
  spec: Record<string, unknown>;
  status?: {
    actual_state?: string;
    satisfied?: boolean;
    reason?: string;
    observedGeneration?: number;
    conditions?: (Condition & { lastTransitionTime?: string })[];
    paused?: { by?: string; reason?: string; since: string };
    workflow?: { id: string; run_id?: string; url?: string };
  };
}

/** How long armadactl waits for the API server on one request. */
const REQUEST_TIMEOUT_MS = 10_000;

const where = (kind: RunKind) => ({ group: GROUP, version: VERSION, plural: kinds[kind].plural });
const options = () => abortWith(AbortSignal.timeout(REQUEST_TIMEOUT_MS));

/** `ArmadaChart team-a/web`. */
export const describeRef = (o: ObjectRef) => `${o.kind} ${o.namespace}/${o.name}`;

/** An API error as armadactl says it: what it was doing, then the API server's words. */
function readFailure(what: string, err: unknown): Error {
  return new Error(`cannot ${what}: ${apiMessage(err)}`, { cause: err });
}

/**
 * The objects of `kinds` in `namespace` (every namespace: undefined), through the kube client of
 * the context (inside asCaller: the caller's kubeconfig), in kind order then name order.
 */
export async function listObjects(
  namespace: string | undefined,
  of: readonly RunKind[] = RUN_KINDS,
): Promise<ClusterObject[]> {
  const api = kubeApi(CustomObjectsApi);
  const lists = await Promise.all(
    of.map(async (kind) => {
      try {
        const list = (
          namespace === undefined
            ? await api.listCustomObjectForAllNamespaces(where(kind), options())
            : await api.listNamespacedCustomObject({ ...where(kind), namespace }, options())
        ) as { items: Omit<ClusterObject, 'kind'>[] };
        return list.items.map((item) => ({ ...item, kind }));
      } catch (err) {
        throw readFailure(`list ${kinds[kind].plural}.${GROUP}${namespace ? ` in ${namespace}` : ''}`, err);
      }
    }),
  );
  return lists.flat();
}

/** One object, or null when the API server has none of that kind, namespace and name. */
export async function readObject(ref: ObjectRef): Promise<ClusterObject | null> {
  try {
    const item = (await kubeApi(CustomObjectsApi).getNamespacedCustomObject(
      { ...where(ref.kind as RunKind), namespace: ref.namespace, name: ref.name },
      options(),
    )) as Omit<ClusterObject, 'kind'>;
    return { ...item, kind: ref.kind as RunKind };
  } catch (err) {
    if (err instanceof ApiException && err.code === 404) return null;
    throw readFailure(`read ${describeRef(ref)}`, err);
  }
}

/** Deletes one object (its finalizer keeps it until the bridge has uninstalled it). */
export async function deleteObject(ref: ObjectRef): Promise<void> {
  try {
    await kubeApi(CustomObjectsApi).deleteNamespacedCustomObject(
      { ...where(ref.kind as RunKind), namespace: ref.namespace, name: ref.name },
      options(),
    );
  } catch (err) {
    throw readFailure(`delete ${describeRef(ref)}`, err);
  }
}

/** Whether `kind` is one that runs (not ArmadaPolicy). */
export function isRunKind(kind: KindName): kind is RunKind {
  return (RUN_KINDS as readonly string[]).includes(kind);
}

/**
 * Where an object sits among `objects` (its namespace's manifests and groups, as listObjects
 * read them), as the bridge places it: objects being deleted list nothing.
 */
export function placeAmong(object: ClusterObject, objects: readonly ClusterObject[]): ObjectPlace {
  const { namespace, name } = object.metadata;
  const live = (kind: RunKind) =>
    objects.filter(
      (o) => o.kind === kind && o.metadata.namespace === namespace && !o.metadata.deletionTimestamp,
    );
  return placeOf(object.kind, namespace, name, object.spec, {
    groups: live('ArmadaChartGroup').map((g) => ({
      name: g.metadata.name,
      spec: { chart_group: (g.spec.chart_group as string[] | undefined) ?? [] },
    })),
    manifests: live('ArmadaManifest').map((m) => ({
      name: m.metadata.name,
      spec: {
        chart_groups: (m.spec.chart_groups as string[] | undefined) ?? [],
        release_prefix: m.spec.release_prefix as string | undefined,
      },
    })),
  });
}
