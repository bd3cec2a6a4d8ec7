import { runHelm } from './exec';
import { prepareRetriedWrite } from './recover';
import { HELM_DEFAULT_TIMEOUT_SECONDS } from './release';
import type { RollbackRequest } from '../../core/contracts/helm';

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
