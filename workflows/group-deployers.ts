import {
  ApplicationFailure,
  ParentClosePolicy,
  sleep,
  startChild,
  WorkflowIdReusePolicy,
  workflowInfo,
  type ChildWorkflowHandle,
} from '@temporalio/workflow';
import { WorkflowExecutionAlreadyStartedError } from '@temporalio/common';
import { deployerWorkflow } from './deployer';
import type { DeployerOutcome } from '../core/contracts/workflows';
import { NonRetryable } from '../core/failures';
import { carriedDown, type HandedDown } from './control';
import type { ChartProgress } from '../core/progress';
import { deployerMember, type LockstepLink } from '../core/plan/lockstep';
import type { DeployerPlan, GroupPlan } from '../core/plan/plans';
import { deployerDeploymentName } from '../core/plan/names';
import { ArmadaKind, ArmadaName, ArmadaNamespace } from './search-attributes';
import { io, profile } from './activity-proxies';

/** How often a deploy that waits for a drift repair holding its release tries again. */
const REPAIR_POLL_MS = 1000;

/**
 * The Deployers a group rolls out with its charts (`deployers` of an ArmadaChartGroup): each runs
 * as the group's child `deployerWorkflow` under the workflow ID its standalone runs take, so a
 * Deployer is never driven by two runs at once. A group's uninstall leaves them: their
 * Deployments are the Deployer's, removed only when the Deployer itself is deleted.
 */

/** A Deployer as a group's progress lists it: `Deployer/<name>`, deploying Deployment `<name>-<version>`. */
export function deployerProgress({ name, spec }: DeployerPlan): ChartProgress {
  return {
    chart: deployerMember(name),
    release: deployerDeploymentName(spec.deployment.name, spec.deployment.version),
    namespace: spec.deployment.namespace,
    state: 'pending',
  };
}

/** A group's rows before it runs: its charts, then its Deployers. */
export function pendingRows(group: GroupPlan): ChartProgress[] {
  return [
    ...group.charts.map((c): ChartProgress => ({
      chart: c.chart,
      release: c.release,
      namespace: c.namespace,
      state: 'pending',
    })),
    ...(group.deployers ?? []).map(deployerProgress),
  ];
}

/** Why a Deployer's finished run fails its group: it rolled back (its canary, or its lockstep set). */
export function deployerFailure(outcome: DeployerOutcome): string | undefined {
  return outcome.result === 'rolled-back' ? `rolled back: ${outcome.reason ?? 'no reason given'}` : undefined;
}

/**
 * The options of a group's child that its workflow ID locks: a finished run leaves the ID free, a
 * running one makes the start fail (see underLock).
 */
export function lockedChild() {
  return {
    workflowIdReusePolicy: WorkflowIdReusePolicy.ALLOW_DUPLICATE,
    memo: workflowInfo().memo,
    parentClosePolicy: ParentClosePolicy.REQUEST_CANCEL,
  };
}

/**
 * Starts a locked child; a start refused because another run holds `workflowId` names that run
 * (`locked`: what it drives). With `waitForRepair`, a drift repair holding it (a few seconds: one
 * check and at most one helm rollback) is waited for, and the start tried again once it ends.
 */
export async function underLock<H>(
  start: () => Promise<H>,
  workflowId: string,
  locked: string,
  waitForRepair = false,
): Promise<H> {
  for (;;) {
    try {
      return await start();
    } catch (err) {
      if (!(err instanceof WorkflowExecutionAlreadyStartedError)) throw err;
      const holder =
        waitForRepair &&
        (await io.lockHolder.executeWithOptions(profile.quick(`which run holds ${workflowId}`), [
          workflowId,
        ]));
      if (holder !== 'driftWorkflow' && holder !== null)
        throw ApplicationFailure.nonRetryable(
          `${locked} is being driven by another run (workflow ${workflowId}); wait for it or stop it`,
          NonRetryable.ReleaseLocked,
        );
      // A repair holds the release (or the holder ended meanwhile): try again in a moment.
      await sleep(REPAIR_POLL_MS);
    }
  }
}

/**
 * Starts a Deployer's run as the group's (or a rollback's) child; `resourceNamespace`: the
 * Deployer object's. `uninstall` deletes its Deployments.
 */
export function startDeployer(
  plan: DeployerPlan,
  resourceNamespace: string,
  handed: HandedDown,
  lockstep?: LockstepLink,
  mode: 'deploy' | 'uninstall' = 'deploy',
): Promise<ChildWorkflowHandle<typeof deployerWorkflow>> {
  const { deployment } = plan.spec;
  const what = `Deployer ${resourceNamespace}/${plan.name}`;
  const doing =
    mode === 'uninstall'
      ? `remove every version of ${deployment.namespace}/${deployment.name}`
      : `${deployment.namespace}/${deployment.name} → ${deployment.version} (${deployment.replicas} replicas)`;
  const start = () =>
    startChild(deployerWorkflow, {
      workflowId: plan.workflowId,
      args: [
        {
          name: plan.name,
          namespace: resourceNamespace,
          spec: plan.spec,
          mode,
          ...(plan.undoes && { undoes: plan.undoes }),
          ...carriedDown(handed),
          ...(lockstep && { lockstep }),
        },
      ],
      staticSummary: `${what}: ${doing}`,
      // Found by kind and name in the UI and `armadactl history`, as its standalone runs are.
      typedSearchAttributes: [
        { key: ArmadaKind, value: 'Deployer' },
        { key: ArmadaName, value: plan.name },
        { key: ArmadaNamespace, value: resourceNamespace },
      ],
      ...lockedChild(),
    });
  return underLock(start, plan.workflowId, what);
}
