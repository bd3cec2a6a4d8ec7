import { ApiException, AppsV1Api, BatchV1Api, CoreV1Api } from '@kubernetes/client-node';
import { ApplicationFailure, CancelledFailure } from '@temporalio/common';
import { NonRetryable } from '../../core/failures';
import { currentActivity, heartbeating } from '../process';
import { abortWith, apiMessage, kubeApi } from '../../kube/client';
import {
  daemonSetReady,
  deploymentReady,
  describeTarget,
  isHelmTestPod,
  jobReady,
  podReady,
  requiredOfEntry,
  statefulSetReady,
  waitTargets,
  workloadRolledOut,
  createsSelectedPods,
  type Readiness,
  type Workload,
} from './readiness';
import type { MinReady, WaitResourceType, WaitTarget, WaitRequest } from '../../core/contracts/kube';

/** Failure type for an API error that is neither transient nor a 403 (400, 401, 404, ...); retried by Temporal. */
export const KUBE_API_FAILED = 'KubeApiFailed';

/**
 * Polls start quick and slow down to once a second: right after helm's own --wait most waits are
 * met at the first or second look (an entry with nothing found needs a second), and a fixed
 * second there added a second to every such chart's deploy.
 */
const FIRST_POLL_INTERVAL_MS = 100;
const POLL_INTERVAL_MS = 1_000;
/** Bounds one list call, so a hung connection cannot hold the loop past the deadline for long. */
const REQUEST_TIMEOUT_MS = 10_000;
/** Not-ready objects named in a timeout message: enough to act on, bounded for history size. */
const MAX_NAMED_OBJECTS = 50;

export interface WaitResult {
  resources: { type: string; name: string; ready: boolean; reason: string }[];
  summary: string;
}

type Observed = Readiness & { name: string; failed?: boolean };

/** The rollout of a workload whose pods a pod entry counts: `Deployment web`, "1/3 updated". */
type Rollout = Readiness & { kind: Workload['kind']; name: string };

interface TargetState {
  target: WaitTarget;
  objects: Observed[];
  /** Of a pod entry: the workloads creating its pods, each of which must have rolled out. */
  rollouts: Rollout[];
  ready: number;
  required: number;
  met: boolean;
}

interface Clients {
  apps: AppsV1Api;
  batch: BatchV1Api;
  core: CoreV1Api;
}

type Lister = (
  clients: Clients,
  request: { namespace: string; labelSelector?: string; fieldSelector?: string },
  signal: AbortSignal,
  minReady: MinReady | undefined,
) => Promise<Observed[]>;

const named = <T extends { metadata?: { name?: string } }>(
  items: T[],
  readiness: (item: T) => Readiness & { failed?: boolean },
): Observed[] => items.map((item) => ({ name: item.metadata?.name ?? '', ...readiness(item) }));

/**
 * One list call per resource type, each object judged by its pure readiness function; the
 * controllers count the entry's min_ready in their own pods.
 */
const listers: Record<WaitResourceType, Lister> = {
  deployment: async ({ apps }, req, signal, minReady) =>
    named((await apps.listNamespacedDeployment(req, abortWith(signal))).items, (d) =>
      deploymentReady(d, minReady),
    ),
  statefulset: async ({ apps }, req, signal, minReady) =>
    named((await apps.listNamespacedStatefulSet(req, abortWith(signal))).items, (s) =>
      statefulSetReady(s, minReady),
    ),
  daemonset: async ({ apps }, req, signal, minReady) =>
    named((await apps.listNamespacedDaemonSet(req, abortWith(signal))).items, (d) =>
      daemonSetReady(d, minReady),
    ),
  job: async ({ batch }, req, signal) =>
    named((await batch.listNamespacedJob(req, abortWith(signal))).items, jobReady),
  pod: async ({ core }, req, signal) =>
    named(
      (await core.listNamespacedPod(req, abortWith(signal))).items.filter((pod) => !isHelmTestPod(pod)),
      podReady,
    ),
};

/**
 * Activity: Armada's wait after an install or upgrade. Polls the API server, soon at first and
 * then about once a second (one list call per entry of `wait.resources`, default every job and pod of the namespace,
 * filtered by each entry's labels or `wait.labels`) until every entry is ready: each Deployment,
 * DaemonSet and StatefulSet with its `min_ready` pods ready, and `min_ready` of the entry's pods or
 * jobs (default all; none found counts as ready once it is found twice in a row, so pods a
 * controller is about to create are not missed), a pod entry also until every Deployment,
 * StatefulSet and DaemonSet whose pods it counts has rolled out its latest spec (workloadRolledOut:
 * right after an upgrade the old revision's Ready pods match the same labels), heartbeating every
 * second with the summary of the last poll.
 * Reads only. Fails with WaitTimeout (non-retryable) naming every object still blocking at the
 * deadline, with JobFailed at once when a Job failed, with Forbidden on a 403; transient API
 * errors (network, 5xx, 429, 409) are retried until the deadline. Stops when cancelled.
 */
