import { runHelm } from './exec';
import { HELM_DEFAULT_TIMEOUT_SECONDS, isReleaseNotFound } from './release';
import type { ReleaseRef } from '../../core/contracts/helm';

/**
 * Activity: `helm uninstall`, waiting for the resources to go. A missing release is not an error.
 * Not `--ignore-not-found`: helm 4 then reports any failure to read the release, a `forbidden`
 * included, as "uninstalled" and exits 0, so an uninstall as an identity that may not see the
 * release would pass for done.
 */
export async function helmUninstall(req: ReleaseRef & { timeoutSeconds?: number }): Promise<void> {
  try {
    await runHelm(
      [
        'uninstall',
        req.release,
        '--namespace',
        req.namespace,
        '--wait=watcher',
        '--timeout',
        `${req.timeoutSeconds ?? HELM_DEFAULT_TIMEOUT_SECONDS}s`,
      ],
      req.actAs,
    );
  } catch (err) {
    if (!isReleaseNotFound(err)) throw err;
  }
}
