import {
  condition,
  getExternalWorkflowHandle,
  log,
  ParentClosePolicy,
  proxyActivities,
  setHandler,
  startChild,
  workflowInfo,
  type ActivityOptions,
  type ChildWorkflowHandle,
} from '@temporalio/workflow';
import type * as activities from '../activities';
import { rootMessage } from '../core/failures';
import { notificationSignal } from './messages';
import type { Approved } from '../core/control';
import { notifierWorkflowId } from '../core/plan/names';
import type { NotifiedApproval, NotifyTarget, RunEvent, RunEventFacts } from '../core/plan/notifications';

/**
 * A delivery: one POST of at most 10 s, retried with backoff (1 s, 2 s, 4 s, 8 s apart), five
 * attempts: about 15 s of waiting before the event is given up, so a receiver down for good
 * delays the events behind it by that much, and no more.
 */
const DELIVERY = {
  startToCloseTimeout: '15 seconds',
  retry: {
    initialInterval: '1 second',
    backoffCoefficient: 2,
    maximumInterval: '30 seconds',
    maximumAttempts: 5,
  },
} satisfies ActivityOptions;

const deliveries = proxyActivities<typeof activities>(DELIVERY);

/** How long a notifier with nothing to deliver waits for the next event before it ends. */
const IDLE = '1 minute';

export interface NotifierRun {
  target: NotifyTarget;
  /** The events to deliver first, in order; more arrive by notificationSignal. */
  events: RunEvent[];
}

export interface NotifierOutcome {
  delivered: number;
  /** Events whose delivery failed on every attempt: logged (never with the URL) and skipped. */
  dropped: number;
}

/**
 * Delivers one run's events to its webhook, one at a time in the order they came, each retried
 * with backoff. A child the deploy run does not wait for (ParentClosePolicy ABANDON): a slow or
 * dead receiver never holds a deploy, and the last events are still delivered after the run has
 * ended. Ends once it has had nothing to deliver for IDLE; the run starts another for a later
 * event (see RunNotifier).
 */
export async function notifierWorkflow({ target, events }: NotifierRun): Promise<NotifierOutcome> {
  const queue = [...events];
  setHandler(notificationSignal, (event) => void queue.push(event));
  const outcome: NotifierOutcome = { delivered: 0, dropped: 0 };
  do {
    for (let event = queue.shift(); event; event = queue.shift()) {
      const { kind, namespace, name } = event.object;
      try {
        await deliveries.deliverNotification.executeWithOptions(
          { ...DELIVERY, summary: `notify ${event.event} of ${kind} ${namespace}/${name}` },
          [{ namespace: target.namespace, notifications: target.notifications, actAs: target.actAs, event }],
        );
        outcome.delivered++;
      } catch (err) {
        outcome.dropped++;
        log.warn('notification not delivered; the run goes on', {
          event: event.event,
          object: `${kind} ${namespace}/${name}`,
          run: event.run.run_id,
          error: rootMessage(err),
        });
      }
    }
  } while (await condition(() => queue.length > 0, IDLE));
  return outcome;
}

/** The approvals a run has taken so far (RunControl.approvals): read as each event is made. */
export type ApprovalsSoFar = () => readonly Approved[];

const noApprovals: ApprovalsSoFar = () => [];

/** An event this run met now: `facts` with the object, the run, the approvals so far and the time. */
function eventNow(facts: RunEventFacts, object: RunEvent['object'], approvals: ApprovalsSoFar): RunEvent {
  const { workflowId, runId } = workflowInfo();
  const taken = approvals().map(notifiedApproval);
  return {
    ...facts,
    object,
    run: { workflow_id: workflowId, run_id: runId },
    ...(taken.length && { approvals: taken }),
    time: new Date().toISOString(),
  };
}

/** An approval as notified: the bridge's proof stays in the run. */
function notifiedApproval({ gate, by, reason, at, count }: Approved): NotifiedApproval {
  return { gate, ...(by !== undefined && { by }), ...(reason && { reason }), at, ...(count && { count }) };
}

/** Where a run's events go: its own notifier, or its parent's (a chart's canary). */
export interface EventSink {
  /** Hands `facts` on after every earlier event of this run; never rejects. */
  notify(facts: RunEventFacts): Promise<void>;
  /** Resolves once every event so far is handed on: a run awaits it before it ends or continues as new. */
  settled(): Promise<void>;
}