export function waitForResources(req: WaitRequest): Promise<WaitResult> {
  return heartbeating((report) => pollUntilReady(req, report));
}

async function pollUntilReady(req: WaitRequest, report: (summary: string) => void): Promise<WaitResult> {
  const cancelled = currentActivity()?.cancellationSignal;
  const targets = req.targets ?? waitTargets(req.wait);
  const clients: Clients = {
    apps: kubeApi(AppsV1Api, req.actAs),
    batch: kubeApi(BatchV1Api, req.actAs),
    core: kubeApi(CoreV1Api, req.actAs),
  };
  const where = `${req.subject ?? `release ${req.release}`} in namespace ${req.namespace}`;
  const deadline = Date.now() + req.timeoutSeconds * 1000;

  let states: TargetState[] | undefined;
  let apiError: string | undefined;
  let metBefore = false;
  let interval = FIRST_POLL_INTERVAL_MS;
  for (;;) {
    throwIfCancelled(cancelled);
    const remaining = deadline - Date.now();
    const signal = requestSignal(cancelled, Math.min(Math.max(remaining, 1_000), REQUEST_TIMEOUT_MS));
    try {
      states = await observe(clients, req.namespace, targets, signal);
      apiError = undefined;
    } catch (err) {
      throwIfCancelled(cancelled);
      const kind = classifyApiError(err);
      if (kind === 'forbidden') {
        throw ApplicationFailure.create({
          type: NonRetryable.Forbidden,
          nonRetryable: true,
          message: `wait for ${where}: ${apiMessage(err)}`,
        });
      }
      if (kind === 'other') {
        throw ApplicationFailure.create({
          type: KUBE_API_FAILED,
          message: `wait for ${where}: ${apiMessage(err)}`,
        });
      }
      apiError = apiMessage(err);
    }

    const failedJob = states
      ?.flatMap((s) => (s.target.type === 'job' ? s.objects : []))
      .find((o) => o.failed);
    if (failedJob) {
      throw ApplicationFailure.create({
        type: NonRetryable.JobFailed,
        nonRetryable: true,
        message: `wait for ${where}: job/${failedJob.name} ${failedJob.reason}`,
        details: [resultOf(states ?? [])],
      });
    }
    const summary = summarise(states, apiError);
    report(summary);
    // Right after `helm upgrade` the controllers may not have created the pods yet: an entry
    // with nothing found (jobs aside) counts as ready only on a second poll in a row.
    const met = states !== undefined && states.every((s) => s.met) && apiError === undefined;
    const nothingFound = states?.some((s) => s.target.type !== 'job' && s.objects.length === 0);
    if (met && (!nothingFound || metBefore)) return resultOf(states!);
    metBefore = met;

    if (Date.now() >= deadline) {
      throw ApplicationFailure.create({
        type: NonRetryable.WaitTimeout,
        nonRetryable: true,
        message: timeoutMessage(where, req.timeoutSeconds, states, apiError),
        details: [resultOf(states ?? [])],
      });
    }
    await sleep(Math.min(interval, deadline - Date.now()), cancelled);
    interval = Math.min(interval * 2, POLL_INTERVAL_MS);
  }
}

/**
 * Lists every target's objects (in parallel) and judges each target: requiredOfEntry of them
 * ready and, for a pod entry, the rollouts of the workloads creating them complete. The workloads
 * are listed before the pods, so that pods listed after a complete rollout are its own.
 */
async function observe(
  clients: Clients,
  namespace: string,
  targets: WaitTarget[],
  signal: AbortSignal,
): Promise<TargetState[]> {
  let workloads: Promise<Workload[]> | undefined;
  return Promise.all(
    targets.map(async (target) => {
      // A pod entry naming one pod (fieldSelector) waits for that pod alone.
      const rollouts =
        target.type === 'pod' && !target.fieldSelector
          ? (await (workloads ??= listWorkloads(clients, namespace, signal)))
              .filter((workload) => createsSelectedPods(workload, target.labelSelector))
              .map((workload) => ({
                kind: workload.kind,
                name: workload.object.metadata?.name ?? '',
                ...workloadRolledOut(workload, target.minReady),
              }))
          : [];
      const request = {
        namespace,
        ...(target.labelSelector && { labelSelector: target.labelSelector }),
        ...(target.fieldSelector && { fieldSelector: target.fieldSelector }),
      };
      const objects = await listers[target.type](clients, request, signal, target.minReady);
      const readyCount = objects.filter((o) => o.ready).length;
      const required = requiredOfEntry(target, objects.length);
      const found = objects.length > 0 || !target.fieldSelector;
      const met = found && readyCount >= required && rollouts.every((r) => r.ready);
      return { target, objects, rollouts, ready: readyCount, required, met };
    }),
  );
}

