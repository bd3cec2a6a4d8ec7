import type { Client, WorkflowHandle } from '@temporalio/client';
import { summarize, type Summary } from './stats';

/**
 * Reading figures out of workflow histories: every event carries the server's timestamp, so
 * latencies measured here are the ones Temporal itself recorded, free of the driver's own delays.
 */
export type HistoryEvent = NonNullable<Awaited<ReturnType<WorkflowHandle['fetchHistory']>>['events']>[number];

type Timestamp = NonNullable<HistoryEvent['eventTime']>;

/** A protobuf Timestamp or Duration in milliseconds (its seconds may be a Long). */
function protoMs(t: Timestamp | null | undefined): number {
  if (!t) return NaN;
  return Number(t.seconds ?? 0) * 1000 + (t.nanos ?? 0) / 1e6;
}

/** When the server wrote the event, in ms since the epoch. */
export const eventMs = (e: HistoryEvent): number => protoMs(e.eventTime);

/** The events of a run (the latest run of the ID when `runId` is not given). */
export async function fetchEvents(
  client: Client,
  workflowId: string,
  runId?: string,
): Promise<HistoryEvent[]> {
  return (await client.workflow.getHandle(workflowId, runId).fetchHistory()).events ?? [];
}

/** The event with this ID (event IDs are 1-based and dense within one history). */
function byId(events: readonly HistoryEvent[], id: unknown): HistoryEvent | undefined {
  const event = events[Number(id) - 1];
  return event && Number(event.eventId) === Number(id)
    ? event
    : events.find((e) => Number(e.eventId) === Number(id));
}

/** Durations of a run's workflow tasks (ms): waiting for a worker (schedule → start) and running (start → complete). */
export function workflowTaskLatencies(events: readonly HistoryEvent[]): {
  scheduleToStart: number[];
  execution: number[];
} {
  const scheduleToStart: number[] = [];
  const execution: number[] = [];
  for (const e of events) {
    const started = e.workflowTaskStartedEventAttributes;
    if (started) {
      const scheduled = byId(events, started.scheduledEventId);
      if (scheduled) scheduleToStart.push(eventMs(e) - eventMs(scheduled));
    }
    const completed = e.workflowTaskCompletedEventAttributes;
    if (completed) {
      const start = byId(events, completed.startedEventId);
      if (start) execution.push(eventMs(e) - eventMs(start));
    }
  }
  return { scheduleToStart, execution };
}

/** How long each activity waited for a worker (schedule → start), in ms. */
export function activityScheduleToStart(events: readonly HistoryEvent[]): number[] {
  return events.flatMap((e) => {
    const started = e.activityTaskStartedEventAttributes;
    const scheduled = started && byId(events, started.scheduledEventId);
    return scheduled ? [eventMs(e) - eventMs(scheduled)] : [];
  });
}

/** Every activity of a run that closed: its type and when it was scheduled, started (if it was) and closed, in ms. */
export function closedActivities(
  events: readonly HistoryEvent[],
): { type: string; scheduled: number; started?: number; closed: number }[] {
  return events.flatMap((e) => {
    const closed =
      e.activityTaskCompletedEventAttributes ??
      e.activityTaskFailedEventAttributes ??
      e.activityTaskTimedOutEventAttributes ??
      e.activityTaskCanceledEventAttributes;
    const scheduled = closed && byId(events, closed.scheduledEventId);
    const started = closed ? byId(events, closed.startedEventId) : undefined;
    const type = scheduled?.activityTaskScheduledEventAttributes?.activityType?.name;
    if (!scheduled || !type) return [];
    return [
      {
        type,
        scheduled: eventMs(scheduled),
        started: started ? eventMs(started) : undefined,
        closed: eventMs(e),
      },
    ];
  });
}

/** Every activity of a run that closed: its type and how long it took from scheduled to closed, in ms. */
export function activityDurations(events: readonly HistoryEvent[]): { type: string; ms: number }[] {
  return closedActivities(events).map((a) => ({ type: a.type, ms: a.closed - a.scheduled }));
}

/** Durations summarized per activity type (ms). */
export function summarizeByType(
  durations: readonly { type: string; ms: number }[],
): Record<string, Summary | undefined> {
  const byType = new Map<string, number[]>();
  for (const d of durations) byType.set(d.type, [...(byType.get(d.type) ?? []), d.ms]);
  return Object.fromEntries(
    [...byType].sort(([a], [b]) => a.localeCompare(b)).map(([type, ms]) => [type, summarize(ms)]),
  );
}

