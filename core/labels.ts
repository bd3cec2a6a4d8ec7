/**
 * Labels and annotations read by more than one process (the worker's activities, the bridge's
 * drift watch): Helm's marks on a release's objects and ours on canary copies.
 */

/** Helm's marks on the objects of a release: this label, and the release in two annotations. */
export const MANAGED_BY_LABEL = 'app.kubernetes.io/managed-by';
export const HELM_ANNOTATION_PREFIX = 'meta.helm.sh/';
export const RELEASE_NAME_ANNOTATION = `${HELM_ANNOTATION_PREFIX}release-name`;
export const RELEASE_NAMESPACE_ANNOTATION = `${HELM_ANNOTATION_PREFIX}release-namespace`;

/** On a canary copy's pods and in its selector, value "true": what sets its pods apart from the stable ones. */
export const CANARY_LABEL = 'armada.airshipit.org/canary';
/** On a canary copy's metadata: the name of the stable Deployment it is a copy of. */
export const CANARY_OF_LABEL = 'armada.airshipit.org/canary-of';
/** Appended to the stable Deployment's name to name its copy. */
export const CANARY_SUFFIX = '-canary';

/** On a Deployer's Deployments and pods: the Deployer's `deployment.name`. */
export const DEPLOYER_LABEL = 'armada.airshipit.org/deployer';
/** On a Deployer's Deployments and pods: the version they run. */
export const VERSION_LABEL = 'armada.airshipit.org/version';

/** The labels of one version's pods of a Deployer (`deployment.name`), and no other's. */
export function deployerVersionLabels(name: string, version: string): Record<string, string> {
  return { [DEPLOYER_LABEL]: name, [VERSION_LABEL]: version };
}
