import { AppsV1Api, BatchV1Api, CoreV1Api } from '@kubernetes/client-node';
import type { ArmadaChartSpec } from '../../api/chart';
import { kubeApi } from '../../kube/client';
import type { ActingAs } from '../../core/contracts/acting-as';
import { labelSelector } from './readiness';

type PreDelete = NonNullable<NonNullable<NonNullable<ArmadaChartSpec['upgrade']>['pre']>['delete']>;

/**
 * Activity: `upgrade.pre.delete` — deletes every object of each listed type matching its labels
 * in the release's namespace, before the upgrade (as Armada does, e.g. to re-run a Job).
 * Writes: deletions (background propagation). Idempotent: nothing left to delete is fine.
 */
export async function deleteResources(
  req: ActingAs & { namespace: string; resources: PreDelete },
): Promise<void> {
  const apps = kubeApi(AppsV1Api, req.actAs);
  const batch = kubeApi(BatchV1Api, req.actAs);
  const core = kubeApi(CoreV1Api, req.actAs);
  for (const resource of req.resources) {
    const args = {
      namespace: req.namespace,
      labelSelector: labelSelector(resource.labels),
      propagationPolicy: 'Background',
    };
    switch (resource.type) {
      case 'deployment':
        await apps.deleteCollectionNamespacedDeployment(args);
        break;
      case 'statefulset':
        await apps.deleteCollectionNamespacedStatefulSet(args);
        break;
      case 'daemonset':
        await apps.deleteCollectionNamespacedDaemonSet(args);
        break;
      case 'job':
        await batch.deleteCollectionNamespacedJob(args);
        break;
      case 'cronjob':
        await batch.deleteCollectionNamespacedCronJob(args);
        break;
      case 'pod':
        await core.deleteCollectionNamespacedPod(args);
        break;
    }
  }
}
