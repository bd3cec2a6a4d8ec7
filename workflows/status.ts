import { patched, workflowInfo } from '@temporalio/workflow';
import type { KindName } from '../api/kinds';
import type * as activities from '../activities';
import type { ChartOutcome } from './chart';
import { io, local, localWithSummary, withSummary } from './activity-proxies';
import { statusFor } from './plan/status';
import { generationIn, type RunMemo } from './plan/specs';

type StatusReport = Parameters<typeof activities.reportStatus>[0];

/**
 * Writes a CR's status and an Event through the status activity (a no-op when the CR is not on
 * the cluster). Adds the workflow's ID and run ID so `kubectl get -o yaml` leads to the run, and
 * as observedGeneration the generation this run deploys (from its memo's specs), not whatever
 * generation the object has reached meanwhile.
 *
 * A local activity since patch `local-status-report` (see activity-proxies); runs recorded
 * before it replay with the activity task they scheduled.
 */
export async function report(
  kind: KindName,
  namespace: string,
  name: string,
  phase: string,
  message: string,
  extra: Record<string, unknown> = {},
): Promise<void> {
  const { workflowId, runId, memo } = workflowInfo();
  const summary = `status of ${kind} ${namespace}/${name}: ${phase}`;
  const write = patched('local-status-report')
    ? (request: StatusReport) => local.reportStatus.executeWithOptions(localWithSummary(summary), [request])
    : (request: StatusReport) => io.reportStatus.executeWithOptions(withSummary(summary), [request]);
  await write({
    kind,
    namespace,
    name,
    observedGeneration: generationIn((memo as RunMemo | undefined)?.specs, kind, name),
    status: {
      ...statusFor(phase, message),
      reason: message,
      workflow: { id: workflowId, run_id: runId },
      ...extra,
    },
    event: { type: phase === 'Failed' ? 'Warning' : 'Normal', reason: phase, message },
  });
}

/** How a finished chart run reads in its ArmadaChart's status: phase, message, Helm revisions. */
export function chartOutcomeStatus(outcome: ChartOutcome): {
  phase: string;
  message: string;
  helm: { revision?: number; previous_revision?: number };
} {
  return {
    phase: outcome.action === 'uninstalled' ? 'Uninstalled' : 'Deployed',
    message: `${outcome.namespace}/${outcome.release} ${outcome.action}`,
    helm: { revision: outcome.revision ?? undefined, previous_revision: outcome.before ?? undefined },
  };
}
