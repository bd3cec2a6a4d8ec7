/** Every workflow the worker registers (the worker bundles this file). */
export { chartWorkflow } from './chart';
export { groupWorkflow } from './group';
export { manifestWorkflow } from './manifest';
export { canaryWorkflow } from './canary';
export { deployerWorkflow } from './deployer';
export { driftWorkflow } from './drift';
export { undoWorkflow } from './undo';
export { releaseUndoWorkflow } from './saga';
export { notifierWorkflow } from './notify';
export { deployRun } from './run/deploy-run';
