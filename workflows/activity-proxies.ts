import { proxyActivities, type ActivityOptions } from '@temporalio/workflow';
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
