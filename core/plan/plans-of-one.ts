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

import type { Replan } from '../control';
import type { DeployRunInput } from '../contracts/run';
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
 * A standalone ArmadaChart: one group, named as the chart, of the chart alone. Its
 * `notifications` are the run's. Its `windows` are not: they hold its helm write (the release
 * driver's safe point), as in any plan, so a chart that stays unchanged does not wait for them.
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
  return { ...plan, ...(notify && { notify }) };
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

/** An ArmadaChartGroup no manifest lists: its one group as planned (planGroup). */
export function groupPlanOfOne(run: GroupRun): ManifestPlan {
  return planOfOne('ArmadaChartGroup', run.namespace, run.mode, run.group);
}

/**
 * A Deployer: one group, named as the Deployer, that rolls it out (or, to uninstall, removes its
 * Deployments: `standalone`). Its rollout is the run's child (decision 3) under
 * `Deployer:<ns>/<name>/rollout`: the run itself takes the Deployer's workflow ID. The child holds
 * by the Deployer's windows and notifies by its notifications; an undo's (`undoes`) ends RolledBack.
 */
export function deployerPlanOfOne(run: DeployerRun): ManifestPlan {
  const { name, namespace, spec, undoes } = run;
  const workflowId = deployerRolloutWorkflowId(namespace, name);
  return planOfOne('Deployer', namespace, run.mode, {
    name,
    sequenced: true,
    charts: [],
    deployers: [{ name, workflowId, spec, standalone: true, ...(undoes && { undoes }) }],
  });
}

/**
 * Which of its plan's objects a run writes the status of, beside its charts (their own words):
 * a manifest's run, the manifest and its groups; a standalone group's, the group alone, in a
 * standalone group's words (it rolls itself back: `standaloneGroup`); a chart's or Deployer's,
 * neither: its plan's manifest and group are only named as the object, whose status its chart
 * row or its rollout child writes. The run's `ArmadaPhase` is kept either way.
 */
export function reportedObjects(kind: ManifestPlan['kind']): {
  manifest: boolean;
  groups: boolean;
  standaloneGroup: boolean;
} {
  return {
    manifest: kind === undefined,
    groups: kind === undefined || kind === 'ArmadaChartGroup',
    standaloneGroup: kind === 'ArmadaChartGroup',
  };
}

/**
 * The re-plan a run passes on to its Deployer `name`'s rollout child: that Deployer's part of
 * the new plan, as the rollout's own input (a DeployerRun), so the rollout starts over with it
 * as a Deployer's own run did; undefined when the new plan no longer rolls it out (the rollout
 * then ends as it would, and the run starts over without it).
 */
export function deployerReplan(replan: Replan, name: string): Replan | undefined {
  const { plan, mode } = replan.input as DeployRunInput;
  const deployer = plan?.groups.flatMap((g) => g.deployers ?? []).find((d) => d.name === name);
  if (!deployer) return undefined;
  const input: DeployerRun = { name, namespace: plan.namespace, spec: deployer.spec, mode: mode ?? 'deploy' };
  return { input, memo: replan.memo };
}
