import { execFile } from 'node:child_process';
import { writeFile } from 'node:fs/promises';
import path from 'node:path';
import { promisify } from 'node:util';
import type { Client, WorkflowHandle } from '@temporalio/client';
import { temporal } from '@temporalio/proto';
import { toolPath } from '../../activities/tools';

export type HistoryEvent = NonNullable<Awaited<ReturnType<WorkflowHandle['fetchHistory']>>['events']>[number];

/** When the server wrote an event, in epoch milliseconds. */
export function eventTime(e: HistoryEvent): number {
  const t = e.eventTime!;
  return Number(t.seconds) * 1000 + Math.floor((t.nanos ?? 0) / 1e6);
}

/** The one-line summary an event carries for the Temporal UI (a timer's, an activity's), or ''. */
export function summaryOf(e: HistoryEvent): string {
  return e.userMetadata?.summary?.data
    ? (JSON.parse(Buffer.from(e.userMetadata.summary.data).toString()) as string)
    : '';
}

/**
 * A timer as its run's history records it. `deadline` is durable: the server fires the timer
 * then, whatever happens to the worker. A deadline the workflow showed (Workflow.now() of the
 * task that started the timer, plus the wait) can lie off it by that task's processing time.
 */
export interface HistoryTimer {
  summary: string;
  /** When the TimerStarted event was written, in epoch milliseconds. */
  startedAt: number;
  /** `startedAt` plus the timer's startToFireTimeout: when the server fires it. */
  deadline: number;
  /** Its TimerFired event; undefined while it has not fired (or once cancelled). */
  fired?: HistoryEvent;
  /** When the TimerFired event was written. */
  firedAt?: number;
}

/**
 * How far a timer's TimerFired may be written after its durable deadline: the server's timer
 * queue under load, or a workflow task in flight then (events that arrive during a task are
 * written when it completes). 1 s was exceeded once (1,219 ms, the canary workflow test with a
 * 2.5 s status write, in a fresh-clone suite of 2026-11-25 with both Jest workers busy; which of
 * the two was not established). The deadline the product sets has checks of its own.
 */
export const TIMER_FIRING_TOLERANCE_MS = 2_000;

/**
 * How far a timer's durable deadline may lie from the deadline its workflow showed: the showing
 * task's processing time (its Workflow.now() is the task's start; the timer starts when the task
 * completes, shortened only by its status writes). Wider than the firing's, as that time grows
 * with the machine's load; a kill inside the task would move the deadline by a task timeout (10 s).
 */
export const SHOWN_DEADLINE_TOLERANCE_MS = 2_000;

/**
 * What docs/how-to/progressive-delivery.md and docs/contributing/testing.md promise of a canary hold across a worker crash: the step after
 * the hold starts within this long of the deadline shown before the kill. The hold's timer fires
 * on its deadline (TIMER_FIRING_TOLERANCE_MS); the step then waits for the sticky queue's timeout
 * (500 ms, worker/worker.ts) and the new worker's poll and replay. Measured (docs/contributing/testing.md, row
 * 1): 0.7–1.3 s alone, up to 2.1 s in a cold suite, so not the ±1 s first promised; the docs
 * say this figure instead. It allows the timer's own firing tolerance (2 s) plus the sticky
 * timeout and a replay on a loaded machine.
 */
export const HOLD_PROMISE_MS = 5_000;

/**
 * When the step after `fired` (a timer's TimerFired) began, in `events`: the first activity
 * scheduled or local activity recorded (a marker) after it.
 */
export function stepAfter(events: readonly HistoryEvent[], fired: HistoryEvent): number | undefined {
  const next = events.find(
    (e) =>
      Number(e.eventId) > Number(fired.eventId) &&
      (e.activityTaskScheduledEventAttributes || e.markerRecordedEventAttributes),
  );
  return next && eventTime(next);
}

/**
 * The timers started in `events` whose summary includes `text` (every timer for ''), oldest
 * first. Once a timer is here, the workflow task that started it has completed: a worker killed
 * after that cannot move its deadline.
 */
export function historyTimers(events: readonly HistoryEvent[], text = ''): HistoryTimer[] {
  const fired = new Map(
    events
      .filter((e) => e.timerFiredEventAttributes)
      .map((e) => [String(e.timerFiredEventAttributes!.startedEventId), e]),
  );
  return events
    .filter((e) => e.timerStartedEventAttributes && summaryOf(e).includes(text))
    .map((e) => {
      const timeout = e.timerStartedEventAttributes!.startToFireTimeout!;
      const startedAt = eventTime(e);
      const firing = fired.get(String(e.eventId));
      return {
        summary: summaryOf(e),
        startedAt,
        deadline: startedAt + Number(timeout.seconds ?? 0) * 1000 + Math.floor((timeout.nanos ?? 0) / 1e6),
        fired: firing,
        firedAt: firing && eventTime(firing),
      };
    });
}

