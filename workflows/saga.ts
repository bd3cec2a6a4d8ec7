import { io, profile } from './activity-proxies';
import { DEFAULT_TIMEOUT_SECONDS } from './plan/helm-requests';
import { compensations, type ReleaseChange } from './plan/rollback';

/**
 * Undoes `changes`, newest first: a release that existed goes back to its revision from before
 * the run (helm rollback), one the run installed is uninstalled. Calls `undone` with each
 * release (`namespace/release`) once it is put back; returns them in that order.
 */
export async function undoChanges(
  changes: readonly ReleaseChange[],
  undone: (where: string) => void = () => {},
): Promise<string[]> {
  const rolledBack: string[] = [];
  for (const step of compensations(changes)) {
    const where = `${step.namespace}/${step.release}`;
    if (step.action === 'rollback') {
      await io.helmRollback.executeWithOptions(
        profile.helmWrite(`rollback ${where} to revision ${step.revision}`, DEFAULT_TIMEOUT_SECONDS),
        [step],
      );
    } else {
      await io.helmUninstall.executeWithOptions(
        profile.helmWrite(`uninstall ${where} (installed by this run)`, DEFAULT_TIMEOUT_SECONDS),
        [step],
      );
    }
    rolledBack.push(where);
    undone(where);
  }
  return rolledBack;
}
