/**
 * What a chart run does to a Helm release, decided from what Helm reports and what the run has
 * checked: observe → classify → act, as flux's helm-controller does (its `untested` state
 * included). No I/O here; the chart workflow loops over these.
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
  /**
   * Whether armada-temporal wrote the release: one of its last 20 revisions records an
   * armada-digest, or it carries armada's owner label (which a failed revision keeps, where helm
   * replaces the digest with its error). False for a release someone installed by hand, which a
   * chart takes over only with `adopt`. Absent from runs recorded before it was observed: read
   * as true.
   */
  createdByArmada?: boolean;
}

export type ReleaseState =
  | { state: 'absent' }
  | { state: 'pending'; revision: number; lastDeployedRevision?: number }
  | { state: 'failed'; revision: number }
  | { state: 'out-of-sync'; revision: number }
  /** Written by this run; its resources are not yet known to be ready (the Armada wait). */
  | { state: 'unready'; revision: number }
  /** Written by this run and ready; `helm test` is enabled and has not passed yet. */
  | { state: 'untested'; revision: number }
  | { state: 'in-sync'; revision: number };

/** The revision this run wrote and the checks it still owes: the Armada wait, then `helm test`. */
export interface Unverified {
  revision: number;
  wait: boolean;
  test: boolean;
}

/** Helm statuses of an operation that never finished (its helm process died). */
const PENDING = new Set(['pending-install', 'pending-upgrade', 'pending-rollback']);

/**
 * Reduces Helm's view of a release to the states the planner knows, against the wanted digest. A
 * release that runs it is in sync once the checks this run owes its revision (`unverified`) pass.
 */
export function classifyRelease(
  observed: ObservedRelease | null,
  wantedDigest: string,
  unverified?: Unverified,
): ReleaseState {
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
    const { revision } = observed;
    if (unverified?.revision === revision && unverified.wait) return { state: 'unready', revision };
    if (unverified?.revision === revision && unverified.test) return { state: 'untested', revision };
    return { state: 'in-sync', revision };
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
  /** Wait until the written revision's resources are ready (the chart's `wait`). */
  | { action: 'wait' }
  /** Run the chart's tests against the written revision (`helm test`). */
  | { action: 'test' }
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
    case 'unready':
      return { action: 'wait' };
    case 'untested':
      return { action: 'test' };
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
