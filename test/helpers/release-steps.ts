import type { Client } from '@temporalio/client';
import { eventTime, summaryOf, type HistoryEvent } from './histories';

/**
 * A release's steps as the run that deploys it recorded them: a one-workflow run (deployRun) has
 * no chart child to read them from, so they are its activities whose summary names the release
 * (docs/design/one-workflow.md, decision 2: `observe web in apps`, `helm upgrade web in apps`,
 * `helm test web`). `started`: when its first activity was scheduled; `closed`: when its last
 * one closed (Infinity while one is open); `types`: the activity types, in order.
 */
export interface ReleaseSteps {
  started: number;
  closed: number;
  types: string[];
}

const namesRelease = (summary: string, release: string) => summary.split(/[\s:]+/).includes(release);

/** The steps of `release` in one run's history (see ReleaseSteps); undefined when none names it. */
export function releaseSteps(events: readonly HistoryEvent[], release: string): ReleaseSteps | undefined {
  const scheduled = events.filter(
    (e) => e.activityTaskScheduledEventAttributes && namesRelease(summaryOf(e), release),
  );
  if (!scheduled.length) return undefined;
  const ids = new Set(scheduled.map((e) => String(e.eventId)));
  const closing = (e: HistoryEvent) =>
    e.activityTaskCompletedEventAttributes ??
    e.activityTaskFailedEventAttributes ??
    e.activityTaskTimedOutEventAttributes ??
    e.activityTaskCanceledEventAttributes;
  const closed = events.filter((e) => ids.has(String(closing(e)?.scheduledEventId)));
  return {
    started: eventTime(scheduled[0]),
    closed: closed.length === scheduled.length ? Math.max(...closed.map(eventTime)) : Infinity,
    types: scheduled.map((e) => e.activityTaskScheduledEventAttributes!.activityType!.name!),
  };
}

/** The steps of `release` in the latest run under `workflowId` (a manifest's: its deployRun). */
export async function releaseStepsOf(
  client: Client,
  workflowId: string,
  release: string,
): Promise<ReleaseSteps> {
  const { events } = await client.workflow.getHandle(workflowId).fetchHistory();
  const steps = releaseSteps(events ?? [], release);
  if (!steps) throw new Error(`no activity of the run under ${workflowId} names release ${release}`);
  return steps;
}
