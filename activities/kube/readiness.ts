import type {
  V1DaemonSet,
  V1DaemonSetStatus,
  V1Deployment,
  V1Job,
  V1Pod,
  V1StatefulSet,
  V1StatefulSetStatus,
} from '@kubernetes/client-node';
import type {
  MinReady,
  ChartWait,
  WaitResource,
  WaitResourceType,
  WaitTarget,
} from '../../core/contracts/kube';

/**
 * Readiness of Kubernetes objects as `kubectl rollout status` and airship Armada's wait judge it.
 * Pure functions of an object as the API server returns it: no I/O, no clients.
 */

/** Whether one object is ready, and in a few words what it still lacks (or what it has). */
export interface Readiness {
  ready: boolean;
  reason: string;
}

/** A Job's readiness; `failed` marks a Job that can never complete (condition Failed True). */
export interface JobReadiness extends Readiness {
  failed: boolean;
}

type Condition = { type: string; status: string; reason?: string; message?: string };

const conditionOf = (conditions: Condition[] | undefined, type: string) =>
  conditions?.find((c) => c.type === type);

const isTrue = (conditions: Condition[] | undefined, type: string) =>
  conditionOf(conditions, type)?.status === 'True';

const ready = (reason: string): Readiness => ({ ready: true, reason });
const notReady = (reason: string): Readiness => ({ ready: false, reason });

/** Not ready while the controller has not yet seen the latest spec (generation > observedGeneration). */
function unobserved(metadataGeneration: number | undefined, observed: number | undefined): Readiness | null {
  const generation = metadataGeneration ?? 0;
  return (observed ?? 0) < generation
    ? notReady(`generation ${generation} not observed yet (observed ${observed ?? 0})`)
    : null;
}

/**
 * A Deployment is ready when its rollout is complete: observedGeneration >= generation;
 * updatedReplicas >= spec.replicas (default 1); and availableReplicas >= `minReady` of the
 * updated replicas (requiredReady; default all). Waiting for all of them, status.replicas ==
 * updatedReplicas too, i.e. no pod of an old ReplicaSet is left, as `kubectl rollout status`
 * judges it; a `minReady` below all leaves old pods be, as Armada's DeploymentWait does, since the
 * controller keeps old pods up while too few new ones are available.
 * Examples: spec.replicas 3, updated 2, replicas 4, available 2 → not ready, "2/3 updated";
 * 4 updated, 2 available, an old pod left, "50%" → ready, "2/4 available (min_ready 50%)".
 */
export function deploymentReady(deployment: V1Deployment, minReady?: MinReady): Readiness {
  const status = deployment.status ?? {};
  const pending = unobserved(deployment.metadata?.generation, status.observedGeneration);
  if (pending) return pending;
  const desired = deployment.spec?.replicas ?? 1;
  const updated = status.updatedReplicas ?? 0;
  const total = status.replicas ?? 0;
  const available = status.availableReplicas ?? 0;
  if (updated < desired) return notReady(`${updated}/${desired} updated`);
  const required = requiredReady(updated, minReady);
  if (required >= updated && total > updated)
    return notReady(`${total - updated} old replicas pending termination`);
  return enough(available, updated, required, minReady, 'available');
}

/**
 * A StatefulSet is ready when observedGeneration >= generation and readyReplicas >= `minReady`
 * of spec.replicas (default 1; requiredReady, default all), and, when its update strategy is
 * RollingUpdate (the default):
 * - without a partition, currentRevision == updateRevision and, waiting for all pods,
 *   updatedReplicas == spec.replicas (a `minReady` below all does not wait for the pods an
 *   OrderedReady StatefulSet has yet to create, as Armada's StatefulSetWait does not);
 * - with partition P > 0, updatedReplicas >= spec.replicas - P (kubectl's partitioned rollout).
 * With OnDelete, pods are replaced only when someone deletes them, so only readiness is awaited.
 * Examples: 3 replicas, 3 ready, 1 updated, RollingUpdate → not ready, "1/3 updated";
 * 4 replicas, 2 ready, 3 updated, one revision, "50%" → ready, "2/4 ready (min_ready 50%)".
 */
