import { rootMessage } from '../../core/failures';
import { deployerMember } from '../../core/plan/lockstep';
import type { GroupOutcome } from '../../core/contracts/workflows';
import type { DeployerPlan } from '../../core/plan/plans';
import { deployerFailure, startDeployer } from '../group-deployers';
import type { RunParts } from './parts';

/**
 * One Deployer of a group in the run: its rollout stays a child `deployerWorkflow` (decision 3 of
 * docs/design/one-workflow.md: its history grows with its canary's steps and holds, and it
 * continues as new on its own bound), under the workflow ID its standalone runs take, as a group
 * workflow starts it. Its outcome goes to the group's; a rollback of it (its canary's, or its
 * lockstep set's) fails the group, as a chart's canary's does. It writes its Deployer's status
 * itself.
 */
export async function rollOutDeployer(
  group: string,
  plan: DeployerPlan,
  parts: RunParts,
  outcome: GroupOutcome,
): Promise<void> {
  const { control, canaries, shown, told, namespace, lockstep } = parts;
  const member = deployerMember(plan.name);
  const row = shown.chart(group, member);
  shown.show(() => (row.state = 'deploying'));
  const link = lockstep?.link(member);
  let error: string | undefined;
  try {
    const child = await startDeployer(plan, namespace, control.handedDown(), link, parts.mode);
    const done = await canaries.follow(plan.name, child, child.result(), link !== undefined);
    outcome.deployers!.push({ name: plan.name, ...done });
    error = deployerFailure(done);
    shown.show(() => (row.state = error === undefined ? 'deployed' : 'rolled-back'));
  } catch (err) {
    error = rootMessage(err);
    shown.show(() => (row.state = 'failed'));
    told.deployerFailed(plan.name, error);
  }
  lockstep?.memberEnded(member, error);
  if (error === undefined) return;
  outcome.failed.push({ chart: member, error });
  shown.show(() => (row.error = error));
}