/**
 * A run's side of its notifications. Events are handed to the run's notifier child in order,
 * each once the one before was taken (a signal is acknowledged once recorded in the notifier's
 * history), so the notifier receives them in the run's order; the run itself awaits none of it
 * but its last. Without `notifications` it is inert: no command, so a run without the field
 * replays as before.
 */
export class RunNotifier implements EventSink {
  private handing: Promise<void> = Promise.resolve();
  private notifier?: ChildWorkflowHandle<typeof notifierWorkflow>;
  private notifiersStarted = 0;

  /**
   * `approvals`: the approvals the run's events name (its gates'); `chart`: the chart of the run
   * whose notifications these are, when they are not the run's own (see notifierWorkflowId).
   */
  constructor(
    private readonly target?: NotifyTarget,
    private readonly approvals: ApprovalsSoFar = noApprovals,
    private readonly chart?: string,
  ) {}

  notify(facts: RunEventFacts): Promise<void> {
    const { target } = this;
    if (!target) return this.handing;
    const object = { kind: target.kind, namespace: target.namespace, name: target.name };
    return this.forward(eventNow(facts, object, this.approvals));
  }

  /** Hands on an event another run met (a chart's canary), in this run's order. */
  forward(event: RunEvent): Promise<void> {
    const target = this.target;
    if (!target) return this.handing;
    this.handing = this.handing
      .then(() => this.handOver(target, event))
      .catch((err: unknown) =>
        log.warn('notification not handed to the notifier', { error: rootMessage(err) }),
      );
    return this.handing;
  }

  settled(): Promise<void> {
    return this.handing;
  }

  /** To the notifier that runs; a notifier that has ended (idle) refuses it, and a new one takes it. */
  private async handOver(target: NotifyTarget, event: RunEvent): Promise<void> {
    if (this.notifier) {
      try {
        await this.notifier.signal(notificationSignal, event);
        return;
      } catch {
        this.notifier = undefined;
      }
    }
    const { workflowId, runId } = workflowInfo();
    this.notifier = await startChild(notifierWorkflow, {
      workflowId: notifierWorkflowId(workflowId, runId, ++this.notifiersStarted, this.chart),
      args: [{ target, events: [event] }],
      parentClosePolicy: ParentClosePolicy.ABANDON,
      staticSummary: `notifications of ${target.kind} ${target.namespace}/${target.name}`,
    });
  }
}

/**
 * A chart's notifier of its canary's events (the canary child hands them to the run that drives
 * the chart: see ParentForwarder), notified in that run's order. The canary's approval steps are
 * steered by its own ID: its events name its approvals, and the chart's own events the ones its
 * last event named.
 */
export class CanaryEventsNotifier {
  readonly notifier: RunNotifier;
  private canaryApprovals: readonly NotifiedApproval[] = [];

  /** `chart`: as for RunNotifier, when the run deploys more than this chart. */
  constructor(target: NotifyTarget | undefined, chart?: string) {
    this.notifier = new RunNotifier(target, () => this.canaryApprovals, chart);
  }

  /** An event of the chart's canary: notified after every earlier one. */
  take(event: RunEvent): void {
    this.canaryApprovals = event.approvals ?? this.canaryApprovals;
    void this.notifier.forward(event);
  }
}

/**
 * A chart's canary run hands its events to the chart run (its parent), which notifies them in
 * order with its own (the chart's `notifications`).
 */
export class ParentForwarder implements EventSink {
  private handing: Promise<void> = Promise.resolve();

  /** `approvals`: the canary's own (its approval steps are steered by its ID). */
  constructor(
    private readonly object: RunEvent['object'],
    private readonly approvals: ApprovalsSoFar = noApprovals,
  ) {}

  notify(facts: RunEventFacts): Promise<void> {
    const parent = workflowInfo().parent;
    if (!parent) return this.handing;
    const event = eventNow(facts, this.object, this.approvals);
    this.handing = this.handing
      .then(() =>
        getExternalWorkflowHandle(parent.workflowId, parent.runId).signal(notificationSignal, event),
      )
      .catch((err: unknown) =>
        log.warn('notification not handed to the chart run', { error: rootMessage(err) }),
      );
    return this.handing;
  }

  settled(): Promise<void> {
    return this.handing;
  }
}

/** No notifications: every call a no-op, no command. */
export const noNotifications: EventSink = {
  notify: () => Promise.resolve(),
  settled: () => Promise.resolve(),
};
