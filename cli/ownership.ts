import { ApiException, CustomObjectsApi } from '@kubernetes/client-node';
import { GROUP, VERSION } from '../api/common';
import { kinds, type KindName } from '../api/kinds';
import { abortWith, apiMessage, kubeApi } from '../kube/client';
import type { Applicable } from './documents';

/** An object a file names, by kind, namespace and name (what makes it the same as a custom resource). */
export interface ObjectRef {
  kind: KindName;
  namespace: string;
  name: string;
}

/** How long armadactl waits for the API server before it takes the cluster as unreachable. */
const CLUSTER_TIMEOUT_MS = 5_000;

/**
 * The objects a run of `applicable` would deploy: a manifest with the groups it lists and the
 * charts they list (those the file holds), or each standalone ArmadaChart and Deployer.
 */
export function objectsOf(applicable: Applicable): ObjectRef[] {
  if (applicable.kind === 'standalone')
    return applicable.objects.map(({ kind, namespace, name }) => ({ kind, namespace, name }));
  const { namespace, manifest, groups, charts } = applicable.manifest;
  const listedGroups = manifest.spec.chart_groups.filter((g) => g in groups);
  const listedCharts = listedGroups.flatMap((g) => groups[g].chart_group).filter((c) => c in charts);
  return [
    { kind: 'ArmadaManifest', namespace, name: manifest.name },
    ...listedGroups.map((name) => ({ kind: 'ArmadaChartGroup' as const, namespace, name })),
    ...[...new Set(listedCharts)].map((name) => ({ kind: 'ArmadaChart' as const, namespace, name })),
  ];
}

/** What the cluster says of a file's objects: which of them it holds, or that it cannot be asked. */
export type ClusterView = { reachable: true; owned: ObjectRef[] } | { reachable: false; reason: string };

/**
 * Which of `objects` are custom resources on the cluster (same kind, namespace and name), asked
 * through the product's kube client (ARMADA_KUBECONFIG, else KUBECONFIG, else ~/.kube/config,
 * else in-cluster). A cluster that is not configured or does not answer (no HTTP response within
 * 5 s) is unreachable; an API server that answers with anything but the object or 404 (e.g. 403)
 * is an error, since then nobody can tell whether the cluster owns the object.
 */
export async function clusterView(objects: readonly ObjectRef[]): Promise<ClusterView> {
  let api: CustomObjectsApi;
  try {
    api = kubeApi(CustomObjectsApi);
  } catch (err) {
    return { reachable: false, reason: `no kubeconfig: ${(err as Error).message}` };
  }
  const signal = AbortSignal.timeout(CLUSTER_TIMEOUT_MS);
  const found = await Promise.all(
    objects.map(async (o): Promise<boolean | { unreachable: string }> => {
      const target = {
        group: GROUP,
        version: VERSION,
        plural: kinds[o.kind].plural,
        namespace: o.namespace,
        name: o.name,
      };
      try {
        // Read rights on the object or on its status (the worker's ServiceAccount has the latter
        // only) both tell whether it exists.
        await api
          .getNamespacedCustomObject(target, abortWith(signal))
          .catch((err: unknown) =>
            err instanceof ApiException && err.code === 403
              ? api.getNamespacedCustomObjectStatus(target, abortWith(signal))
              : Promise.reject(err),
          );
        return true;
      } catch (err) {
        // 404: no such object, or no such kind (the CRDs are not installed): not the cluster's.
        if (err instanceof ApiException && err.code === 404) return false;
        if (err instanceof ApiException)
          throw new Error(
            `cannot tell whether ${named(o)} is on the cluster: ${apiMessage(err)}; ` +
              'armadactl apply deploys only objects the cluster does not hold',
            { cause: err },
          );
        return { unreachable: (err as Error).message };
      }
    }),
  );
  const unreachable = found.find((f): f is { unreachable: string } => typeof f === 'object');
  if (unreachable) return { reachable: false, reason: unreachable.unreachable };
  return { reachable: true, owned: objects.filter((_, i) => found[i] === true) };
}

const named = (o: ObjectRef) => `${o.kind} ${o.namespace}/${o.name}`;

/**
 * The refusal of `armadactl apply -f FILE` for objects the cluster holds, naming each and saying
 * how to change them instead: through the cluster, or from files once deleted there.
 */
export function ownedRefusal(owned: readonly ObjectRef[], file: string, namespace: string): string {
  const byNamespace = new Map<string, string[]>();
  for (const o of owned) {
    const names = byNamespace.get(o.namespace) ?? [];
    byNamespace.set(o.namespace, [...names, `${kinds[o.kind].shortNames[0]}/${o.name}`]);
  }
  const deletes = [...byNamespace].map(([ns, names]) => `kubectl delete -n ${ns} ${names.join(' ')}`);
  return [
    `nothing started: the cluster owns what ${file} names (the bridge deploys it from there):`,
    ...owned.map((o) => `  ${named(o)} is on the cluster`),
    `change it through the cluster with \`kubectl apply -n ${namespace} -f ${file}\`, or delete it ` +
      `there first (\`${deletes.join('; ')}\`) to deploy ${file} with armadactl`,
  ].join('\n');
}
