/** Every activity the worker registers. Workflows import the types of this module only. */
export { helmUpgradeInstall } from './helm/upgrade';
export { helmObserve } from './helm/status';
export { helmRollback } from './helm/rollback';
export { helmUninstall } from './helm/uninstall';
export { helmTest } from './helm/test';
export { reportStatus, recordEvent } from './kube/status';
export { helmCheckDrift } from './helm/drift';
export { deleteResources } from './kube/delete';
export { prepareChart } from './charts/prepare';
export { waitForResources } from './kube/wait';
export { scaleDeployment } from './kube/scale';
export { setRouteWeights } from './kube/traffic';
export { checkAnalysis } from './analysis';
export { checkPrometheus } from './prometheus';
export { createCanaryCopies, deleteDeployments } from './kube/canary-copies';
export { observeOwnedDeployments, createDeployerDeployment } from './kube/deployer';
export { deliverNotification } from './notifications/deliver';
export { lockHolder } from './runs';
