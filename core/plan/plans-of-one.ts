/**
 * Plans of one (docs/design/one-workflow.md, decision 1): a standalone ArmadaChart, ArmadaChartGroup
 * or Deployer runs in the one-workflow run as a plan of groups, made here from the input its own
 * workflow takes today (chartWorkflow, groupWorkflow, deployerWorkflow; runs/requests.ts).
 *
 * What the plan does not hold stays with the run's input: `carried` (pause, freeze, the bridge's
 * steering key), a group's retry (`finished`), the mode (`uninstall` shows as `targetState:
 * uninstalled`). A plan of one has no approval gate before its group, and fails without a
 * rollback (`onFailure: stop`), as these objects' runs do; a rollback asked for still is one.
 */

import type { ChartOutcome, ChartRun, DeployerRun, GroupRun, ManifestOutcome } from '../contracts/workflows';
import { deployerRolloutWorkflowId, releaseWorkflowId } from './names';
import { notifyTarget } from './notifications';
import type { ManifestPlan } from './plans';

/** What every plan of one shares: no gate, stop on failure, deploy or uninstall by the mode. */
function planOfOne(
  kind: NonNullable<ManifestPlan['kind']>,
  namespace: string,
  mode: ChartRun['mode'],
  group: ManifestPlan['groups'][number],
): ManifestPlan {
  return {
    kind,
    manifest: group.name,
    namespace,
    onFailure: 'stop',
    targetState: mode === 'uninstall' ? 'uninstalled' : 'deployed',
    groups: [group],
  };
}

/**
 * A standalone ArmadaChart: one group, named as the chart, of the chart alone. Its `windows` are
 * the run's (a chart workflow holds its helm write by them; the run holds before the group, so
 * also before a chart that would stay unchanged) and its `notifications` the run's.
 */
export function chartPlanOfOne(run: ChartRun): ManifestPlan {
  const { chart, release, namespace, spec, dependencies } = run;
  const resourceNamespace = run.resourceNamespace ?? 'default';
  const plan = planOfOne('ArmadaChart', resourceNamespace, run.mode, {
    name: chart,
    sequenced: true,
    charts: [
      {
        chart,
        release,
        namespace,
        workflowId: releaseWorkflowId(namespace, release),
        spec,
        ...(dependencies && { dependencies }),
      },
    ],
  });
  const notify =
    run.mode === 'uninstall' ? undefined : notifyTarget('ArmadaChart', resourceNamespace, chart, spec);
  return { ...plan, ...(notify && { notify }), ...(spec.windows && { windows: spec.windows }) };
}

/**
 * What a standalone chart's run did, as its chart workflow said it (`installed, revision 1`):
 * the chart's outcome in its plan of one's; a run that stopped before the chart finished says
 * its state.
 */
export function chartOfOneOutcome(
  outcome: ManifestOutcome,
): Pick<ChartOutcome, 'action' | 'revision'> | { action: ManifestOutcome['state']; revision: null } {
  return outcome.groups[0]?.outcomes[0] ?? { action: outcome.state, revision: null };
}

/**
 * An ArmadaChartGroup no manifest lists: its one group as planned (planGroup). Its charts' own
 * windows hold each chart's helm write in a group workflow; the run has them not (yet).
 */
export function groupPlanOfOne(run: GroupRun): ManifestPlan {
  return planOfOne('ArmadaChartGroup', run.namespace, run.mode, run.group);
}

/**
 * A Deployer: one group, named as the Deployer, that rolls it out. Its rollout is the run's
 * child (decision 3) under `Deployer:<ns>/<name>/rollout`: the run itself takes the Deployer's
 * workflow ID. The child holds by the Deployer's windows and notifies by its notifications.
 */
export function deployerPlanOfOne(run: DeployerRun): ManifestPlan {
  const { name, namespace, spec } = run;
  return planOfOne('Deployer', namespace, run.mode, {
    name,
    sequenced: true,
    charts: [],
    deployers: [{ name, workflowId: deployerRolloutWorkflowId(namespace, name), spec }],
  });
}
