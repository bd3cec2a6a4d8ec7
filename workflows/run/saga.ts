import { ApplicationFailure, CancelledFailure } from '@temporalio/workflow';
import { startOver } from '../control';
import { undoChanges } from '../saga';
import { statusWritesSettled } from '../status';
import { NonRetryable } from '../../core/failures';
import { manifestEnding } from '../../core/plan/ending';
import { groupChanges, markUndone } from '../../core/plan/rollback';
import { startsOver } from '../../core/plan/run-modes';
import type { Change } from '../../core/plan/changes';
import type { GroupPlan } from '../../core/plan/plans';
import type { DeployRunInput, DeployRunOutcome } from '../../core/contracts/run';
import type { GroupOutcome } from '../../core/contracts/workflows';
import type { RunParts } from './parts';

/** What walking the groups left, for the run's ending to decide on (see endRun). */
export interface RunWalk {
  /** What each group that ran did, in order. */
  groups: GroupOutcome[];
  /** The saga's record: the changes of the runs this one continued from, then its own, in order. */
  changes: Change[];
  /** Every group ran to its end. */
  complete: boolean;
  /** Why the run failed: a group failed, or an approval gate timed out. */
  failure?: string;
  /** What a timed-out approval gate asked for (`on_timeout`), if one timed out. */
  timedOutInto?: 'stop' | 'rollback';
}

/** A walk that has run no group yet; a re-plan's run starts from the record it was carried. */
export function startWalk(input: DeployRunInput): RunWalk {
  return { groups: [], changes: [...(input.carried?.changes ?? [])], complete: false };
}

/** Records what a group did and, in the saga's record, what it changed. */
export function recordGroup(walk: RunWalk, group: GroupPlan, outcome: GroupOutcome, namespace: string): void {
  walk.groups.push(outcome);
  walk.changes.push(...groupChanges(outcome, group, namespace));
}

/**
 * How the run ends, as a manifest run does (manifestEnding): newer specs start it over, keeping
 * what ran; a failure, a rollback signal, a timed-out gate's `rollback` or a cancellation under
 * `on_failure: rollback` undo every change of the run, newest first. A failure fails the run
 * with the outcome in its details; a cancelled run ends cancelled once it has undone its changes.
 */
export async function endRun(
  input: DeployRunInput,
  walk: RunWalk,
  parts: RunParts,
): Promise<DeployRunOutcome> {
  const { control, told } = parts;
  const failed = walk.failure !== undefined;
  const rollbackRequested = control.stopRequested !== null;
  const { cancelled } = control;
  if (control.replan && startsOver({ replanned: true, failed, rollbackRequested, cancelled })) {
    // A run that continues as new drops the activities it has not seen finish.
    await statusWritesSettled();
    await told.settled();
    return startOver(control.replan, control, walk.changes);
  }
  const ending = manifestEnding({
    uninstall: input.mode === 'uninstall',
    onFailure: input.plan.onFailure,
    failed,
    timedOutInto: walk.timedOutInto,
    rollbackRequested,
    cancelled,
    complete: walk.complete,
  });
  const rolledBack = ending.rollBack ? await rollBack(walk, parts) : [];
  const carried = input.carried?.changes;
  const result: DeployRunOutcome = {
    manifest: input.plan.manifest,
    state: ending.state,
    groups: walk.groups,
    rolledBack,
    ...(carried?.length && { carriedChanges: carried }),
  };
  await told.ended(ending, walk.failure, rolledBack);
  if (walk.failure) throw ApplicationFailure.nonRetryable(walk.failure, NonRetryable.ManifestFailed, result);
  if (cancelled) throw new CancelledFailure(`run cancelled; ${result.state}`);
  return result;
}

/**
 * Says why the run rolls back, then undoes every change of the run, newest first, each row shown
 * put back once it is. The run writes the releases itself: it is their lock
 * (docs/design/one-workflow.md, decision 7).
 */
async function rollBack(walk: RunWalk, { control, shown, told }: RunParts): Promise<string[]> {
  await told.rollingBack(walk.failure ?? rollbackReason(control));
  return undoChanges(walk.changes, (step) => shown.show((p) => markUndone(p.groups, step)));
}

/** Why a run that did not fail rolls back, in the manifest workflow's words: the rollback asked for (or its cancellation). */
function rollbackReason(control: RunParts['control']): string {
  const requested = control.stopRequested?.reason;
  return `rollback requested${requested ? `: ${requested}` : ''}`;
}