/** Whether this run refreshes test/histories (`ARMADA_SAVE_HISTORIES=1`). */
export const savingHistories = Boolean(process.env.ARMADA_SAVE_HISTORIES);

/**
 * Saves one run's history as test/histories/<name>.json with the Temporal CLI's `workflow show
 * -o json`, the format the replay test reads, together with the workflow ID (child IDs derive
 * from it, so replay needs it).
 */
export async function saveHistory(
  workflowId: string,
  runId: string | undefined,
  name: string,
): Promise<void> {
  const args = [
    'workflow',
    'show',
    '--address',
    process.env.TEMPORAL_ADDRESS!,
    '-w',
    workflowId,
    '-o',
    'json',
  ];
  if (runId) args.push('-r', runId);
  const { stdout } = await promisify(execFile)(toolPath('temporal'), args, { maxBuffer: 64 * 1024 * 1024 });
  const file = path.join(__dirname, '../histories', `${name}.json`);
  await writeFile(file, JSON.stringify({ workflowId, history: JSON.parse(stdout) }));
}

/**
 * A run's result, or after `ms` an error that names what every open run matching `related` (the
 * run and its children) still waits on: its pending activities with their attempts and last
 * failures. A drill's wait on a result then ends with the reason instead of Jest's file timeout.
 */
export async function resultWithin<T>(
  client: Client,
  handle: WorkflowHandle,
  ms: number,
  related: (workflowId: string) => boolean,
): Promise<T> {
  let timer: NodeJS.Timeout | undefined;
  const expired = new Promise<'expired'>((resolve) => (timer = setTimeout(() => resolve('expired'), ms)));
  try {
    const first = await Promise.race([handle.result() as Promise<T>, expired]);
    if (first !== 'expired') return first;
  } finally {
    clearTimeout(timer);
  }
  const open: string[] = [];
  for await (const run of client.workflow.list({ query: `ExecutionStatus = 'Running'` })) {
    if (!related(run.workflowId)) continue;
    const { raw } = await client.workflow.getHandle(run.workflowId, run.runId).describe();
    const pending = (raw.pendingActivities ?? []).map(
      (a) =>
        `${a.activityType?.name} (attempt ${a.attempt}${a.lastFailure?.message ? `, last failure: ${a.lastFailure.message}` : ''})`,
    );
    open.push(`${run.workflowId}: ${pending.length ? pending.join(', ') : 'no pending activity'}`);
  }
  throw new Error(
    `${handle.workflowId} did not end within ${ms / 1000} s; open runs: ${open.join('; ') || 'none'}`,
  );
}

/**
 * Every activity of `events` that took more than one attempt, by why its last attempt was
 * retried: `<activity type> after <heartbeat timeout> s` when the attempt before it stopped
 * heartbeating (its worker died); `<activity type> after <start-to-close timeout> s
 * (start-to-close)` when one without a heartbeat (a quick one, e.g. an off-path status write)
 * outlived its start-to-close timeout (its worker died, or it ran too long); `<activity type>
 * retried, no failure recorded` when the server kept none (a history holds only the last
 * attempt's started event and the failure before it, so an activity retried twice shows only its
 * last cause). What a crash drill reads to show which timeout gave a dead worker's attempt up.
 */
export function retriedActivities(events: readonly HistoryEvent[]): string[] {
  const scheduled = new Map(
    events
      .filter((e) => e.activityTaskScheduledEventAttributes)
      .map((e) => [String(e.eventId), e.activityTaskScheduledEventAttributes!]),
  );
  return events.flatMap((e) => {
    const started = e.activityTaskStartedEventAttributes;
    if (!started || (started.attempt ?? 1) <= 1) return [];
    const attributes = scheduled.get(String(started.scheduledEventId));
    const type = attributes?.activityType?.name;
    const failure = started.lastFailure;
    if (!failure) return [`${type} retried, no failure recorded`];
    if (failure.timeoutFailureInfo?.timeoutType === temporal.api.enums.v1.TimeoutType.TIMEOUT_TYPE_HEARTBEAT)
      return [`${type} after ${Number(attributes?.heartbeatTimeout?.seconds)} s`];
    if (
      failure.timeoutFailureInfo?.timeoutType ===
      temporal.api.enums.v1.TimeoutType.TIMEOUT_TYPE_START_TO_CLOSE
    )
      return [`${type} after ${Number(attributes?.startToCloseTimeout?.seconds)} s (start-to-close)`];
    return [`${type} after: ${failure.message}`];
  });
}

/**
 * A history as text, with every payload's bytes (proto3 JSON gives them as base64, a value's own
 * base64 rarely lined up inside) decoded as well, so a value carried in any payload shows.
 */
export function historyText(history: object): string {
  const payloads: string[] = [];
  const raw = JSON.stringify(history, (key, value: unknown) => {
    if (key === 'data' && typeof value === 'string') payloads.push(Buffer.from(value, 'base64').toString());
    return value;
  });
  return [raw, ...payloads].join('\n');
}
