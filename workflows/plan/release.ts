/**
 * What a chart run does to a Helm release, decided from what Helm reports: observe → classify →
 * act, as flux's helm-controller does. No I/O here; the chart workflow loops over these.
 */

/** The release as the status activity observed it (null: no such release). */
export interface ObservedRelease {
  revision: number;
  status: string;
  /** The digest of chart and values recorded when armada last wrote this release. */
  digest?: string;
  /** The newest revision whose status is `deployed` or `superseded`, if any. */
  lastDeployedRevision?: number;
  /** When helm last wrote the current revision (RFC 3339), and how it described it. */
  updated?: string;
  description?: string;
}

export type ReleaseState =
  | { state: 'absent' }
  | { state: 'pending'; revision: number; lastDeployedRevision?: number }
  | { state: 'failed'; revision: number }
  | { state: 'out-of-sync'; revision: number }
  | { state: 'in-sync'; revision: number };

/** Helm statuses of an operation that never finished (its helm process died). */
const PENDING = new Set(['pending-install', 'pending-upgrade', 'pending-rollback']);

/** Reduces Helm's view of a release to the states the planner knows, against the wanted digest. */
export function classifyRelease(observed: ObservedRelease | null, wantedDigest: string): ReleaseState {
  if (!observed || observed.status === 'uninstalled') return { state: 'absent' };
  if (PENDING.has(observed.status)) {
    return {
      state: 'pending',
      revision: observed.revision,
      lastDeployedRevision: observed.lastDeployedRevision,
    };
  }
  if (observed.status === 'failed') return { state: 'failed', revision: observed.revision };
  if (observed.status === 'deployed' && observed.digest === wantedDigest) {
    return { state: 'in-sync', revision: observed.revision };
  }
  return { state: 'out-of-sync', revision: observed.revision };
}

/**
 * The revision a rollback of this run should go back to: the one that ran before the run. A
 * release left pending by a dead helm goes back to its last deployed revision (the pending one
 * never ran); one that did not exist, or was uninstalled, has none (null: uninstall it).
 */
export function revisionBefore(observed: ObservedRelease | null): number | null {
  if (!observed || observed.status === 'uninstalled') return null;
  if (PENDING.has(observed.status)) return observed.lastDeployedRevision ?? null;
  return observed.revision;
}

export type ReleaseAction =
  /** Nothing to do: the release already runs this chart with these values. */
  | { action: 'none' }
  | { action: 'install' }
  | { action: 'upgrade' }
  /** A helm process died mid-operation: go back to the last deployed revision. */
  | { action: 'rollback'; revision: number }
  /** It died during the first install: nothing deployed to go back to. */
  | { action: 'uninstall' }
  /** `protected`: a failed release is left alone; `stop` fails the chart, `skip` goes on. */
  | { action: 'protected'; then: 'stop' | 'skip' };

/** The next action for a release state; `isProtected` and `continueProcessing` are the spec's. */
export function nextAction(
  state: ReleaseState,
  protection: { isProtected: boolean; continueProcessing: boolean },
): ReleaseAction {
  switch (state.state) {
    case 'absent':
      return { action: 'install' };
    case 'in-sync':
      return { action: 'none' };
    case 'out-of-sync':
      return { action: 'upgrade' };
    case 'pending':
      return state.lastDeployedRevision
        ? { action: 'rollback', revision: state.lastDeployedRevision }
        : { action: 'uninstall' };
    case 'failed':
      if (protection.isProtected)
        return { action: 'protected', then: protection.continueProcessing ? 'skip' : 'stop' };
      return { action: 'upgrade' };
  }
}
