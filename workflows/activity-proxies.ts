import {
  proxyActivities,
  proxyLocalActivities,
  type ActivityOptions,
  type LocalActivityOptions,
} from '@temporalio/workflow';
import type * as activities from '../activities';

/**
 * Timeouts and retries of every activity, declared once. Helm and wait activities heartbeat
 * while they run, so a dead worker is noticed within the heartbeat timeout and the attempt is
 * retried elsewhere; start-to-close bounds the longest wait.
 */
const ACTIVITY_OPTIONS = {
  startToCloseTimeout: '2 hours',
  heartbeatTimeout: '30 seconds',
  retry: {
    initialInterval: '1 second',
    backoffCoefficient: 2,
    maximumInterval: '1 minute',
    maximumAttempts: 10,
  },
} satisfies ActivityOptions;

export const io = proxyActivities<typeof activities>(ACTIVITY_OPTIONS);

/** Call-site options: the same timeouts plus the one-line summary the Temporal UI shows. */
export function withSummary(summary: string): ActivityOptions {
  return { ...ACTIVITY_OPTIONS, summary };
}

/**
 * Status writes (`reportStatus`: one GET and one merge patch of a custom resource, one Event)
 * run as local activities: inside the workflow task that asks for them, with no activity task
 * to dispatch and no workflow task to wake the workflow afterwards. Each server round trip
 * they saved sat on the path from a group's last chart to the next group's first (issue 9).
 * They are short, so they need no heartbeat; a failed attempt retries in the worker, later
 * ones behind a timer, with the same backoff as every other activity.
 */
const LOCAL_ACTIVITY_OPTIONS = {
  startToCloseTimeout: '1 minute',
  retry: ACTIVITY_OPTIONS.retry,
} satisfies LocalActivityOptions;

export const local = proxyLocalActivities<typeof activities>(LOCAL_ACTIVITY_OPTIONS);

/** Call-site options of a local activity: its timeouts plus the summary the Temporal UI shows. */
export function localWithSummary(summary: string): LocalActivityOptions {
  return { ...LOCAL_ACTIVITY_OPTIONS, summary };
}
