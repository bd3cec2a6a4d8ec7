/**
 * How runs end: whether they undo what they changed, and the state and phase they end in. Pure,
 * so every combination is a row of a table test; the workflows only gather the facts.
 */
import type { ChartOutcome } from '../contracts/workflows';
import type { ChartProgress } from '../progress';
import type { RunPhase } from './status';
import { chartWrites } from './rollback';
import type { ReleaseChange } from './changes';

/** What a manifest run knows once its groups have run (or it stopped running them). */
export interface ManifestFacts {
  uninstall: boolean;
  onFailure: 'stop' | 'rollback';
  /** A group failed, or an approval gate timed out (then `timedOutInto` says what it asked for). */
  failed: boolean;
  timedOutInto?: 'stop' | 'rollback';
  rollbackRequested: boolean;
  cancelled: boolean;
  /** Every group ran to its end. */
  complete: boolean;
}

export interface ManifestEnding {
  rollBack: boolean;
  state: 'deployed' | 'uninstalled' | 'rolled-back' | 'stopped';
  phase: Extract<RunPhase, 'Deployed' | 'Uninstalled' | 'RolledBack' | 'Failed' | 'Stopped'>;
}

/**
 * A manifest run rolls back when asked to (a rollback signal), when an approval that timed out
 * says so, and on a failure or a cancellation when `on_failure: rollback`. An uninstall never
 * rolls back. A failure reads Failed even when rolled back; a cancelled run that undid nothing
 * is Stopped, short of its target.
 */
export function manifestEnding(f: ManifestFacts): ManifestEnding {
  const rollBack =
    !f.uninstall &&
    (f.rollbackRequested ||
      f.timedOutInto === 'rollback' ||
      (f.onFailure === 'rollback' && (f.cancelled || (f.failed && f.timedOutInto === undefined))));
  if (f.failed) return { rollBack, state: rollBack ? 'rolled-back' : 'stopped', phase: 'Failed' };
  if (rollBack) return { rollBack, state: 'rolled-back', phase: 'RolledBack' };
  if (!f.complete) return { rollBack, state: 'stopped', phase: 'Stopped' };
  return f.uninstall
    ? { rollBack, state: 'uninstalled', phase: 'Uninstalled' }
    : { rollBack, state: 'deployed', phase: 'Deployed' };
}

/** What a group run knows once its charts have run (or it stopped starting them). */
export interface GroupFacts {
  uninstall: boolean;
  /** No manifest lists the group: its rollback is its own to do. */
  standalone: boolean;
  rollbackRequested: boolean;
  failed: boolean;
  /** A rollback or a cancellation stopped it before all its charts ran. */
  stopped: boolean;
}

export interface GroupEnding {
  rollBack: boolean;
  state: 'done' | 'failed' | 'stopped';
  phase: Extract<RunPhase, 'Deployed' | 'Uninstalled' | 'RolledBack' | 'Failed' | 'Stopped'>;
}

/**
 * A group that a manifest runs leaves rollbacks to the manifest's saga; a standalone group
 * undoes its own changes when a rollback is asked for (never while uninstalling).
 */
export function groupEnding(f: GroupFacts): GroupEnding {
  if (f.rollbackRequested && f.standalone && !f.uninstall)
    return { rollBack: true, state: 'stopped', phase: 'RolledBack' };
  if (f.failed) return { rollBack: false, state: 'failed', phase: 'Failed' };
  if (f.stopped) return { rollBack: false, state: 'stopped', phase: 'Stopped' };
  return { rollBack: false, state: 'done', phase: f.uninstall ? 'Uninstalled' : 'Deployed' };
}

/**
 * What a standalone chart run's rollback undoes, in the order written, when one was asked for
 * (while helm wrote the release): the writes of the runs it continued from (`carried`, re-plans),
 * then its own install or upgrade. A run that wrote nothing, and continued from none that did,
 * has nothing to undo.
 */
export function chartRollback(
  outcome: ChartOutcome,
  rollbackRequested: boolean,
  carried: readonly ReleaseChange[] = [],
): ReleaseChange[] {
  return rollbackRequested ? [...carried, ...chartWrites(outcome)] : [];
}

/** How a finished chart run reads in its ArmadaChart's status: phase, message, Helm revisions. */
export function chartOutcomeStatus(outcome: ChartOutcome): {
  phase: Extract<RunPhase, 'Deployed' | 'Uninstalled' | 'RolledBack'>;
  message: string;
  helm: { revision?: number; previous_revision?: number };
} {
  return {
    phase:
      outcome.action === 'uninstalled'
        ? 'Uninstalled'
        : outcome.action === 'rolled-back'
          ? 'RolledBack'
          : 'Deployed',
    message: `${outcome.namespace}/${outcome.release} ${outcome.action}`,
    helm: { revision: outcome.revision ?? undefined, previous_revision: outcome.before ?? undefined },
  };
}

/** How a finished chart run reads in a progress table. */
export function chartState(outcome: ChartOutcome): ChartProgress['state'] {
  switch (outcome.action) {
    case 'installed':
    case 'upgraded':
      return 'deployed';
    case 'unchanged':
      return 'unchanged';
    case 'skipped':
      return 'skipped';
    case 'uninstalled':
      return 'uninstalled';
    case 'rolled-back':
      return 'rolled-back';
  }
}

/** What a group's run did, for its final status. */
export interface GroupTally {
  phase: GroupEnding['phase'];
  uninstall: boolean;
  /** Its charts: how many it lists, how many finished in this run and in the run a retry takes up. */
  charts: number;
  done: number;
  finishedBefore: number;
  /** Its Deployers, when it lists any: how many rolled out of how many. */
  deployers?: { rolledOut: number; total: number };
  failed: readonly string[];
}

/** A group's final status message: how many charts (and Deployers) it got through, and why not all. */
export function groupEndMessage(t: GroupTally): string {
  const retried = t.finishedBefore ? ` (${t.finishedBefore} finished before this retry)` : '';
  const rolledOut = t.deployers && `, ${t.deployers.rolledOut}/${t.deployers.total} Deployers rolled out`;
  const summary = `${t.done + t.finishedBefore}/${t.charts} charts ${t.uninstall ? 'uninstalled' : 'deployed'}${rolledOut ?? ''}${retried}`;
  const detail =
    t.phase === 'Failed'
      ? `; failed: ${t.failed.join(', ')}`
      : t.phase === 'Stopped'
        ? '; stopped by a rollback or cancellation'
        : '';
  return `${summary}${detail}`;
}
