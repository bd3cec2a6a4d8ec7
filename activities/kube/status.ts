import { Context } from '@temporalio/activity';
import { recordEvent, writeStatus, type StatusReport } from '../../kube/status';

export { recordEvent };

/** What a status write did: whether the object was on the cluster, and how long it took. */
export interface StatusWritten {
  onCluster: boolean;
  /**
   * From the first attempt's scheduling to now, on the worker's clock: the time the workflow
   * task that asked for this local activity spent on it (a canary hold shortens its timer by it).
   */
  tookMs: number;
}

/**
 * Activity: writes a custom resource's status and an Event (see writeStatus), linking the run
 * in the Temporal namespace it runs in.
 */
export async function reportStatus(report: StatusReport): Promise<StatusWritten> {
  const { info, log } = Context.current();
  const onCluster = await writeStatus(report, {
    temporalNamespace: info.workflowNamespace,
    warn: (message, fields) => log.warn(message, fields),
  });
  return { onCluster, tookMs: Date.now() - info.scheduledTimestampMs };
}
