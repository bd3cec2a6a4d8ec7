import { setHandler, upsertSearchAttributes } from '@temporalio/workflow';
import { io, profile } from './activity-proxies';
import { DEFAULT_TIMEOUT_SECONDS } from './plan/helm-requests';
import { describeDrift, type DriftOutcome, type DriftRun } from './plan/drift';
import { runServiceAccount } from './plan/names';
import { ArmadaPhase } from './search-attributes';
import { progressQuery, type ChartProgress } from './messages';

/**
 * One drift of a release, started by the bridge: confirm which reported objects belong to the
 * release's current revision, then by the chart's policy re-apply that revision (`helm rollback`
 * to it, taking back fields edited by hand) or only report it. An Event on the ArmadaChart
 * either way. A release that is not `deployed` (an upgrade failed, or one is under way) is only
 * reported: re-applying it is the next deploy's decision.
 *
 * It runs under the release's lock (its workflow ID is the release's, as a deploy's), so no
 * deploy, undo or uninstall writes the release between the revision it reads and the one it
 * re-applies; a deploy that finds the lock held by a repair waits for it (group.ts startChart,
 * the bridge for a chart that stands alone).
 */
export async function driftWorkflow(run: DriftRun): Promise<DriftOutcome> {
  const ref = {
    release: run.release,
    namespace: run.namespace,
    actAs: runServiceAccount(run.chart.serviceAccount, run.chart.namespace),
    // A repair re-applies a revision: its namespace and ServiceAccount are checked by the worker.
    policy: {
      kind: 'ArmadaChart',
      namespace: run.chart.namespace,
      name: run.chart.name,
      release: run.release,
      target: { field: 'spec.namespace', namespace: run.namespace },
      serviceAccount: run.chart.serviceAccount,
    },
  };
  const chart = { kind: 'ArmadaChart' as const, namespace: run.chart.namespace, name: run.chart.name };
  const event = (type: 'Normal' | 'Warning', reason: string, message: string) =>
    io.recordEvent.executeWithOptions(profile.quick(`event ${reason} on ArmadaChart ${chart.name}`), [
      chart,
      run.chart.uid,
      { type, reason, message },
    ]);
  // What `armadactl status` of the chart shows while (and after) the repair holds its release.
  const row: ChartProgress = {
    chart: run.chart.name,
    release: run.release,
    namespace: run.namespace,
    state: 'deploying',
  };
  let phase = 'DriftCheck';
  setHandler(progressQuery, () => ({
    phase,
    groups: [
      {
        name: run.chart.name,
        sequenced: true,
        state: phase === 'DriftCheck' ? 'running' : 'done',
        charts: [row],
      },
    ],
  }));
  const finish = (outcome: DriftOutcome, ended: string) => {
    phase = ended;
    Object.assign(row, {
      state: outcome.result === 'repaired' ? 'deployed' : 'unchanged',
      revision: outcome.repairedAs ?? outcome.revision,
    });
    upsertSearchAttributes([{ key: ArmadaPhase, value: ended }]);
    return outcome;
  };

  const found = await io.helmCheckDrift.executeWithOptions(
    profile.long(`which of ${run.objects.length} changed objects are in ${run.namespace}/${run.release}`),
    [{ ...ref, objects: run.objects }],
  );
  if (!found || found.drifted.length === 0) return finish({ result: 'none', objects: [] }, 'NoDrift');

  const what = `${describeDrift(found.drifted)} (release ${run.namespace}/${run.release}, revision ${found.revision})`;
  const deployed = found.status === 'deployed';
  if (run.policy === 'report' || !deployed) {
    const why = deployed ? 'drift: report' : `the release is ${found.status}`;
    await event('Warning', 'DriftDetected', `${what}; not repaired (${why})`);
    return finish({ result: 'reported', revision: found.revision, objects: found.drifted }, 'DriftReported');
  }
  await event('Warning', 'DriftDetected', `${what}; re-applying revision ${found.revision}`);
  await io.helmRollback.executeWithOptions(
    profile.helmWrite(
      `re-apply ${run.namespace}/${run.release} revision ${found.revision}`,
      DEFAULT_TIMEOUT_SECONDS,
    ),
    [{ ...ref, revision: found.revision, forceConflicts: true }],
  );
  const repairedAs = found.revision + 1;
  await event(
    'Normal',
    'DriftRepaired',
    `re-applied revision ${found.revision} of ${run.namespace}/${run.release} as revision ${repairedAs}`,
  );
  return finish(
    { result: 'repaired', revision: found.revision, repairedAs, objects: found.drifted },
    'DriftRepaired',
  );
}
