import { proxyActivities } from '@temporalio/workflow';
import type * as activities from '../activities';
import type { ReleaseStatus } from '../activities/helm/release';
import type { UpgradeRequest } from '../activities/helm/upgrade';

const helm = proxyActivities<typeof activities>({
  startToCloseTimeout: '30 minutes',
  // helm heartbeats every 5 s while it runs; a worker that dies mid-upgrade is noticed quickly.
  heartbeatTimeout: '30 seconds',
  retry: { initialInterval: '1 second', maximumInterval: '30 seconds' },
});

/**
 * Drives one Helm release to `deployed`: `helm upgrade --install` (waiting for its resources),
 * then reads back the release as helm records it.
 */
export async function chartWorkflow(req: UpgradeRequest): Promise<ReleaseStatus> {
  await helm.helmUpgradeInstall(req);
  const status = await helm.helmStatus({ release: req.release, namespace: req.namespace });
  if (!status) throw new Error(`release ${req.namespace}/${req.release} is missing right after its install`);
  return status;
}
