import { ApplicationFailure, startChild } from '@temporalio/workflow';
import { io, profile } from './activity-proxies';
import { NonRetryable } from '../core/failures';
import { lockedChild, startDeployer, underLock } from './group-deployers';
import { DEFAULT_TIMEOUT_SECONDS } from '../core/plan/helm-requests';
import { releaseWorkflowId } from '../core/plan/names';
import { compensations, undoneName, type Compensation } from '../core/plan/rollback';
import type { Change } from '../core/plan/changes';
import { report } from './status';
import { deployerOperatorPhase } from '../api/states';

/** A compensation that writes a Helm release (helm rollback or uninstall). */
type ReleaseStep = Extract<Compensation, { release: string }>;

/**
 * Undoes `changes`, newest first (see compensations): a release goes back to its revision from
 * before the run (helm rollback) or is uninstalled; a Deployer goes back to the version it
 * replaced or is removed. Calls `undone` with each step once it is done; returns what each put
 * back (undoneName), in that order.
 *
 * `takeLocks`: each release step runs as a child under the release's chart workflow ID
 * (releaseUndoWorkflow), the lock on the tree design, whose manifest and group workflows roll back
 * so. A run that holds the release's lock itself (deployRun, an undo: the owner's ID) writes it
 * directly.
 */
export async function undoChanges(
  changes: readonly Change[],
  undone: (step: Compensation) => void = () => {},
  { takeLocks = false }: { takeLocks?: boolean } = {},
): Promise<string[]> {
  const rolledBack: string[] = [];
  for (const step of compensations(changes)) {
    const where = undoneName(step);
    if ('deployer' in step) await undoDeployer(step, where);
    else if (takeLocks) await undoUnderLock(step, where);
    else await writeRelease(step);
    rolledBack.push(where);
    undone(step);
  }
  return rolledBack;
}

/** One release step of a rollback: helm rollback to the revision from before, or helm uninstall. */
async function writeRelease(step: ReleaseStep): Promise<void> {
  const where = undoneName(step);
  if (step.action === 'rollback')
    await io.helmRollback.executeWithOptions(
      profile.helmWrite(`rollback ${where} to revision ${step.revision}`, DEFAULT_TIMEOUT_SECONDS),
      [step],
    );
  else
    await io.helmUninstall.executeWithOptions(
      profile.helmWrite(`uninstall ${where} (installed by this run)`, DEFAULT_TIMEOUT_SECONDS),
      [step],
    );
}

/** A release step as a child run under the release's lock (see undoChanges). */
async function undoUnderLock(step: ReleaseStep, where: string): Promise<void> {
  const workflowId = releaseWorkflowId(step.namespace, step.release);
  const start = () =>
    startChild(releaseUndoWorkflow, {
      workflowId,
      args: [step],
      staticSummary:
        step.action === 'rollback' ? `rollback ${where} to revision ${step.revision}` : `uninstall ${where}`,
      ...lockedChild(),
    });
  const child = await underLock(start, workflowId, `release ${where}`, true);
  await child.result();
}

/** One step of a rollback, run under the release's lock by the run that rolls back (undoChanges). */
export async function releaseUndoWorkflow(step: ReleaseStep): Promise<void> {
  await writeRelease(step);
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
  const child = await startDeployer(deployer, namespace, {}, undefined, remove ? 'uninstall' : 'deploy');
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
    // status.phase (the Deployer operator's word) too: else it kept the undo run's Completed.
    // A removed Deployer runs no version: null clears current_version (a merge patch).
    { phase: deployerOperatorPhase('RolledBack'), current_version: remove ? null : step.version },
  );
}
