import { ApplicationFailure } from '@temporalio/common';
import { DOC_PAGES, pointingTo } from '../../core/doc-pages';
import { classifyRelease, type ObservedRelease } from '../../core/plan/release';
import { currentActivity } from '../process';
import { HELM_COMMAND_FAILED } from './errors';
import { runHelm } from './exec';
import type { ReleaseRef } from '../../core/contracts/helm';
import { helmObserve } from './status';

/** Beyond an operation's own timeout, how long its helm process may still take to give up. */
const GRACE_SECONDS = 10;

/** What a retried Helm write does after looking at the release. */
export type RetryPlan = { proceed: true } | { proceed: false; observed: ObservedRelease };

/** Why a retried attempt waits on a release an interrupted helm left pending; it names the page on stuck releases. */
export function stillPendingMessage(
  ref: Pick<ReleaseRef, 'namespace' | 'release'>,
  observed: Pick<ObservedRelease, 'status' | 'revision'>,
  timeoutSeconds: number,
): string {
  return pointingTo(
    `release ${ref.namespace}/${ref.release} is ${observed.status} (revision ${observed.revision}): an interrupted helm may still be at work; looking again when its ${timeoutSeconds}s are up`,
    DOC_PAGES.troubleshooting,
  );
}

/**
 * Before a retried attempt of a Helm write (a first attempt goes ahead: a release it finds
 * pending is left by an earlier run, which the workflow's observe step handles).
 *
 * The attempt before may have died without its helm process: a killed worker leaves helm
 * running on as an orphan, and it finishes the operation. So:
 * - `done(observed)` true (the release already is what this attempt was to make it): the
 *   interrupted attempt finished its work; nothing more is written, so a crash costs no
 *   revision;
 * - pending (`pending-install`, `-upgrade`, `-rollback`) for less than the operation's timeout
 *   (plus a grace): that helm may still be at work; the attempt fails, to be retried when the
 *   time is up, rather than racing it;
 * - pending for longer: its helm is gone (a killed helm, a lost node). Helm refuses every
 *   operation on a pending release, so put it back the way a new chart run would — roll back
 *   to the last revision that ran (a new revision), or uninstall a first install that never
 *   ran — and go ahead.
 * The release's workflow ID is its lock, so a pending release on a retry is this run's own.
 */
export async function prepareRetriedWrite(
  ref: ReleaseRef,
  timeoutSeconds: number,
  done: (observed: ObservedRelease) => boolean,
): Promise<RetryPlan> {
  const activity = currentActivity();
  if (!activity || activity.info.attempt <= 1) return { proceed: true };
  const observed = await helmObserve(ref);
  if (observed && done(observed)) return { proceed: false, observed };
  const state = classifyRelease(observed, '');
  if (!observed || state.state !== 'pending') return { proceed: true };
  const deadline = Date.parse(observed.updated ?? '') + (timeoutSeconds + GRACE_SECONDS) * 1000;
  if (Date.now() < deadline) {
    throw ApplicationFailure.create({
      message: stillPendingMessage(ref, observed, timeoutSeconds),
      type: HELM_COMMAND_FAILED,
      nextRetryDelay: deadline - Date.now(),
    });
  }
  activity.log.warn('release left pending by an interrupted attempt: recovering it', {
    release: ref.release,
    namespace: ref.namespace,
    revision: state.revision,
    rollbackTo: state.lastDeployedRevision,
  });
  const wait = ['--namespace', ref.namespace, '--wait=watcher', '--timeout', `${timeoutSeconds}s`];
  if (state.lastDeployedRevision)
    await runHelm(['rollback', ref.release, String(state.lastDeployedRevision), ...wait], ref.actAs);
  else await runHelm(['uninstall', ref.release, ...wait], ref.actAs);
  return { proceed: true };
}