/** Every Deployment, StatefulSet and DaemonSet of the namespace, for pod entries to match by template labels. */
async function listWorkloads({ apps }: Clients, namespace: string, signal: AbortSignal): Promise<Workload[]> {
  const [deployments, statefulSets, daemonSets] = await Promise.all([
    apps.listNamespacedDeployment({ namespace }, abortWith(signal)),
    apps.listNamespacedStatefulSet({ namespace }, abortWith(signal)),
    apps.listNamespacedDaemonSet({ namespace }, abortWith(signal)),
  ]);
  return [
    ...deployments.items.map((object) => ({ kind: 'Deployment' as const, object })),
    ...statefulSets.items.map((object) => ({ kind: 'StatefulSet' as const, object })),
    ...daemonSets.items.map((object) => ({ kind: 'DaemonSet' as const, object })),
  ];
}

/** `, rollout of Deployment web: 1/3 updated` for each rollout a target still waits for. */
const pendingRollouts = (state: TargetState): string =>
  state.rollouts
    .filter((r) => !r.ready)
    .map((r) => `, rollout of ${r.kind} ${r.name}: ${r.reason}`)
    .join('');

/** `job 1/1 ready, pod app=web (min_ready 50%) 2/3 ready`, plus the last API error while retrying. */
function summarise(states: TargetState[] | undefined, apiError: string | undefined): string {
  const parts = (states ?? []).map(
    (s) => `${describeTarget(s.target)} ${s.ready}/${s.objects.length} ready${pendingRollouts(s)}`,
  );
  if (apiError !== undefined) parts.push(`API error, retrying: ${apiError}`);
  return parts.join(', ') || 'nothing observed yet';
}

function timeoutMessage(
  where: string,
  timeoutSeconds: number,
  states: TargetState[] | undefined,
  apiError: string | undefined,
): string {
  const blocking = (states ?? [])
    .filter((s) => !s.met)
    .flatMap((s) => s.objects.filter((o) => !o.ready).map((o) => `${s.target.type}/${o.name} (${o.reason})`));
  const shown = blocking.slice(0, MAX_NAMED_OBJECTS);
  if (blocking.length > shown.length) shown.push(`and ${blocking.length - shown.length} more`);
  const unmet = (states ?? [])
    .filter((s) => !s.met)
    .map(
      (s) =>
        `${describeTarget(s.target)}: ${s.ready}/${s.objects.length} ready, ${s.required} needed${pendingRollouts(s)}`,
    );
  return [
    `wait for ${where} timed out after ${timeoutSeconds}s`,
    unmet.length ? `; ${unmet.join('; ')}` : '',
    shown.length ? `; not ready: ${shown.join(', ')}` : '',
    apiError !== undefined ? `; last API error: ${apiError}` : '',
  ].join('');
}

function resultOf(states: TargetState[]): WaitResult {
  return {
    resources: states.flatMap((s) =>
      s.objects.map((o) => ({ type: s.target.type, name: o.name, ready: o.ready, reason: o.reason })),
    ),
    summary: summarise(states, undefined),
  };
}

/**
 * transient: worth another poll (network errors, request timeouts, 5xx, 429, 409, 408);
 * forbidden: 403, final; other: any other HTTP status, left to Temporal's retry policy.
 */
function classifyApiError(err: unknown): 'transient' | 'forbidden' | 'other' {
  if (!(err instanceof ApiException)) return 'transient'; // no HTTP response: network, TLS, timeout
  const code = err.code;
  if (code === 403) return 'forbidden';
  if (code >= 500 || code === 429 || code === 409 || code === 408) return 'transient';
  return 'other';
}

/** Aborts on activity cancellation or after `timeoutMs`, whichever comes first. */
function requestSignal(cancelled: AbortSignal | undefined, timeoutMs: number): AbortSignal {
  const timeout = AbortSignal.timeout(timeoutMs);
  return cancelled ? AbortSignal.any([cancelled, timeout]) : timeout;
}

function throwIfCancelled(signal: AbortSignal | undefined): void {
  if (!signal?.aborted) return;
  throw signal.reason instanceof Error ? signal.reason : new CancelledFailure('activity cancelled');
}

/** Resolves after `ms`, or rejects at once with the cancellation when `signal` aborts. */
function sleep(ms: number, signal: AbortSignal | undefined): Promise<void> {
  return new Promise((resolve, reject) => {
    const onAbort = () => {
      clearTimeout(timer);
      reject(signal?.reason instanceof Error ? signal.reason : new CancelledFailure('activity cancelled'));
    };
    const timer = setTimeout(
      () => {
        signal?.removeEventListener('abort', onAbort);
        resolve();
      },
      Math.max(ms, 0),
    );
    if (signal?.aborted) onAbort();
    else signal?.addEventListener('abort', onAbort, { once: true });
  });
}