export function statefulSetReady(sts: V1StatefulSet, minReady?: MinReady): Readiness {
  const status: Partial<V1StatefulSetStatus> = sts.status ?? {};
  const pending = unobserved(sts.metadata?.generation, status.observedGeneration);
  if (pending) return pending;
  const desired = sts.spec?.replicas ?? 1;
  const readyCount = status.readyReplicas ?? 0;
  // Armada checks min_ready only for a StatefulSet with replicas: a count is no bar at 0.
  const required = desired > 0 ? requiredReady(desired, minReady) : 0;
  const enoughReady = enough(readyCount, desired, required, minReady, 'ready');
  if (!enoughReady.ready) return enoughReady;
  const strategy = sts.spec?.updateStrategy;
  if ((strategy?.type ?? 'RollingUpdate') !== 'RollingUpdate') return enoughReady;

  const updated = status.updatedReplicas ?? 0;
  const partition = strategy?.rollingUpdate?.partition ?? 0;
  if (partition > 0) {
    const expected = Math.max(desired - partition, 0);
    return updated < expected
      ? notReady(`${updated}/${expected} updated (partition ${partition})`)
      : ready(`${enoughReady.reason}, ${updated} updated (partition ${partition})`);
  }
  if (required >= desired && updated < desired) return notReady(`${updated}/${desired} updated`);
  if (status.currentRevision !== status.updateRevision) {
    return notReady(
      `revision ${status.currentRevision ?? '(none)'} not yet ${status.updateRevision ?? '(none)'}`,
    );
  }
  return ready(`${enoughReady.reason} at revision ${status.updateRevision ?? '(none)'}`);
}

/**
 * A DaemonSet is ready when observedGeneration >= generation and, of desiredNumberScheduled pods,
 * all are updated (updatedNumberScheduled; RollingUpdate only, as OnDelete never replaces pods by
 * itself) and at least `minReady` are available (numberAvailable; requiredReady, default all).
 * Examples: desired 3, updated 3, available 2 → not ready, "2/3 available";
 * the same with "50%" → ready, "2/3 available (min_ready 50%)".
 */
export function daemonSetReady(ds: V1DaemonSet, minReady?: MinReady): Readiness {
  const status: Partial<V1DaemonSetStatus> = ds.status ?? {};
  const pending = unobserved(ds.metadata?.generation, status.observedGeneration);
  if (pending) return pending;
  const desired = status.desiredNumberScheduled ?? 0;
  const updated = status.updatedNumberScheduled ?? 0;
  const available = status.numberAvailable ?? 0;
  const rolling = (ds.spec?.updateStrategy?.type ?? 'RollingUpdate') === 'RollingUpdate';
  if (rolling && updated < desired) return notReady(`${updated}/${desired} updated`);
  return enough(available, desired, requiredReady(desired, minReady), minReady, 'available');
}

/** A Deployment, StatefulSet or DaemonSet: a workload whose pods a pod wait entry may count. */
export type Workload =
  | { kind: 'Deployment'; object: V1Deployment }
  | { kind: 'StatefulSet'; object: V1StatefulSet }
  | { kind: 'DaemonSet'; object: V1DaemonSet };

/**
 * Whether a pod entry selecting `labelSelector` (`k=v,k2=v2` as labelSelector writes it;
 * undefined selects every pod) counts the pods of `workload`: its pod template carries the labels.
 * Example: selector `app=web`, template labels {app: web, tier: front} → true.
 */
export function createsSelectedPods(workload: Workload, selector: string | undefined): boolean {
  const labels = workload.object.spec?.template.metadata?.labels ?? {};
  return (selector ? selector.split(',') : []).every((pair) => {
    const [key, value, ...rest] = pair.split('=');
    if (value === undefined || rest.length > 0) {
      throw new Error(`pod wait: label selector "${selector}" is not of the form key=value,key2=value2`);
    }
    return labels[key] === value;
  });
}

/**
 * Whether `workload`, whose pods a pod entry counts, has rolled out its latest spec, so that the
 * pods the entry counts are its latest revision's: right after `helm upgrade` changes a pod
 * template, the old ReplicaSet's pods are still Ready and match the entry's labels until the
 * controller replaces them. Without `minReady` (the entry waits for all its pods) the rollout
 * must be complete as `kubectl rollout status` judges it (deploymentReady, statefulSetReady,
 * daemonSetReady: every replica updated and available, no old one left). With `minReady`, which
 * the entry counts in its pods, only the update: generation observed and every replica updated
 * (updatedReplicas; a StatefulSet's beyond its partition, none for OnDelete), so pods that never
 * become ready do not hold the wait beyond what min_ready allows.
 * Examples: Deployment, 3 replicas, 1 updated, 3 available → not ready, "1/3 updated";
 * the same with "50%" → not ready, "1/3 updated"; 3 updated, 1 available, "50%" → ready.
 */
