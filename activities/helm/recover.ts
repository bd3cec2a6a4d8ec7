import { classifyRelease } from '../../workflows/plan/release';
import { currentActivity } from '../process';
import { runHelm } from './exec';
import type { ReleaseRef } from './release';
import { helmObserve } from './status';

/**
 * Before a retried attempt of a Helm write: when the attempt before it died with its helm
 * process (a killed worker, a killed helm), the release is left `pending-install`,
 * `pending-upgrade` or `pending-rollback`, and helm refuses every further operation on it
 * ("another operation is in progress"). Put it back the way a new chart run would: roll back to
 * the last revision that ran (a new revision), or — a first install that never ran — uninstall
 * it. The retry then does its work from there. A first attempt changes nothing: a release it
 * finds pending belongs to whatever run left it so, which the workflow's observe step handles.
 *
 * The release's workflow ID is its lock, so a pending release on a retry is this run's own
 * leftover, never another run's operation in flight.
 */
export async function recoverInterruptedAttempt(ref: ReleaseRef, timeoutSeconds = 300): Promise<void> {
  const activity = currentActivity();
  if (!activity || activity.info.attempt <= 1) return;
  const state = classifyRelease(await helmObserve(ref), '');
  if (state.state !== 'pending') return;
  const wait = ['--namespace', ref.namespace, '--wait=watcher', '--timeout', `${timeoutSeconds}s`];
  activity.log.warn('release left pending by an interrupted attempt: recovering it', {
    release: ref.release,
    namespace: ref.namespace,
    revision: state.revision,
    rollbackTo: state.lastDeployedRevision,
  });
  if (state.lastDeployedRevision)
    await runHelm(['rollback', ref.release, String(state.lastDeployedRevision), ...wait]);
  else await runHelm(['uninstall', ref.release, ...wait]);
}
