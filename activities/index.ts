/** Every activity the worker registers. Workflows import the types of this module only. */
export { helmUpgradeInstall } from './helm/upgrade';
export { helmStatus } from './helm/status';
