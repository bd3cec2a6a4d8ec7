import { CustomObjectsApi } from '@kubernetes/client-node';
import { GROUP, VERSION } from '../api/common';
import { kinds, type KindName } from '../api/kinds';
import { abortWith, asCaller, kubeApi, kubeConfig } from '../kube/client';
import { placeOf, type Listings, type ObjectPlace } from './targets';

/** How long armadactl waits for the cluster (where an object sits, whether the caller may steer it). */
export const CLUSTER_TIMEOUT_MS = 3000;

interface Listed {
  metadata: { name: string };
  spec: unknown;
}

/**
 * Where an object sits (runs/targets.ts, ObjectPlace), read from the cluster as the bridge reads
 * it from its cache: the object and the manifests and groups of its namespace. Null when no
 * cluster is configured, it does not answer in time, or the object is not there: armadactl then
 * steers by workflow IDs alone (see placeByName). Read as the person running armadactl (asCaller):
 * a worker's kubeconfig in the same shell (ARMADA_KUBECONFIG) may not read specs, and the
 * object was then placed by its name alone, a manifest's group as if it stood alone.
 */
export async function placeFromCluster(
  kind: KindName,
  namespace: string,
  name: string,
): Promise<ObjectPlace | null> {
  try {
    return await asCaller(() => readPlace(kind, namespace, name));
  } catch {
    return null; // the caller has no kubeconfig at all
  }
}

async function readPlace(kind: KindName, namespace: string, name: string): Promise<ObjectPlace | null> {
  if (!kubeConfig().getCurrentCluster()) return null;
  const api = kubeApi(CustomObjectsApi);
  const options = abortWith(AbortSignal.timeout(CLUSTER_TIMEOUT_MS));
  const where = (k: KindName) => ({ group: GROUP, version: VERSION, namespace, plural: kinds[k].plural });
  const list = async (k: 'ArmadaChartGroup' | 'ArmadaManifest') =>
    ((await api.listNamespacedCustomObject(where(k), options)) as { items: Listed[] }).items.map((o) => ({
      name: o.metadata.name,
      spec: o.spec,
    }));
  try {
    const object = (await api.getNamespacedCustomObject({ ...where(kind), name }, options)) as Listed;
    const [groups, manifests] = await Promise.all([list('ArmadaChartGroup'), list('ArmadaManifest')]);
    return placeOf(kind, namespace, name, object.spec, { groups, manifests } as Listings);
  } catch {
    return null;
  }
}

/**
 * An object's place known by its name alone (no cluster to read): its own run, and for an
 * ArmadaChart its canary, the only run of a chart whose ID its name gives.
 */
export function placeByName(kind: KindName, namespace: string, name: string): ObjectPlace {
  return { kind, namespace, name, ...(kind === 'ArmadaChart' && { canary: true }) };
}
