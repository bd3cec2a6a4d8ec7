import { log, workflowInfo } from '@temporalio/workflow';
import type { KindName } from '../api/kinds';
import type * as activities from '../activities';
import type { StatusWritten } from '../activities/kube/status';
import { statusWrites } from './activity-proxies';
import { rootMessage, type ControlProgress, type Pause } from './messages';
import { readingOf, statusFor } from './plan/status';
import { generationIn, type RunMemo } from './plan/specs';

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
  const { memo } = workflowInfo();
  return write(`${phase}`, {
    kind,
    namespace,
    name,
    observedGeneration: generationIn((memo as RunMemo | undefined)?.specs, kind, name),
    status: { ...statusFor(phase, message), reason: message, workflow: runLink(), ...extra },
    event: { type: readingOf(phase) === 'stalled' ? 'Warning' : 'Normal', reason: phase, message },
  });
}

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
  await write(paused ? 'Paused' : 'Resumed', {
    kind,
    namespace,
    name,
    status: {
      paused,
      conditions: [
        { type: 'Paused', status: paused ? 'True' : 'False', reason: paused ? 'Paused' : 'Resumed', message },
      ],
    },
    event: { type: 'Normal', reason: paused ? 'Paused' : 'Resumed', message },
  });
}

function runLink(): { id: string; run_id: string } {
  const { workflowId, runId } = workflowInfo();
  return { id: workflowId, run_id: runId };
}

async function write(what: string, request: StatusReport): Promise<number> {
  const { kind, namespace, name } = request;
  try {
    const written: StatusWritten | boolean = await statusWrites.reportStatus.executeWithOptions(
      { summary: `status of ${kind} ${namespace}/${name}: ${what}` },
      [request],
    );
    // Runs recorded before the write measured itself replay a boolean from their markers.
    return typeof written === 'object' ? written.tookMs : 0;
  } catch (err) {
    const last = `${kind} ${namespace}/${name} (${what}): ${rootMessage(err)}`;
    failures = { count: (failures?.count ?? 0) + 1, last };
    log.warn('status not written; the run goes on', { error: last });
    return 0;
  }
}
