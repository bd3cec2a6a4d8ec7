import { log, workflowInfo } from '@temporalio/workflow';
import type { KindName } from '../api/kinds';
import type * as activities from '../activities';
import type { StatusWritten } from '../core/contracts/kube';
import { io, profile, statusWrites } from './activity-proxies';
import { heldMessage } from './holds';
import { rootMessage } from '../core/failures';
import type { ControlProgress, Hold, Pause } from '../core/control';
import { pausedPhase, readingOf, statusFor } from '../core/plan/status';
import { generationIn, type RunMemo } from '../core/plan/specs';

type StatusReport = Parameters<typeof activities.reportStatus>[0];

type StatusWriteFailures = NonNullable<ControlProgress['statusWriteFailures']>;

// Per run: the workflow sandbox gives every run its own module state.
let failures: StatusWriteFailures | undefined;

/** Failed status writes of this run, for its progress query; none when every write went through. */
export function statusWriteFailures(): Pick<ControlProgress, 'statusWriteFailures'> {
  return failures ? { statusWriteFailures: { ...failures } } : {};
}

/**
 * Writes a CR's status and an Event through the status activity (a no-op when the CR is not on
 * the cluster). Adds the workflow's ID and run ID so `kubectl get -o yaml` leads to the run, and
 * as observedGeneration the generation this run deploys (from its memo's specs), not whatever
 * generation the object has reached meanwhile.
 *
 * A status write is never on the deploy's critical path: it is retried briefly (a local
 * activity, see activity-proxies), and one that still fails is logged and counted in the
 * progress query, and the run goes on. The next write carries the newer state anyway.
 *
 * Resolves to the milliseconds the write took (see StatusWritten.tookMs; 0 when it failed).
 */
export async function report(
  kind: KindName,
  namespace: string,
  name: string,
  phase: string,
  message: string,
  extra: Record<string, unknown> = {},
): Promise<number> {
  return write(phase, statusReport(kind, namespace, name, phase, message, extra));
}

/**
 * The same write as `report`, off the run's path: an ordinary activity the workflow does not
 * wait for, so the command after it (a group's or chart's start) goes out in the same workflow
 * task. A local activity holds every command of its task until it is done. The next `report` of
 * the object waits for it first, so writes of one object stay in order; a run that writes off
 * the path ends with a `report` of its own object, or awaits statusWritesSettled.
 */
export async function reportOffPath(
  kind: KindName,
  namespace: string,
  name: string,
  phase: string,
  message: string,
  extra: Record<string, unknown> = {},
): Promise<void> {
  const request = statusReport(kind, namespace, name, phase, message, extra);
  const key = objectKey(request);
  const before = pending.get(key) ?? Promise.resolve(0);
  pending.set(
    key,
    before.then(() =>
      send(phase, request, (summary) =>
        io.reportStatus.executeWithOptions(profile.quick(summary), [request]),
      ),
    ),
  );
}

function statusReport(
  kind: KindName,
  namespace: string,
  name: string,
  phase: string,
  message: string,
  extra: Record<string, unknown>,
): StatusReport {
  const key = `${kind}/${namespace}/${name}`;
  reported.set(key, { phase, message });
  // A paused object says Paused while its run works on (pausedPhase), until the run ends.
  const shown = pausedPhase(phase, pausedObjects.has(key));
  return {
    ...generationOf(kind, namespace, name),
    status: { ...statusFor(shown, message), reason: message, workflow: runLink(), ...extra },
    event: { type: readingOf(phase) === 'stalled' ? 'Warning' : 'Normal', reason: phase, message },
  };
}

/** The object, and as observedGeneration the generation this run deploys (from its memo's specs). */
function generationOf(kind: KindName, namespace: string, name: string) {
  const { memo } = workflowInfo();
  const specs = (memo as RunMemo | undefined)?.specs;
  return { kind, namespace, name, observedGeneration: generationIn(specs, kind, name) };
}

