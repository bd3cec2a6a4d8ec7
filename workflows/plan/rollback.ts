import type { ServiceAccountRef } from '../../kube/client';
import type { GroupOutcome } from '../group';
/**
 * The saga of a manifest run: every release the run changed is recorded with the revision it had
 * before, and a rollback undoes the changes newest first.
 */
export interface ReleaseChange {
  chart: string;
  release: string;
  namespace: string;
  /** The revision before this run touched the release; null when this run installed it. */
  before: number | null;
  /** The ServiceAccount the run wrote it as: undoing it acts as the same one, with no more rights. */
  actAs?: ServiceAccountRef;
}

export type Compensation = (
  | { action: 'rollback'; release: string; namespace: string; revision: number }
  | { action: 'uninstall'; release: string; namespace: string }
) & { actAs?: ServiceAccountRef };

/**
 * What undoing the changes takes, newest change first: a release that existed goes back to its
 * revision from before the run, one the run installed is uninstalled.
 * Example: changes [a (rev 2), b (new), c (rev 5)] → [c back to 5, uninstall b, a back to 2].
 */
export function compensations(changes: readonly ReleaseChange[]): Compensation[] {
  return [...changes].reverse().map(({ release, namespace, before, actAs }) => ({
    ...(before === null
      ? { action: 'uninstall' as const, release, namespace }
      : { action: 'rollback' as const, release, namespace, revision: before }),
    ...(actAs && { actAs }),
  }));
}

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
