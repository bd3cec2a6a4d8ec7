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
 * They are short, so they need no heartbeat. They are retried briefly (about 7 s in all), not
 * for minutes: status is never the reason a deploy waits or fails (see status.ts).
 */
export const statusWrites = proxyLocalActivities<typeof activities>({
  startToCloseTimeout: '30 seconds',
  retry: { initialInterval: '1 second', backoffCoefficient: 2, maximumAttempts: 3 },
} satisfies LocalActivityOptions);
