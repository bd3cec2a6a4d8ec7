import type { ServiceAccountRef } from '../contracts/acting-as';
/**
 * Names and workflow IDs. A workflow ID is the lock on what it drives: Temporal refuses a
 * second running workflow with the same ID, so one release is never driven by two runs.
 */

/** Armada's release naming: `<release_prefix>-<release>` for charts of a manifest. */
export function prefixedRelease(prefix: string | undefined, release: string): string {
  return prefix ? `${prefix}-${release}` : release;
}

/** The chart workflow of a Helm release, e.g. `helm:apps/demo-web`. */
export function releaseWorkflowId(namespace: string, release: string): string {
  return `helm:${namespace}/${release}`;
}

/** The workflow of a custom resource, e.g. `ArmadaManifest:default/demo`. */
export function objectWorkflowId(kind: string, namespace: string, name: string): string {
  return `${kind}:${namespace}/${name}`;
}

/** A manifest run's child that runs one of its groups, e.g. `ArmadaManifest:default/demo/group/backend`. */
export function groupChildWorkflowId(manifestWorkflowId: string, group: string): string {
  return `${manifestWorkflowId}/group/${group}`;
}

/**
 * The canary workflow of an ArmadaChart, a child of its chart workflow, e.g.
 * `ArmadaChart:default/shop/canary`: derived from the custom resource, so `armadactl promote
 * act/shop` reaches it without knowing the release.
 */
export function canaryWorkflowId(namespace: string, chart: string): string {
  return `${objectWorkflowId('ArmadaChart', namespace, chart)}/canary`;
}

/**
 * The rollout child of a Deployer whose one-workflow run is its own (a plan of one), e.g.
 * `Deployer:default/web/rollout`: the run holds the Deployer's workflow ID, its lock.
 */
export function deployerRolloutWorkflowId(namespace: string, name: string): string {
  return `${objectWorkflowId('Deployer', namespace, name)}/rollout`;
}

/** A Deployer's Deployment of one version, `<name>-<version>` (the Deployer operator's naming). */
export function deployerDeploymentName(name: string, version: string): string {
  return `${name}-${version}`;
}

/**
 * The `n`th notifier child of a run (a run starts another when one has ended idle); `chart`: of
 * a chart the run deploys, whose notifications are not the run's own (a one-workflow run's).
 */
export function notifierWorkflowId(workflowId: string, runId: string, n: number, chart?: string): string {
  return `${workflowId}/notify/${runId}/${chart === undefined ? '' : `${chart}/`}${n}`;
}

/**
 * The ServiceAccount an object's run acts as: its `service_account_name` (the bridge fills in a
 * manifest's or the default), always in the object's own namespace; none: the worker itself.
 */
export function runServiceAccount(
  serviceAccountName: string | undefined,
  objectNamespace: string,
): ServiceAccountRef | undefined {
  return serviceAccountName ? { namespace: objectNamespace, name: serviceAccountName } : undefined;
}
