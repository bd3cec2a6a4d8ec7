import { setHandler, upsertSearchAttributes } from '@temporalio/workflow';
import { deployerProgress } from './group-deployers';
import { progressQuery } from './messages';
import type { ChartProgress, GroupProgress } from '../core/progress';
import { isReleaseChange, undoes, undoneState } from '../core/plan/rollback';
import type { Change } from '../core/plan/changes';
import { undoChanges } from './saga';
import { ArmadaPhase } from './search-attributes';
import { report, statusWriteFailures } from './status';
import type { UndoRun, UndoOutcome } from '../core/contracts/workflows';

/**
 * Undoes a finished run, as a run of its own with its own history: every release it changed goes
 * back to the revision it had before that run (helm rollback; one that run installed is
 * uninstalled), newest change first, each as the ServiceAccount that wrote it. It runs under the
 * object's workflow ID, so no deploy of the object runs beside it. The object then reads
 * RolledBack (not at its spec) until its spec changes or it is applied again.
 */
export async function undoWorkflow(run: UndoRun): Promise<UndoOutcome> {
  const { kind, namespace, name, changes } = run;
  const undoneRun = run.undoes.runId;
  const what = `undo of run ${undoneRun}${run.by ? ` asked by ${run.by}` : ''}`;
  // `armadactl status`, `get` and the UI ask every run of an object's workflow ID for its progress.
  let phase = 'RollingBack';
  const rows = undoRows(changes);
  const undo: GroupProgress = {
    name: `undo of run ${undoneRun}`,
    sequenced: true,
    state: 'running',
    charts: rows,
  };
  setHandler(progressQuery, () => ({ phase, groups: [undo], ...statusWriteFailures() }));
  upsertSearchAttributes([{ key: ArmadaPhase, value: 'RollingBack' }]);
  await report(kind, namespace, name, 'RollingBack', `${what}: ${changes.length} releases to put back`);
  // The undo runs under the ID of the object that owns every release it writes (the lock,
  // core/plan/release-lock.ts): it writes them itself, as the object's deploy runs do.
  const rolledBack = await undoChanges(changes, (step) => {
    for (const row of rows) if (undoes(step, row)) row.state = undoneState(step);
  }).catch((err: unknown) => {
    [phase, undo.state] = ['Failed', 'failed'];
    throw err;
  });
  // A Deployer's status is written by its own undo (workflows/saga.ts).
  const releases = changes.filter(isReleaseChange);
  if (kind !== 'ArmadaChart')
    for (const change of releases)
      await report(
        'ArmadaChart',
        namespace,
        change.chart,
        'RolledBack',
        change.before === null
          ? `${change.release} uninstalled: run ${undoneRun} installed it (${what})`
          : `${change.release} back to revision ${change.before} (${what})`,
      );
  upsertSearchAttributes([{ key: ArmadaPhase, value: 'RolledBack' }]);
  [phase, undo.state] = ['RolledBack', 'done'];
  await report(kind, namespace, name, 'RolledBack', `${what}: ${rolledBack.join(', ')}`);
  return { undid: undoneRun, rolledBack };
}

/** What the undo puts back as progress rows, in the order it does (newest change first), each pending. */
function undoRows(changes: readonly Change[]): ChartProgress[] {
  return [...changes]
    .reverse()
    .map((change) =>
      isReleaseChange(change)
        ? { chart: change.chart, release: change.release, namespace: change.namespace, state: 'pending' }
        : deployerProgress(change.deployer),
    );
}