/** The phase and message this run last reported of each object (by objectKey): what a resume shows again. */
const reported = new Map<string, { phase: string; message: string }>();
/** The objects this run shows paused (reportPause), by objectKey. */
const pausedObjects = new Set<string>();

/**
 * Shows a pause in the CR: `status.paused {by, reason, since}` and the condition `Paused`, as
 * Argo Rollouts keeps its pause conditions; null clears them on resume.
 */
export async function reportPause(
  kind: KindName,
  namespace: string,
  name: string,
  paused: Pause | null,
): Promise<void> {
  const message = paused
    ? `paused by ${paused.by ?? 'an operator'}${paused.reason ? `: ${paused.reason}` : ''}`
    : 'resumed';
  const key = `${kind}/${namespace}/${name}`;
  if (paused) pausedObjects.add(key);
  else pausedObjects.delete(key);
  // The state the object shows: Paused, or on resume the phase this run last reported of it.
  const last = reported.get(key);
  const phase = last ? pausedPhase(last.phase, paused !== null) : paused && 'Paused';
  const state = phase ? statusFor(phase, phase === 'Paused' || !last ? message : last.message) : undefined;
  const pausedCondition = {
    type: 'Paused',
    status: paused ? 'True' : 'False',
    reason: paused ? 'Paused' : 'Resumed',
    message,
  } as const;
  await write(paused ? 'Paused' : 'Resumed', {
    ...generationOf(kind, namespace, name),
    status: {
      ...state,
      paused,
      conditions: [...(state?.conditions ?? []), pausedCondition],
    },
    event: { type: 'Normal', reason: paused ? 'Paused' : 'Resumed', message },
  });
}

/**
 * Shows a hold in the CR: `status.held {for, reason, since, until}` and the condition `Held`
 * (reason Frozen or OutsideWindow); null clears them when the run goes on. Resolves to the
 * milliseconds the write took (see report).
 */
export async function reportHeld(
  kind: KindName,
  namespace: string,
  name: string,
  held: Hold | null,
): Promise<number> {
  const reason = held ? (held.for === 'freeze' ? 'Frozen' : 'OutsideWindow') : 'NotHeld';
  const message = held ? heldMessage(held) : 'going on';
  return write(reason, {
    ...generationOf(kind, namespace, name),
    status: { held, conditions: [{ type: 'Held', status: held ? 'True' : 'False', reason, message }] },
    event: { type: 'Normal', reason: held ? reason : 'Released', message },
  });
}

function runLink(): { id: string; run_id: string } {
  const { workflowId, runId } = workflowInfo();
  return { id: workflowId, run_id: runId };
}

/** Waits for every status write off the path: a run that wrote some awaits this before it ends. */
export async function statusWritesSettled(): Promise<void> {
  await Promise.all(pending.values());
}

/** Status writes off the path not known to be done, by object: the next write of it waits for them. */
const pending = new Map<string, Promise<number>>();

const objectKey = ({ kind, namespace, name }: StatusReport) => `${kind}/${namespace}/${name}`;

/** A status write as a local activity, after any off-path write of the same object. */
async function write(what: string, request: StatusReport): Promise<number> {
  await pending.get(objectKey(request));
  return send(what, request, (summary) =>
    statusWrites.reportStatus.executeWithOptions({ summary }, [request]),
  );
}

/** Runs one status write; a failure is logged and counted, never thrown (see report). */
async function send(
  what: string,
  request: StatusReport,
  activity: (summary: string) => Promise<StatusWritten | boolean>,
): Promise<number> {
  const { kind, namespace, name } = request;
  try {
    const written = await activity(`status of ${kind} ${namespace}/${name}: ${what}`);
    // Runs recorded before the write measured itself replay a boolean from their markers.
    return typeof written === 'object' ? written.tookMs : 0;
  } catch (err) {
    const last = `${kind} ${namespace}/${name} (${what}): ${rootMessage(err)}`;
    failures = { count: (failures?.count ?? 0) + 1, last };
    log.warn('status not written; the run goes on', { error: last });
    return 0;
  }
}
