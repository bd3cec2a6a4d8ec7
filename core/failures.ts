/**
 * Every failure type that ends a step for good: running it again cannot succeed, so it is never
 * retried, and workflows and the CLI branch on it. Any other error is retried with the activity's
 * retry policy. Plain constants (no Temporal imports), shared by activities and workflows.
 */
export const NonRetryable = {
  /** The chart cannot be found or loaded (bad path, missing Chart.yaml, bad archive, no such tag). */
  ChartNotFound: 'ChartNotFound',
  /** A chart fetched again on another worker is not the content the run prepared (its source moved). */
  ChartChanged: 'ChartChanged',
  /** The chart's templates or the values do not render into valid manifests. */
  InvalidChart: 'InvalidChart',
  /** A `values_from` Secret or ConfigMap, or its key, is missing and the entry is not optional. */
  ValuesNotFound: 'ValuesNotFound',
  /** A `values_from` value is not a YAML map of values (the failure names the entry, never its content). */
  InvalidValues: 'InvalidValues',
  /** A `source.secret_ref` Secret, or a key it must have, is missing. */
  CredentialsNotFound: 'CredentialsNotFound',
  /**
   * The chart's `source.verify` failed: no provenance file, a signature by no key of the keyring,
   * an archive that does not match its signature, or a missing keyring Secret.
   */
  ChartUnverified: 'ChartUnverified',
  /** The chart's server refused to serve it: no credentials, or not these (HTTP 401 or 403). */
  SourceUnauthorized: 'SourceUnauthorized',
  /**
   * The worker refused a run the ArmadaPolicies do not allow (a namespace boundary, a source, a
   * ServiceAccount, an adoption), before it did anything: a run that bypassed the bridge.
   */
  PolicyViolation: 'PolicyViolation',
  /** The API server refused for lack of permission (403). */
  Forbidden: 'Forbidden',
  /** The helm binary itself is missing. */
  HelmNotFound: 'HelmNotFound',
  /** The Armada wait's resources were not ready within its timeout. */
  WaitTimeout: 'WaitTimeout',
  /** A Job of the release failed (condition Failed True); waiting longer cannot help. */
  JobFailed: 'JobFailed',
  /**
   * A resource helm waited for ended Failed: a test or hook pod exited non-zero, a hook Job
   * failed. Running helm again runs it again (and, for a hook, writes another failed revision).
   */
  HelmResourceFailed: 'HelmResourceFailed',
  /** Another run drives the release (its workflow ID, the lock, is taken). */
  ReleaseLocked: 'ReleaseLocked',
  /** The release exists, armada-temporal did not create it, and the chart does not say `adopt`. */
  ReleaseNotOwned: 'ReleaseNotOwned',
  /** A Deployment of a Deployer's name exists and the Deployer did not create it (activities/kube/deployer.ts). */
  DeploymentNotOwned: 'DeploymentNotOwned',
  /** A `protected` release is failed and `continue_processing` is off. */
  ProtectedReleaseFailed: 'ProtectedReleaseFailed',
  /** The release did not reach the wanted state after each recovery action once. */
  ReleaseNotConverging: 'ReleaseNotConverging',
  /** A chart failed after writing its release; details carry what a rollback needs. */
  ChartFailedAfterWrite: 'ChartFailedAfterWrite',
  /** A canary rolled back (readiness, analysis, approval timeout, or asked to); details carry its outcome. */
  CanaryRolledBack: 'CanaryRolledBack',
  /** The HTTPRoute a canary's `traffic.gateway_api` names, its rule, or a Service's backendRef in it is missing. */
  TrafficRouteMissing: 'TrafficRouteMissing',
  /** A `notifications.secret_ref` Secret or key is missing, or its value is not an http(s) URL. */
  WebhookNotFound: 'WebhookNotFound',
  /** A webhook refused a notification for good (a 4xx other than 408 and 429). */
  WebhookRefused: 'WebhookRefused',
  /** A manifest run failed; details carry its outcome. */
  ManifestFailed: 'ManifestFailed',
} as const;

/** The message at the bottom of a failure chain (child workflow → activity → helm's words). */
export function rootMessage(err: unknown): string {
  let e: unknown = err;
  while (e instanceof Error && e.cause instanceof Error) e = e.cause;
  return e instanceof Error ? e.message : String(e);
}
