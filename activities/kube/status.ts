import { Context } from '@temporalio/activity';
import { recordEvent, writeStatus, type StatusReport } from '../../kube/status';
import type { StatusWritten } from '../../core/contracts/kube';

export { recordEvent };

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
