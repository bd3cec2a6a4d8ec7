import { setHandler, upsertSearchAttributes } from '@temporalio/workflow';
import { io, profile } from './activity-proxies';
import { DEFAULT_TIMEOUT_SECONDS } from '../core/plan/helm-requests';
import { describeDrift, type DriftOutcome, type DriftRun } from '../core/plan/drift';
import { runServiceAccount } from '../core/plan/names';
import { ArmadaPhase } from './search-attributes';
import { progressQuery } from './messages';
import type { ChartProgress } from '../core/progress';
import type { ReleaseRef } from '../core/contracts/helm';

/**
 * One drift of a release, started by the bridge: confirm which reported objects belong to the
 * release's current revision, then by the chart's policy re-apply that revision (`helm rollback`
 * to it, taking back fields edited by hand) or only report it. An Event on the ArmadaChart
 * either way. A release that is not `deployed` (an upgrade failed, or one is under way) is only
 * reported: re-applying it is the next deploy's decision.
 *
 * It runs under the release's lock, the workflow ID of the object that owns the release (its
 * manifest's, its group's, or the chart's own: core/plan/release-lock.ts), so no deploy, undo or
 * uninstall writes the release between the revision it reads and the one it re-applies; a deploy
 * of the owner that finds a repair holding its ID waits for it (the bridge follows the repair and
 * starts the deploy when it ends).
 */
export async function driftWorkflow(run: DriftRun): Promise<DriftOutcome> {
  const ref = releaseRefOf(run);
  const shown = new DriftProgress(run);
  const found = await io.helmCheckDrift.executeWithOptions(
    profile.long(`which of ${run.objects.length} changed objects are in ${run.namespace}/${run.release}`),
    [{ ...ref, objects: run.objects }],
  );
  if (!found || found.drifted.length === 0) return shown.finish({ result: 'none', objects: [] }, 'NoDrift');

  const what = `${describeDrift(found.drifted)} (release ${run.namespace}/${run.release}, revision ${found.revision})`;
  const deployed = found.status === 'deployed';
  if (run.policy === 'report' || !deployed) {
    const why = deployed ? 'drift: report' : `the release is ${found.status}`;
    await chartEvent(run, 'Warning', 'DriftDetected', `${what}; not repaired (${why})`);
    return shown.finish(
      { result: 'reported', revision: found.revision, objects: found.drifted },
      'DriftReported',
    );
  }
  await chartEvent(run, 'Warning', 'DriftDetected', `${what}; re-applying revision ${found.revision}`);
  return shown.finish(await reapply(run, ref, found), 'DriftRepaired');
}

/** The release a repair writes, as the chart's ServiceAccount; the worker checks its namespace and ServiceAccount. */
function releaseRefOf(run: DriftRun): ReleaseRef {
  return {
    release: run.release,
    namespace: run.namespace,
    actAs: runServiceAccount(run.chart.serviceAccount, run.chart.namespace),
    policy: {
      kind: 'ArmadaChart',
      namespace: run.chart.namespace,
      name: run.chart.name,
      release: run.release,
      target: { field: 'spec.namespace', namespace: run.namespace },
      serviceAccount: run.chart.serviceAccount,
    },
  };
}

/** Re-applies the release's current revision (`helm rollback` to it) and says so on the ArmadaChart. */
async function reapply(
  run: DriftRun,
  ref: ReleaseRef,
  found: { revision: number; drifted: DriftOutcome['objects'] },
): Promise<DriftOutcome> {
  await io.helmRollback.executeWithOptions(
    profile.helmWrite(
      `re-apply ${run.namespace}/${run.release} revision ${found.revision}`,
      DEFAULT_TIMEOUT_SECONDS,
    ),
    [{ ...ref, revision: found.revision, forceConflicts: true }],
  );
  const repairedAs = found.revision + 1;
  await chartEvent(
    run,
    'Normal',
    'DriftRepaired',
    `re-applied revision ${found.revision} of ${run.namespace}/${run.release} as revision ${repairedAs}`,
  );
  return { result: 'repaired', revision: found.revision, repairedAs, objects: found.drifted };
}

/** An Event on the drifted release's ArmadaChart. */
async function chartEvent(
  run: DriftRun,
  type: 'Normal' | 'Warning',
  reason: string,
  message: string,
): Promise<void> {
  const chart = { kind: 'ArmadaChart' as const, namespace: run.chart.namespace, name: run.chart.name };
  await io.recordEvent.executeWithOptions(profile.quick(`event ${reason} on ArmadaChart ${chart.name}`), [
    chart,
    run.chart.uid,
    { type, reason, message },
  ]);
}

/** What `armadactl status` of the chart shows while (and after) the repair holds its release. */
class DriftProgress {
  private phase = 'DriftCheck';
  private readonly row: ChartProgress;

  constructor(run: DriftRun) {
    this.row = { chart: run.chart.name, release: run.release, namespace: run.namespace, state: 'deploying' };
    setHandler(progressQuery, () => ({
      phase: this.phase,
      groups: [
        {
          name: run.chart.name,
          sequenced: true,
          state: this.phase === 'DriftCheck' ? 'running' : 'done',
          charts: [this.row],
        },
      ],
    }));
  }

  /** The run's end: its phase, shown and upserted (ArmadaPhase). */
  finish(outcome: DriftOutcome, ended: string): DriftOutcome {
    this.phase = ended;
    Object.assign(this.row, {
      state: outcome.result === 'repaired' ? 'deployed' : 'unchanged',
      revision: outcome.repairedAs ?? outcome.revision,
    });
    upsertSearchAttributes([{ key: ArmadaPhase, value: ended }]);
    return outcome;
  }
}
