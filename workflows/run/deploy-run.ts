import { ApplicationFailure, CancellationScope } from '@temporalio/workflow';
import { RunControl } from '../control';
import { passSafePoint } from '../holds';
import { replanSignal } from '../messages';
import { reportHeld } from '../status';
import { NonRetryable } from '../../core/failures';
import { gateBefore } from '../../core/plan/gates';
import { gateRules } from '../../core/plan/steering';
import { groupFailure } from '../../core/plan/run';
import type { DeployRunInput, DeployRunOutcome } from '../../core/contracts/run';
import type { GroupOutcome } from '../../core/contracts/workflows';
import type { GroupPlan, ManifestPlan } from '../../core/plan/plans';
import { CanaryChildren, RunProgress } from './progress';
import { deployGroup } from './group';
import type { RunParts } from './parts';

/**
 * One workflow per run (docs/design/one-workflow.md): the run walks its plan's groups in order
 * and, in each, its charts, each chart's steps activities of this workflow. Between groups: the
 * approval gate, then the holds (a pause, a freeze, closed windows). A failed group ends the run.
 * Children only where they earn their place: a chart's canary, a Deployer's rollout.
 */
export async function deployRun(input: DeployRunInput): Promise<DeployRunOutcome> {
  const { plan } = input;
  const control = new RunControl(input.carried, {
    approvalHint: `the gates of ${plan.manifest} are before its groups; a canary waits at its own: approve act/NAME`,
  });
  control.holds.use(plan.windows);
  const canaries = new CanaryChildren(control);
  control.onReplan = (replan) => canaries.forward(replanSignal, replan);
  control.listen((signal, req) => canaries.forward(signal, req));
  const parts: RunParts = {
    control,
    canaries,
    shown: new RunProgress(plan, control),
    namespace: plan.namespace,
  };
  // Cancellation reaches the run through `control`: running charts finish, no new one starts.
  return CancellationScope.nonCancellable(() => walkGroups(plan, parts));
}

/** The groups in order, each behind its gate and holds, until one fails or the run stops. */
async function walkGroups(plan: ManifestPlan, parts: RunParts): Promise<DeployRunOutcome> {
  const groups: GroupOutcome[] = [];
  const ended = (state: DeployRunOutcome['state']): DeployRunOutcome => {
    parts.shown.show((p) => (p.phase = state === 'deployed' ? 'Deployed' : 'Stopped'));
    return { manifest: plan.manifest, state, groups };
  };
  for (const group of plan.groups) {
    if (!(await passGate(plan, group, parts))) return ended('stopped');
    const outcome = await deployGroup(group, parts);
    groups.push(outcome);
    if (outcome.failed.length) {
      parts.shown.show((p) => (p.phase = 'Failed'));
      const result: DeployRunOutcome = { manifest: plan.manifest, state: 'stopped', groups };
      throw ApplicationFailure.nonRetryable(groupFailure(outcome), NonRetryable.ManifestFailed, result);
    }
    if (outcome.stopped) return ended('stopped');
  }
  return ended('deployed');
}

/**
 * Before a group: its approval gate, if it has one, then the holds. False when the run goes no
 * further; a timed-out gate whose `on_timeout` is not `continue` fails the run.
 */
async function passGate(
  plan: ManifestPlan,
  group: GroupPlan,
  { control, shown }: RunParts,
): Promise<boolean> {
  if (!(await control.mayContinue())) return false;
  if (group.approval) {
    const gate = gateBefore(group.name);
    shown.show((p) => {
      p.waitingOn = `approve ${gate}`;
      shown.group(group.name).state = 'waiting-approval';
    });
    const { timeoutSeconds } = group.approval;
    const rules = gateRules(group.approval, `ArmadaManifest/${plan.manifest}`, control.steering);
    const wait = await control.approval(
      gate,
      timeoutSeconds === undefined ? undefined : timeoutSeconds * 1000,
      rules,
    );
    shown.show((p) => (p.waitingOn = undefined));
    if (wait.decision === 'stopped') return false;
    if (wait.decision === 'timed-out' && group.approval.onTimeout !== 'continue')
      throw ApplicationFailure.nonRetryable(`approval ${gate} timed out`, NonRetryable.ManifestFailed);
  }
  const held = (hold: Parameters<typeof reportHeld>[3]) => {
    shown.show((p) => (p.waitingOn = hold?.for));
    return reportHeld(plan.kind ?? 'ArmadaManifest', plan.namespace, plan.manifest, hold);
  };
  return passSafePoint(control, held);
}
