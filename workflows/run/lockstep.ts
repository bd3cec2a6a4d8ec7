import { LockstepCoordinator } from '../lockstep';
import type { GroupPlan } from '../../core/plan/plans';
import type { RunParts } from './parts';

/*
 * Lockstep canaries in the one-workflow run: the run coordinates a group's set itself, as a group
 * workflow does (LockstepCoordinator), from the group's start to its end. Its members' canaries
 * (charts' canary children, Deployers' rollouts) report to the run and wait for its go; the run's
 * pause, resume, rollback, approve and promote reach them through the set, and its table shows
 * below the run's group × chart table.
 */

/** The set of a group that steps its canaries together; none when the group does not. */
export function openLockstep(group: GroupPlan, parts: RunParts): LockstepCoordinator | undefined {
  if (!group.lockstep) return undefined;
  const { control, canaries, shown, namespace } = parts;
  const set = new LockstepCoordinator(group, namespace, control, (table) => shown.showSet(table));
  canaries.useSet(set.forward);
  return set;
}

/** The group ended: the run's signals, approvals and details are no longer the set's. */
export function closeLockstep(set: LockstepCoordinator | undefined, { canaries, shown }: RunParts): void {
  if (!set) return;
  set.close();
  canaries.useSet(undefined);
  shown.showSet(undefined);
}
