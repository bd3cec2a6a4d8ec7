import { runHelm } from './exec';
import { prepareRetriedWrite } from './recover';
import { HELM_DEFAULT_TIMEOUT_SECONDS, type ReleaseRef } from './release';

export interface RollbackRequest extends ReleaseRef {
  revision: number;
  timeoutSeconds?: number;
  /**
   * Take back fields another field manager has taken over (server-side apply conflicts), as a
   * drift repair must: without it, helm refuses the rollback of an object edited by hand.
   */
  forceConflicts?: boolean;
}

/** Activity: `helm rollback` to a revision, waiting for it. Writes: one new Helm revision. */
export async function helmRollback(req: RollbackRequest): Promise<void> {
  const timeoutSeconds = req.timeoutSeconds ?? HELM_DEFAULT_TIMEOUT_SECONDS;
  const retry = await prepareRetriedWrite(
    req,
    timeoutSeconds,
    (o) => o.status === 'deployed' && o.description === `Rollback to ${req.revision}`,
  );
  if (!retry.proceed) return;
  await runHelm(
    [
      'rollback',
      req.release,
      String(req.revision),
      '--namespace',
      req.namespace,
      '--wait=watcher',
      '--timeout',
      `${timeoutSeconds}s`,
      ...(req.forceConflicts ? ['--force-conflicts'] : []),
    ],
    req.actAs,
  );
}