export function workloadRolledOut(workload: Workload, minReady?: MinReady): Readiness {
  if (minReady === undefined) {
    if (workload.kind === 'Deployment') return deploymentReady(workload.object);
    if (workload.kind === 'StatefulSet') return statefulSetReady(workload.object);
    return daemonSetReady(workload.object);
  }
  const { metadata, status } = workload.object;
  const pending = unobserved(metadata?.generation, status?.observedGeneration);
  if (pending) return pending;
  const [updated, expected] = updatedOfExpected(workload);
  const counted = `${updated}/${expected} updated`;
  return updated >= expected ? ready(counted) : notReady(counted);
}

/** [updated replicas, replicas an update replaces]: all of them, beyond a partition, none on OnDelete. */
function updatedOfExpected(workload: Workload): [number, number] {
  switch (workload.kind) {
    case 'Deployment':
      return [workload.object.status?.updatedReplicas ?? 0, workload.object.spec?.replicas ?? 1];
    case 'StatefulSet': {
      const { spec, status } = workload.object;
      const strategy = spec?.updateStrategy;
      if ((strategy?.type ?? 'RollingUpdate') !== 'RollingUpdate') return [status?.updatedReplicas ?? 0, 0];
      const partition = strategy?.rollingUpdate?.partition ?? 0;
      return [status?.updatedReplicas ?? 0, Math.max((spec?.replicas ?? 1) - partition, 0)];
    }
    case 'DaemonSet': {
      const { spec, status } = workload.object;
      const rolling = (spec?.updateStrategy?.type ?? 'RollingUpdate') === 'RollingUpdate';
      return [status?.updatedNumberScheduled ?? 0, rolling ? (status?.desiredNumberScheduled ?? 0) : 0];
    }
  }
}

/**
 * Whether `count` of a controller's `of` pods meet `required`, in the words of the reason:
 * "2/4 available", or with a min_ready "1/4 available, min_ready 50% needs 2".
 */
function enough(count: number, of: number, required: number, minReady: MinReady | undefined, what: string) {
  const counted = `${count}/${of} ${what}`;
  if (minReady === undefined) return count >= required ? ready(counted) : notReady(counted);
  return count >= required
    ? ready(`${counted} (min_ready ${minReady})`)
    : notReady(`${counted}, min_ready ${minReady} needs ${required}`);
}

/**
 * A Pod is ready when its Ready condition is True; a Pod in phase Succeeded (e.g. of a completed
 * Job) is done and counts as ready. Otherwise the reason says why: its phase, the scheduler's
 * reason for an unscheduled pod, or the first waiting container's reason.
 * Example: Pending, PodScheduled False (Unschedulable) → not ready, "unschedulable: 0/3 nodes ...".
 */
export function podReady(pod: V1Pod): Readiness {
  const status = pod.status ?? {};
  const conditions = status.conditions;
  if (status.phase === 'Succeeded') return ready('succeeded');
  if (status.phase === 'Failed') return notReady(`failed${status.reason ? `: ${status.reason}` : ''}`);
  if (isTrue(conditions, 'Ready')) return ready('ready');
  const scheduled = conditionOf(conditions, 'PodScheduled');
  if (scheduled?.status === 'False') {
    return notReady(`unschedulable: ${scheduled.message ?? scheduled.reason ?? 'not scheduled'}`);
  }
  const waiting = [...(status.initContainerStatuses ?? []), ...(status.containerStatuses ?? [])].find(
    (c) => c.state?.waiting?.reason,
  );
  if (waiting) return notReady(`container ${waiting.name} waiting: ${waiting.state?.waiting?.reason}`);
  return notReady(`${status.phase ?? 'no phase yet'}, not Ready`);
}

/**
 * True for a Helm test pod (annotation `helm.sh/hook` naming `test` or `test-success`): Armada
 * leaves these out of its pod wait, since a test pod left over from an earlier `helm test` would
 * otherwise hold the wait forever.
 */
export function isHelmTestPod(pod: V1Pod): boolean {
  const hooks = pod.metadata?.annotations?.['helm.sh/hook'] ?? '';
  return hooks.split(',').some((hook) => ['test', 'test-success'].includes(hook.trim()));
}

/**
 * A Job is ready when complete: condition Complete True, or succeeded >= spec.completions
 * (default 1). A Job with condition Failed True (backoff limit, deadline exceeded, ...) can never
 * complete: `failed` is true and the reason carries the Job controller's reason and message.
 * Example: completions 3, succeeded 1, active 2 → not ready, "1/3 succeeded, 2 active".
 */
