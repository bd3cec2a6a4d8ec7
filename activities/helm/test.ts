import { runHelm } from './exec';
import type { ReleaseRef } from '../../core/contracts/helm';

/** Activity: `helm test`. Writes: the test pods' results into the release. Fails when a test fails. */
export async function helmTest(req: ReleaseRef & { timeoutSeconds?: number }): Promise<void> {
  await runHelm(
    ['test', req.release, '--namespace', req.namespace, '--timeout', `${req.timeoutSeconds ?? 300}s`],
    req.actAs,
  );
}
