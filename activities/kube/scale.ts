import { AppsV1Api, PatchStrategy, setHeaderOptions } from '@kubernetes/client-node';
import { kubeApi } from '../../kube/client';
import type { ActingAs } from '../../core/contracts/acting-as';

export interface ScaleRequest extends ActingAs {
  namespace: string;
  /** Deployment name. */
  name: string;
  replicas: number;
}

/**
 * Activity: sets a Deployment's replicas through the scale subresource (what `kubectl scale`
 * does), so nothing else in the Deployment's spec is touched. Idempotent.
 * Writes: spec.replicas. Returns: the replicas the API server now holds.
 */
export async function scaleDeployment(req: ScaleRequest): Promise<number> {
  const scale = await kubeApi(AppsV1Api, req.actAs).patchNamespacedDeploymentScale(
    { name: req.name, namespace: req.namespace, body: { spec: { replicas: req.replicas } } },
    setHeaderOptions('Content-Type', PatchStrategy.MergePatch),
  );
  return scale.spec?.replicas ?? 0;
}
