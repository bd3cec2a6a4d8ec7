import type { KindName } from '../../api/kinds';
import type { Notifications } from '../../api/notifications';
import type { ServiceAccountRef } from '../contracts/acting-as';
import { runServiceAccount } from './names';

/**
 * The events a run notifies, in the order a run meets them:
 * - `started`: the top-level run of an ArmadaManifest, a standalone ArmadaChart or a Deployer began;
 * - `waiting-approval`: a manifest's gate before a group, or a canary step, waits for approve;
 * - `step-reached`: a canary step (of an ArmadaChart or a Deployer) is Ready at its percentage;
 * - `failed`, `rolled-back`, `completed`: how the run (or a canary) ended.
 */
export type RunEventName =
  'started' | 'waiting-approval' | 'step-reached' | 'failed' | 'rolled-back' | 'completed';

/** The kinds whose spec takes `notifications`. */
export type NotifyingKind = Extract<KindName, 'ArmadaManifest' | 'ArmadaChart' | 'Deployer'>;

/** The object whose `notifications` a run follows, and the ServiceAccount that reads its Secret. */
export interface NotifyTarget {
  kind: NotifyingKind;
  namespace: string;
  name: string;
  notifications: Notifications;
  actAs?: ServiceAccountRef;
}

/**
 * What a run notifies for the object `kind namespace/name` with `spec`: nothing without
 * `notifications`; the Secret is read as the object's ServiceAccount (runServiceAccount).
 */
export function notifyTarget(
  kind: NotifyingKind,
  namespace: string,
  name: string,
  spec: { notifications?: Notifications; service_account_name?: string },
): NotifyTarget | undefined {
  const actAs = runServiceAccount(spec.service_account_name, namespace);
  return (
    spec.notifications && {
      kind,
      namespace,
      name,
      notifications: spec.notifications,
      ...(actAs && { actAs }),
    }
  );
}

/** One event of a run, as a webhook receives it in the json format (see notificationBody). */
export interface RunEvent {
  event: RunEventName;
  object: { kind: NotifyingKind; namespace: string; name: string };
  /** The run that met the event: a chart's canary events come from its canary run, steered by its own ID. */
  run: { workflow_id: string; run_id: string };
  /** A canary step: 1-based, of how many, at which percentage. */
  step?: { number: number; of: number; percent: number };
  /** The approval gate waited at (`before group apps`, `step 2 (50 %)`). */
  gate?: string;
  /** Why: what failed, who rolled back, what completed. */
  reason?: string;
  /**
   * Every approval the run took before this event, oldest first (absent before the first): the
   * audit trail of its gates, on each event so that any one of them (the last above all) says who
   * let the run through.
   */
  approvals?: NotifiedApproval[];
  /** When the run met it (RFC 3339, workflow time). */
  time: string;
}

/**
 * An approval as notifications name it: the gate, who approved (the user the API server
 * authenticated, as the run recorded it; `temporal-admin:<by>` for one sent to Temporal
 * directly), why, when (RFC 3339), and `1 of 2` while a gate needs `distinct_approvers`.
 */
export interface NotifiedApproval {
  gate: string;
  by?: string;
  reason?: string;
  at: string;
  count?: string;
}

/** What a run says of an event: the rest (object, run, time) the notifier adds. */
export type RunEventFacts = Pick<RunEvent, 'event' | 'step' | 'gate' | 'reason'>;

/**
 * How a manifest or chart run's end (its outcome's state, and its failure if any) reads as an
 * event: a rollback, a failure, a stop before the end (a failure too: what was asked for is not
 * all deployed), else completion.
 */
export function endingEvent(state: string, failure?: string): RunEventFacts {
  if (state === 'rolled-back') return { event: 'rolled-back', ...(failure && { reason: failure }) };
  if (failure !== undefined) return { event: 'failed', reason: failure };
  if (state === 'stopped') return { event: 'failed', reason: 'stopped before the end' };
  return { event: 'completed', reason: state };
}
