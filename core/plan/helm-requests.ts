import type {
  ChartDependency,
  PrepareChartRequest,
  PreparedChart,
  ChartObjectRef,
  ValuesFrom,
} from '../contracts/charts';
import type { ReleaseRef, RollbackRequest, UpgradeRequest } from '../contracts/helm';
import type { CanaryCopiesRequest, WaitRequest } from '../contracts/kube';
import type { ArmadaChartSpec } from '../../api/chart';

/** Seconds Helm and the Armada wait get when the spec gives none (Armada's default). */
export const DEFAULT_TIMEOUT_SECONDS = 900;

/**
 * How long a Helm operation of `request` may run, for its activity's timeouts: its own timeout,
 * or the default when it has none (helm's own default, 300 s, is shorter).
 */
export function operationSeconds(request: { timeoutSeconds?: number }): number {
  return request.timeoutSeconds ?? DEFAULT_TIMEOUT_SECONDS;
}

type TimedRequest = ReleaseRef & { timeoutSeconds?: number };

/** Every Helm (and Helm-adjacent) request a chart run makes, as its spec asks for it. */
export interface HelmRequests {
  prepare: PrepareChartRequest;
  upgrade(chart: PreparedChart): UpgradeRequest;
  canaryCopies(chart: PreparedChart): CanaryCopiesRequest;
  wait: WaitRequest;
  /** Whether a written revision owes the Armada wait (see armadaWaitChecks). */
  waits: boolean;
  /** Absent when the spec does not enable `helm test`. */
  test?: TimedRequest;
  /** Recovery of a release a dead helm left pending: back to its last deployed revision. */
  rollback(revision: number): RollbackRequest;
  /** Recovery of a first install a dead helm left pending. */
  recoverByUninstall: TimedRequest;
  /** The release's removal (target_state uninstalled, or its manifest's deletion). */
  uninstall: TimedRequest;
}

/** The ArmadaChart object itself: its name and its own namespace. */
export interface ChartObject {
  name: string;
  namespace: string;
}

/**
 * The mapping from an ArmadaChart spec to what helm is asked to do, in one pure place: the
 * chart's `wait.timeout` bounds every Helm operation and the Armada wait, as in Armada. Every
 * request that needs the values carries `values_from` as references to read in `chartObject`'s own
 * namespace, never what they hold; every request that fetches the chart carries, for a source with
 * a `secret_ref` or a `verify` keyring, that chart object, whose namespace holds the Secret (with
 * the release, which a failed verification names), and the chart's resolved `dependencies` (each
 * with its own ArmadaChart as the owner of its Secrets).
 */
export function helmRequests(
  ref: ReleaseRef,
  spec: ArmadaChartSpec,
  chartObject: ChartObject,
  dependencies?: ChartDependency[],
): HelmRequests {
  const timeoutSeconds = spec.wait?.timeout ?? DEFAULT_TIMEOUT_SECONDS;
  const owner: ChartObjectRef = {
    chart: chartObject.name,
    namespace: chartObject.namespace,
    actAs: ref.actAs,
  };
  const valuesFrom: ValuesFrom | undefined = spec.values_from?.length
    ? { ...owner, references: spec.values_from }
    : undefined;
  // Only a source with Secrets to read needs its chart's namespace and ServiceAccount to fetch.
  const sourceOwner = readsSecrets(spec.source) ? sourceOwnerOf(spec.source, owner, ref) : undefined;
  const fetched = {
    source: spec.source,
    owner: sourceOwner,
    ...(dependencies && { dependencies: withOwners(dependencies, owner, ref) }),
  };
  return {
    // Checked like the release's requests: it fetches the chart and reads values_from as the ServiceAccount.
    prepare: { ...fetched, values: spec.values, valuesFrom, ...(ref.policy && { policy: ref.policy }) },
    upgrade: (chart) => ({
      ...ref,
      chart: { ...fetched, contentDigest: chart.contentDigest },
      values: spec.values,
      valuesFrom,
      digest: chart.digest,
      timeoutSeconds,
      nativeWait: spec.wait?.native?.enabled,
      force: spec.upgrade?.options?.force,
      noHooks: spec.upgrade?.options?.no_hooks,
    }),
    canaryCopies: (chart) => ({
      ...ref,
      chart: { ...fetched, contentDigest: chart.contentDigest },
      values: spec.values,
      valuesFrom,
    }),
    wait: { ...ref, wait: spec.wait, timeoutSeconds },
    waits: armadaWaitChecks(spec.wait),
    test: spec.test?.enabled ? { ...ref, timeoutSeconds: spec.test.timeout } : undefined,
    rollback: (revision) => ({ ...ref, revision, timeoutSeconds }),
    recoverByUninstall: { ...ref, timeoutSeconds },
    uninstall: { ...ref, timeoutSeconds: spec.delete?.timeout },
  };
}

/**
 * Whether the Armada wait has anything to check after helm's write: not when `wait.resources` is
 * an empty list (Armada's way to wait for nothing, with or without `wait.native`), so the run
 * skips its activity. Otherwise it runs, with or without helm's own wait, because it checks what
 * helm's never does: its scope is the namespace by labels (objects of other releases too, pods
 * of any owner), Jobs run to completion (helm's watcher, without --wait-for-jobs, takes a started
 * Job as ready) and `min_ready`. The reverse, helm waiting in its place, was measured slower:
 * helm 4's kstatus watcher waits for every old pod to be gone and throttles its own reads (a
 * 3-replica Deployment rolled out in the sandbox, median of 6 alternating: `--wait=watcher` then
 * the Armada wait 2.57 s, helm without a wait then the Armada wait 1.04 s). So helm waits only
 * when `wait.native.enabled` asks for it (Services, PVCs, custom resources), as in Armada.
 */
export function armadaWaitChecks(wait: ArmadaChartSpec['wait']): boolean {
  return wait?.resources === undefined || wait.resources.length > 0;
}

/** Dependencies whose sources have Secrets to read, each with its own ArmadaChart as their owner. */
function withOwners(
  dependencies: ChartDependency[],
  owner: ChartObjectRef,
  ref: ReleaseRef,
): ChartDependency[] {
  return dependencies.map((dependency) => ({
    ...dependency,
    ...(readsSecrets(dependency.source) && {
      owner: sourceOwnerOf(dependency.source, { ...owner, chart: dependency.chart }, ref),
    }),
    ...(dependency.dependencies && { dependencies: withOwners(dependency.dependencies, owner, ref) }),
  }));
}

/** Whether fetching `source` reads Secrets of its chart's namespace: credentials, a keyring. */
function readsSecrets(source: ArmadaChartSpec['source']): boolean {
  return source.secret_ref !== undefined || source.verify !== undefined;
}

/**
 * The owner of a source's Secrets; with the release when the source is verified, so that a
 * failed verification names it. Sources without `verify` get exactly the owner they always had.
 */
function sourceOwnerOf(
  source: ArmadaChartSpec['source'],
  owner: ChartObjectRef,
  ref: ReleaseRef,
): ChartObjectRef {
  return source.verify ? { ...owner, release: `${ref.namespace}/${ref.release}` } : owner;
}
