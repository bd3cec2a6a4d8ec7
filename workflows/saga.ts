import { io, profile } from './activity-proxies';
import { DEFAULT_TIMEOUT_SECONDS } from './plan/helm-requests';
import type { GroupOutcome } from './group';
import { compensations, type ReleaseChange } from './plan/rollback';

/**
 * The saga's record of what one group run changed, in the order it changed it: every release a
 * chart installed or upgraded, including releases written by charts that failed afterwards
 * (wait, test).
 */
export function changesOf(outcome: GroupOutcome): ReleaseChange[] {
  const changes: ReleaseChange[] = [];
  for (const chart of outcome.outcomes) {
    if (chart.action === 'installed' || chart.action === 'upgraded') {
      const { release, namespace, before, actAs } = chart;
      changes.push({ chart: chart.chart, release, namespace, before, ...(actAs && { actAs }) });
    }
  }
  for (const failed of outcome.failed) if (failed.written) changes.push(failed.written);
  return changes;
}

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
