import {
  AppsV1Api,
  AutoscalingV2Api,
  type V1Deployment,
  type V2HorizontalPodAutoscaler,
} from '@kubernetes/client-node';
import { capacityReplicas, type DeploymentPair } from '../../core/plan/canary';
import { heartbeating } from '../process';
import {
  CANARY_LABEL,
  CANARY_OF_LABEL,
  CANARY_SUFFIX,
  HELM_ANNOTATION_PREFIX,
  MANAGED_BY_LABEL,
} from '../../core/labels';
import { renderedObjects } from '../helm/manifest';
import { runHelmWithChart } from '../helm/with-chart';
import { apiFailure, isStatus, kubeApi } from '../../kube/client';
import type { ActingAs } from '../../core/contracts/acting-as';
import type { DeployerObject, CanaryTarget, CanaryCopiesRequest } from '../../core/contracts/kube';
import { forgetOwned } from './deployer';

export type { DeploymentPair };

/**
 * The `helm template` arguments rendering a request's new revision from its chart at `chartPath`
 * on this worker; `valuesFile` holds its values.
 */
export function templateArgs(req: CanaryCopiesRequest, chartPath: string, valuesFile: string): string[] {
  return ['template', req.release, chartPath, '--namespace', req.namespace, '--values', valuesFile];
}

/**
 * The apps/v1 Deployments of a rendered multi-document manifest (`helm template` output), in
 * order. Throws InvalidChart when the output is not YAML.
 */
export function renderedDeployments(manifest: string): V1Deployment[] {
  return renderedObjects(manifest).filter(
    (object) => object.apiVersion === 'apps/v1' && object.kind === 'Deployment',
  ) as V1Deployment[];
}

/** `labels` without Helm's `app.kubernetes.io/managed-by: Helm`. */
function withoutHelmLabel(labels: Record<string, string> | undefined): Record<string, string> {
  return Object.fromEntries(
    Object.entries(labels ?? {}).filter(([key, value]) => !(key === MANAGED_BY_LABEL && value === 'Helm')),
  );
}

/** `annotations` without Helm's `meta.helm.sh/*` (release name and namespace); undefined when none remain. */
function withoutHelmAnnotations(
  annotations: Record<string, string> | undefined,
): Record<string, string> | undefined {
  const kept = Object.entries(annotations ?? {}).filter(([key]) => !key.startsWith(HELM_ANNOTATION_PREFIX));
  return kept.length ? Object.fromEntries(kept) : undefined;
}

/**
 * The canary copy of a rendered Deployment `web` (the `rendered` object is not changed):
 * - `web-canary`, with the rendered labels plus `canary: "true"` and `canary-of: web`, and no
 *   Helm ownership (`meta.helm.sh/*` annotations, `managed-by: Helm`): the release never
 *   adopts, upgrades or deletes it;
 * - the rendered spec at 0 replicas, with `canary: "true"` added to the selector and the pod
 *   labels. Its pods keep every rendered label, so the chart's Services (which select the
 *   stable labels) send traffic to both in proportion to replicas, and the stable selector
 *   matches them too; the copy's selector never matches a stable pod.
 * The namespace is left to the caller (the request's, not whatever the chart wrote).
 */
export function canaryCopy(rendered: V1Deployment, release: string): V1Deployment {
  const stable = rendered.metadata?.name;
  if (!stable) throw new Error(`a Deployment rendered by release ${release} has no name`);
  const spec = structuredClone(rendered.spec);
  if (!spec) throw new Error(`Deployment ${stable} rendered by release ${release} has no spec`);
  const canary = { [CANARY_LABEL]: 'true' };
  const annotations = withoutHelmAnnotations(rendered.metadata?.annotations);
  return {
    apiVersion: 'apps/v1',
    kind: 'Deployment',
    metadata: {
      name: `${stable}${CANARY_SUFFIX}`,
      labels: { ...withoutHelmLabel(rendered.metadata?.labels), ...canary, [CANARY_OF_LABEL]: stable },
      ...(annotations && { annotations }),
    },
    spec: {
      ...spec,
      replicas: 0,
      selector: { ...spec.selector, matchLabels: { ...spec.selector?.matchLabels, ...canary } },
      template: {
        ...spec.template,
        metadata: { ...spec.template?.metadata, labels: { ...spec.template?.metadata?.labels, ...canary } },
      },
    },
  };
}

/** The live Deployment, or null when there is none. */
async function readDeployment(
  apps: AppsV1Api,
  namespace: string,
  name: string,
): Promise<V1Deployment | null> {
  try {
    return await apps.readNamespacedDeployment({ namespace, name });
  } catch (err) {
    if (isStatus(err, 404)) return null;
    throw apiFailure(`read Deployment ${namespace}/${name}`, err);
  }
}

/** The namespace's autoscaling/v2 HorizontalPodAutoscalers. */
async function listHpas(namespace: string, actAs: ActingAs['actAs']): Promise<V2HorizontalPodAutoscaler[]> {
  try {
    return (await kubeApi(AutoscalingV2Api, actAs).listNamespacedHorizontalPodAutoscaler({ namespace }))
      .items;
  } catch (err) {
    throw apiFailure(`list HorizontalPodAutoscalers in ${namespace}`, err);
  }
}

/**
 * The minReplicas of the HPA among `hpas` whose scaleTargetRef is Deployment `name` (1, the
 * API's default, when it sets none); the largest when several do; undefined when none does.
 */
