import { runHelm } from './exec';
import type { ReleaseRef } from './release';

export interface RollbackRequest extends ReleaseRef {
  revision: number;
  timeoutSeconds?: number;
}

/** Activity: `helm rollback` to a revision, waiting for it. Writes: one new Helm revision. */
export async function helmRollback(req: RollbackRequest): Promise<void> {
  await runHelm([
    'rollback',
    req.release,
    String(req.revision),
    '--namespace',
    req.namespace,
    '--wait=watcher',
    '--timeout',
    `${req.timeoutSeconds ?? 300}s`,
  ]);
}
