import { runHelm } from './exec';
import { HELM_DEFAULT_TIMEOUT_SECONDS, type ReleaseRef } from './release';

/** Activity: `helm uninstall`, waiting for the resources to go. A missing release is not an error. */
export async function helmUninstall(req: ReleaseRef & { timeoutSeconds?: number }): Promise<void> {
  await runHelm(
    [
      'uninstall',
      req.release,
      '--namespace',
      req.namespace,
      '--ignore-not-found',
      '--wait=watcher',
      '--timeout',
      `${req.timeoutSeconds ?? HELM_DEFAULT_TIMEOUT_SECONDS}s`,
    ],
    req.actAs,
  );
}