export function hpaMinReplicas(hpas: readonly V2HorizontalPodAutoscaler[], name: string): number | undefined {
  const mins = hpas
    .filter(({ spec }) => spec?.scaleTargetRef.kind === 'Deployment' && spec.scaleTargetRef.name === name)
    .map(({ spec }) => spec?.minReplicas ?? 1);
  return mins.length ? Math.max(...mins) : undefined;
}

/**
 * Creates `copy`, or, when it exists already (a retried attempt), replaces it with `copy` but
 * keeps its live replicas: the canary may have been scaled since.
 */
async function createOrReplace(apps: AppsV1Api, namespace: string, copy: V1Deployment): Promise<void> {
  const name = copy.metadata!.name!;
  try {
    await apps.createNamespacedDeployment({ namespace, body: copy });
    return;
  } catch (err) {
    if (!isStatus(err, 409)) throw apiFailure(`create Deployment ${namespace}/${name}`, err);
  }
  const live = await readDeployment(apps, namespace, name);
  if (!live) throw new Error(`Deployment ${namespace}/${name} existed on create, then was gone; retry`);
  const body: V1Deployment = {
    ...copy,
    metadata: { ...copy.metadata, resourceVersion: live.metadata?.resourceVersion },
    spec: { ...copy.spec!, replicas: live.spec?.replicas ?? 0 },
  };
  try {
    await apps.replaceNamespacedDeployment({ namespace, name, body });
  } catch (err) {
    throw apiFailure(`replace Deployment ${namespace}/${name}`, err);
  }
}

/**
 * Activity: renders the new revision of a release (`helm template`, the real helm CLI) and puts
 * a copy of each of its Deployments beside the live one, at 0 replicas, outside the release
 * (see canaryCopy). The release itself is not touched.
 * Idempotent: an existing copy gets the rendered spec but keeps its live replicas.
 * Reads: the live Deployments of the rendered names and the namespace's HorizontalPodAutoscalers.
 * Writes: one Deployment `<name>-canary` per rendered Deployment, in the request's namespace.
 * Returns: one pair per rendered Deployment, in rendered order: the copy, the live stable
 * Deployment of the same name (null when the revision adds it), R and the stable's live
 * replicas now (0 without one); [] for a chart without Deployments. R is capacityReplicas of the
 * rendered spec.replicas (default 1), the stable's live replicas and the minReplicas of an HPA
 * whose scaleTargetRef is the stable: never below what the stable runs now, so the first step
 * does not shrink a Deployment an HPA or a person scaled above the chart's count.
 * A helm failure is thrown as runHelm classifies it; an API failure as apiFailure does.
 */
export function createCanaryCopies(req: CanaryCopiesRequest): Promise<DeploymentPair[]> {
  // Heartbeats cover the chart fetched again on a miss and the API calls as well as helm.
  return heartbeating(() => copyDeployments(req));
}

async function copyDeployments(req: CanaryCopiesRequest): Promise<DeploymentPair[]> {
  const { stdout: manifest } = await runHelmWithChart(req, (chartPath, valuesFile) =>
    templateArgs(req, chartPath, valuesFile),
  );
  const deployments = renderedDeployments(manifest);
  // Read before any copy is written: a stable's replicas as they were before the canary.
  const pairs = await canaryPairs(req, deployments);
  const apps = kubeApi(AppsV1Api, req.actAs);
  for (const rendered of deployments) {
    const copy = canaryCopy(rendered, req.release);
    copy.metadata!.namespace = req.namespace;
    await createOrReplace(apps, req.namespace, copy);
  }
  return pairs;
}

/**
 * The pair of each rendered Deployment of a release's new revision (see createCanaryCopies), in
 * rendered order, from the live stable Deployments and the namespace's HorizontalPodAutoscalers.
 * Reads only; also what `armadactl diff` shows a canary's steps from.
 */
export async function canaryPairs(
  target: CanaryTarget,
  deployments: V1Deployment[],
): Promise<DeploymentPair[]> {
  if (!deployments.length) return [];
  const apps = kubeApi(AppsV1Api, target.actAs);
  const hpas = await listHpas(target.namespace, target.actAs);
  const pairs: DeploymentPair[] = [];
  for (const rendered of deployments) {
    const name = rendered.metadata!.name!;
    const stable = await readDeployment(apps, target.namespace, name);
    const live = stable ? (stable.spec?.replicas ?? 1) : undefined;
    pairs.push({
      canary: canaryCopy(rendered, target.release).metadata!.name!,
      stable: stable ? name : null,
      replicas: capacityReplicas({
        rendered: rendered.spec?.replicas,
        live,
        hpaMin: stable ? hpaMinReplicas(hpas, name) : undefined,
      }),
      stableReplicas: live ?? 0,
    });
  }
  return pairs;
}

/**
 * Activity: deletes Deployments by name (background propagation: their ReplicaSets and pods
 * go after them), e.g. the canary copies once the release runs the new revision.
 * Writes: deletions, and with `deployer` their removal from that Deployer's record.
 * Idempotent: a Deployment already gone is fine.
 */
export async function deleteDeployments(
  req: ActingAs & { namespace: string; names: string[]; deployer?: DeployerObject },
): Promise<void> {
  const apps = kubeApi(AppsV1Api, req.actAs);
  for (const name of req.names) {
    try {
      await apps.deleteNamespacedDeployment({
        namespace: req.namespace,
        name,
        propagationPolicy: 'Background',
      });
    } catch (err) {
      if (!isStatus(err, 404)) throw apiFailure(`delete Deployment ${req.namespace}/${name}`, err);
    }
  }
  if (req.deployer) await forgetOwned(req.deployer, req.names);
}
