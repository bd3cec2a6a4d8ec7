import { runHelm } from './exec';
import { recoverInterruptedAttempt } from './recover';
import type { ReleaseRef } from './release';

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
  await recoverInterruptedAttempt(req, req.timeoutSeconds);
  await runHelm([
    'rollback',
    req.release,
    String(req.revision),
    '--namespace',
    req.namespace,
    '--wait=watcher',
    '--timeout',
    `${req.timeoutSeconds ?? 300}s`,
    ...(req.forceConflicts ? ['--force-conflicts'] : []),
  ]);
}
