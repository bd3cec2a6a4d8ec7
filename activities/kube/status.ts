import { Context } from '@temporalio/activity';
import { recordEvent, writeStatus, type StatusReport } from '../../kube/status';

export { recordEvent };

/**
 * Activity: writes a custom resource's status and an Event (see writeStatus), linking the run
 * in the Temporal namespace it runs in. Returns false when the object is not on the cluster.
 */
export function reportStatus(report: StatusReport): Promise<boolean> {
  const { info, log } = Context.current();
  return writeStatus(report, {
    temporalNamespace: info.workflowNamespace,
    warn: (message, fields) => log.warn(message, fields),
  });
}