export function jobReady(job: V1Job): JobReadiness {
  const status = job.status ?? {};
  const failed = conditionOf(status.conditions, 'Failed');
  if (failed?.status === 'True') {
    const why = [failed.reason, failed.message].filter(Boolean).join(': ');
    return { ready: false, failed: true, reason: `failed${why ? `: ${why}` : ''}` };
  }
  const completions = job.spec?.completions ?? 1;
  const succeeded = status.succeeded ?? 0;
  if (isTrue(status.conditions, 'Complete') || succeeded >= completions) {
    return { ready: true, failed: false, reason: `complete, ${succeeded}/${completions} succeeded` };
  }
  const active = status.active ? `, ${status.active} active` : '';
  const suspended = job.spec?.suspend ? ', suspended' : '';
  return {
    ready: false,
    failed: false,
    reason: `${succeeded}/${completions} succeeded${active}${suspended}`,
  };
}

const PERCENT = /^([0-9]+)%$/;

/**
 * How many of `total` must be ready for `minReady`, as Armada's ControllerWait._is_min_ready
 * counts it: absent, all of them; a count N, N (more than there are is never met); "NN%",
 * ceil(total × (NN / 100)), computed in floating point as Armada does, so that a few percentages
 * round up one further than exact arithmetic would: "28%" of 25 needs 8, not 7.
 * Examples: (4, "50%") → 2; (3, "50%") → 2; (3, 2) → 2; (3) → 3; (10, "0%") → 0.
 */
export function requiredReady(total: number, minReady?: MinReady): number {
  if (minReady === undefined) return total;
  if (typeof minReady === 'number') return minReady;
  const percent = PERCENT.exec(minReady);
  if (!percent) throw new Error(`min_ready must be a count or a percentage such as "80%", not "${minReady}"`);
  return Math.ceil(total * (Number(percent[1]) / 100));
}

/** Types that count `min_ready` in pods of each object, as Armada's ControllerWait does. */
const CONTROLLERS: readonly WaitResourceType[] = ['deployment', 'daemonset', 'statefulset'];

/**
 * How many objects of a wait entry must be ready, out of the `found` ones. A Deployment,
 * DaemonSet or StatefulSet counts min_ready in its own pods (its readiness function takes it), so
 * every one of them must be ready, as Armada waits for all; pods and jobs, where Armada takes no
 * min_ready, count it in ready objects of the entry. None found asks for none, as Armada skips a
 * type it finds nothing of.
 * Examples: (deployment "50%", 3 found) → 3; (pod "50%", 3) → 2; (pod 2, 0) → 0.
 */
export function requiredOfEntry(target: Pick<WaitTarget, 'type' | 'minReady'>, found: number): number {
  if (found === 0 || CONTROLLERS.includes(target.type)) return found;
  return requiredReady(found, target.minReady);
}

/** Armada's default when `wait.resources` is absent: every job, then every pod. */
export const DEFAULT_WAIT_RESOURCES: readonly WaitResource[] = [{ type: 'job' }, { type: 'pod' }];

/** `{app: web, tier: db}` → `app=web,tier=db`; undefined for no labels. */
export function labelSelector(labels: Record<string, string> | undefined): string | undefined {
  const pairs = Object.entries(labels ?? {}).map(([key, value]) => `${key}=${value}`);
  return pairs.length ? pairs.join(',') : undefined;
}

/**
 * What a chart's `wait` waits for: `wait.resources`, else Armada's default (jobs and pods); each
 * entry selects with its own `labels`, else `wait.labels`, else nothing (every object of the type).
 * Example: `{labels: {app: web}}` → job app=web, pod app=web.
 */
export function waitTargets(wait: ChartWait | undefined): WaitTarget[] {
  return (wait?.resources ?? DEFAULT_WAIT_RESOURCES).map((resource) => ({
    type: resource.type,
    labelSelector: labelSelector(resource.labels ?? wait?.labels),
    ...(resource.min_ready !== undefined && { minReady: resource.min_ready }),
  }));
}

/** How a target reads in summaries and messages: `pod app=web (min_ready 50%)`. */
export function describeTarget(target: WaitTarget): string {
  return [
    target.type,
    target.labelSelector,
    target.fieldSelector,
    target.minReady !== undefined ? `(min_ready ${target.minReady})` : undefined,
  ]
    .filter(Boolean)
    .join(' ');
}
