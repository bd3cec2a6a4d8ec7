import {
  ActivityCancellationType,
  proxyActivities,
  proxyLocalActivities,
  type ActivityOptions,
  type LocalActivityOptions,
} from '@temporalio/workflow';
import type * as activities from '../activities';

/** Retries of every activity: quickly at first, at most a minute apart, ten attempts. */
const RETRY = {
  initialInterval: '1 second',
  backoffCoefficient: 2,
  maximumInterval: '1 minute',
  maximumAttempts: 10,
} satisfies ActivityOptions['retry'];

/** Start-to-close of a quick call with no timeout of its own. */
const QUICK_SECONDS = 5;
/** What an attempt's start-to-close adds to the operation's own timeout (the steps around it). */
const MARGIN_SECONDS = 60;
/** Heartbeat timeout of long work: it heartbeats every second (HEARTBEAT_INTERVAL_MS). */
const LONG_HEARTBEAT_SECONDS = 5;
/**
 * Heartbeat timeout of a helm write, longer: an attempt timed out by a late heartbeat is
 * cancelled, which kills its helm and leaves the release pending, which costs a recovery
 * revision. Other long work timed out that way only does its work again.
 */
const HELM_WRITE_HEARTBEAT_SECONDS = 10;

/**
 * The timeout profiles, one per kind of activity. An attempt on a worker that died stays
 * "running" on the server until its heartbeat timeout (or, without heartbeats, its
 * start-to-close) runs out; only then does a live worker retry it. So each kind gets the
 * shortest detection its work allows, and every start-to-close comes from the operation's own
 * timeout (`wait.timeout`, `step_timeout`, `test.timeout`, `delete.timeout`) where it has one.
 * Each profile also takes the one-line summary the Temporal UI shows for the call.
 */
export const profile = {
  /**
   * One Kubernetes API call or a few (scale, delete, create, an Event, a Deployer's versions):
   * no heartbeat; start-to-close 5 s, or the call's own timeout plus 5 s.
   */
  quick: (summary: string, ownTimeoutSeconds = 0): ActivityOptions => ({
    summary,
    startToCloseTimeout: Math.max(QUICK_SECONDS, ownTimeoutSeconds + 5) * 1000,
    retry: RETRY,
  }),
  /**
   * Work that may take a while and may be done again (a wait for readiness, an analysis check,
   * a helm status or manifest, a chart fetched or rendered, canary copies): heartbeats every
   * second, retried elsewhere after 5 s of silence.
   */
  long: (summary: string, timeoutSeconds = 0): ActivityOptions => ({
    summary,
    startToCloseTimeout: (timeoutSeconds + MARGIN_SECONDS) * 1000,
    heartbeatTimeout: LONG_HEARTBEAT_SECONDS * 1000,
    retry: RETRY,
  }),
  /**
   * A helm write of a release (upgrade, rollback, uninstall, test): heartbeats every second while
   * helm runs, retried elsewhere after 10 s of silence. A retry that finds the release pending
   * waits until the dead helm's own timeout is up (prepareRetriedWrite): at worst the
   * operation's timeout plus 10 s after helm last wrote the release.
   */
  helmWrite: (summary: string, timeoutSeconds: number): ActivityOptions => ({
    summary,
    startToCloseTimeout: (timeoutSeconds + MARGIN_SECONDS) * 1000,
    heartbeatTimeout: HELM_WRITE_HEARTBEAT_SECONDS * 1000,
    retry: RETRY,
    // A cancelled run closes only once its helm has been killed (the activity learns of the
    // cancellation at its next heartbeat, seconds later). Closing at once let the bridge start
    // the uninstall of an object being deleted while the cancelled install still ran, which then
    // re-created the release after the uninstall had found none.
    cancellationType: ActivityCancellationType.WAIT_CANCELLATION_COMPLETED,
  }),
};

/**
 * Activities, called with a profile: `io.scaleDeployment.executeWithOptions(profile.quick(...), [...])`.
 * Dispatched eagerly where the server allows it: every activity runs on the workflow's own task
 * queue and keeps the SDK's `allowEagerDispatch` (true), and the worker keeps its
 * `maxEagerActivityReservationsPerWorkflowTask` (3), so the workflow task that schedules one asks
 * the server to hand it straight back to this worker when that worker has a free activity slot,
 * skipping matching and a poll. The server does so only with `system.enableActivityEagerExecution`
 * (deploy/temporal-cluster/config/dynamic.yaml; the dev servers get it by flag), pinned
 * Worker Versioning included: a run's start to its first activity, dev server, medians of 15–20,
 * 73 → 19 ms unversioned and 92 → 50 ms pinned; on the PostgreSQL cluster 47–54 → 43–45 ms.
 */
export const io = proxyActivities<typeof activities>({
  startToCloseTimeout: QUICK_SECONDS * 1000,
  retry: RETRY,
});

/**
 * Status writes (`reportStatus`: one GET and one merge patch of a custom resource, one Event)
 * run as local activities: inside the workflow task that asks for them, with no activity task
 * to dispatch and no workflow task to wake the workflow afterwards. Each server round trip
 * they saved sat on the path from a group's last chart to the next group's first (issue 9).
 * They are short, so they need no heartbeat. They are retried briefly (about 7 s in all), not
 * for minutes: status is never the reason a deploy waits or fails (see status.ts).
 */
export const statusWrites = proxyLocalActivities<typeof activities>({
  startToCloseTimeout: '30 seconds',
  retry: { initialInterval: '1 second', backoffCoefficient: 2, maximumAttempts: 3 },
} satisfies LocalActivityOptions);

/**
 * One Kubernetes API call that a step cannot go on without (a canary's scale) as a local
 * activity: run inside the workflow task that asks for it, with no activity task to dispatch
 * and no workflow task to wake the workflow afterwards. Called with `profile.quick`. A worker
 * that dies during one leaves its workflow task to time out (10 s) and the next worker calls
 * it again, which a scale to a fixed size allows.
 */
export const quickCalls = proxyLocalActivities<typeof activities>({
  startToCloseTimeout: QUICK_SECONDS * 1000,
  retry: RETRY,
} satisfies LocalActivityOptions);