/** The IDs of a run's children and their children, depth first, with the run's own ID first. */
export async function workflowTree(client: Client, workflowId: string): Promise<Map<string, HistoryEvent[]>> {
  const tree = new Map<string, HistoryEvent[]>();
  const visit = async (id: string) => {
    const events = await fetchEvents(client, id);
    tree.set(id, events);
    for (const child of childTimes(events).keys()) await visit(child);
  };
  await visit(workflowId);
  return tree;
}

/** How late one durable timer was, in ms (negative: early). */
export interface TimerLateness {
  /** The server fired it this long after TimerStarted + its duration. */
  fired: number;
  /**
   * The workflow went on (its next workflow task started) this long after the deadline it asked
   * for: the time of the workflow task that started the timer (the workflow's `Date.now()`) plus
   * the duration. What a canary step's end is late by.
   */
  resumed: number;
}

/** Lateness of every timer that fired in a run. */
export function timerLateness(events: readonly HistoryEvent[]): TimerLateness[] {
  const result: TimerLateness[] = [];
  let taskStartedAt = NaN;
  events.forEach((e, i) => {
    if (e.workflowTaskStartedEventAttributes) taskStartedAt = eventMs(e);
    const timer = e.timerStartedEventAttributes;
    if (!timer) return;
    const durationMs = protoMs(timer.startToFireTimeout);
    const firedIndex = events.findIndex(
      (f, j) =>
        j > i &&
        f.timerFiredEventAttributes &&
        Number(f.timerFiredEventAttributes.startedEventId) === Number(e.eventId),
    );
    if (firedIndex < 0) return; // cancelled (a pause, a signal): not a lateness
    const fired = events[firedIndex];
    const resumed = events.slice(firedIndex + 1).find((f) => f.workflowTaskStartedEventAttributes);
    result.push({
      fired: eventMs(fired) - (eventMs(e) + durationMs),
      resumed: resumed ? eventMs(resumed) - (taskStartedAt + durationMs) : NaN,
    });
  });
  return result.filter((t) => !Number.isNaN(t.resumed));
}

/** Starts and ends (ms since the epoch) of the child workflows a run started, by workflow ID. */
export function childTimes(
  events: readonly HistoryEvent[],
): Map<string, { initiated: number; started?: number; closed?: number }> {
  const children = new Map<string, { initiated: number; started?: number; closed?: number }>();
  for (const e of events) {
    const initiated = e.startChildWorkflowExecutionInitiatedEventAttributes;
    if (initiated?.workflowId) children.set(initiated.workflowId, { initiated: eventMs(e) });
    const started = e.childWorkflowExecutionStartedEventAttributes;
    const startedId = started?.workflowExecution?.workflowId;
    if (startedId && children.has(startedId)) children.get(startedId)!.started = eventMs(e);
    const closed =
      e.childWorkflowExecutionCompletedEventAttributes ??
      e.childWorkflowExecutionFailedEventAttributes ??
      e.childWorkflowExecutionCanceledEventAttributes ??
      e.childWorkflowExecutionTerminatedEventAttributes ??
      e.childWorkflowExecutionTimedOutEventAttributes;
    const closedId = closed?.workflowExecution?.workflowId;
    if (closedId && children.has(closedId)) children.get(closedId)!.closed = eventMs(e);
  }
  return children;
}

/** A run's own start and close (ms since the epoch), from its first and last events. */
export function runSpan(events: readonly HistoryEvent[]): { start: number; close: number } {
  return { start: eventMs(events[0]), close: eventMs(events[events.length - 1]) };
}

/** Runs `fn` over the items with at most `limit` calls in flight; results in the items' order. */
export async function mapLimit<T, R>(
  items: readonly T[],
  limit: number,
  fn: (item: T, i: number) => Promise<R>,
): Promise<R[]> {
  const results: R[] = new Array(items.length);
  let next = 0;
  const lane = async () => {
    while (next < items.length) {
      const i = next++;
      results[i] = await fn(items[i], i);
    }
  };
  await Promise.all(Array.from({ length: Math.min(limit, items.length) }, lane));
  return results;
}
