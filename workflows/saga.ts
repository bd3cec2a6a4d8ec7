import { ApplicationFailure } from '@temporalio/workflow';
import { io, profile } from './activity-proxies';
import { NonRetryable } from './failures';
import { startDeployer } from './group-deployers';
import { DEFAULT_TIMEOUT_SECONDS } from './plan/helm-requests';
import { compensations, undoneName, type Change, type Compensation } from './plan/rollback';
import { report } from './status';

/**
 * Undoes `changes`, newest first (see compensations): a release goes back to its revision from
 * before the run (helm rollback) or is uninstalled; a Deployer goes back to the version it
 * replaced or is removed. Calls `undone` with each step once it is done; returns what each put
 * back (undoneName), in that order.
 */
export async function undoChanges(
  changes: readonly Change[],
  undone: (step: Compensation) => void = () => {},
): Promise<string[]> {
  const rolledBack: string[] = [];
  for (const step of compensations(changes)) {
    const where = undoneName(step);
    if (step.action === 'rollback') {
      await io.helmRollback.executeWithOptions(
        profile.helmWrite(`rollback ${where} to revision ${step.revision}`, DEFAULT_TIMEOUT_SECONDS),
        [step],
      );
    } else if (step.action === 'uninstall') {
      await io.helmUninstall.executeWithOptions(
        profile.helmWrite(`uninstall ${where} (installed by this run)`, DEFAULT_TIMEOUT_SECONDS),
        [step],
      );
    } else await undoDeployer(step, where);
    rolledBack.push(where);
    undone(step);
  }
  return rolledBack;
}

/**
 * A Deployer's undo, as its child run under its own workflow ID (the lock: refused while another
 * run drives it); the Deployer's status then reads RolledBack.
 */
async function undoDeployer(
  step: Extract<Compensation, { deployer: unknown }>,
  where: string,
): Promise<void> {
  const { deployer, namespace } = step;
  const remove = step.action === 'remove-deployer';
  const child = await startDeployer(deployer, namespace, null, undefined, remove ? 'uninstall' : 'deploy');
  const outcome = await child.result();
  if (outcome.result === 'rolled-back')
    throw ApplicationFailure.nonRetryable(
      `${where} failed: ${outcome.reason ?? 'its run rolled back'}`,
      NonRetryable.CanaryRolledBack,
    );
  await report(
    'Deployer',
    namespace,
    deployer.name,
    'RolledBack',
    remove
      ? `every version removed: the run rolled back that first deployed it`
      : `back to ${step.version}: the run rolled back that had replaced it`,
    // status.phase (kubectl get dpl's Phase column) too: else it kept the undo run's Completed.
    // A removed Deployer runs no version: null clears current_version (a merge patch).
    { phase: 'RolledBack', current_version: remove ? null : step.version },
  );
}
