import { ApplicationFailure, CancellationScope } from '@temporalio/workflow';
import { RunControl } from '../control';
import { passSafePoint } from '../holds';
import { replanSignal } from '../messages';
import { reportHeld } from '../status';
import { NonRetryable } from '../../core/failures';
import { gateBefore } from '../../core/plan/gates';
import { gateRules } from '../../core/plan/steering';
import { groupFailure, unsupportedInRun } from '../../core/plan/run';
import type { DeployRunInput, DeployRunOutcome } from '../../core/contracts/run';
import type { GroupOutcome } from '../../core/contracts/workflows';
import type { GroupPlan, ManifestPlan } from '../../core/plan/plans';
import { CanaryChildren, RunProgress } from './progress';
import { deployGroup, type RunParts } from './group';
import { RunReports } from './reports';

/**
 * One workflow per run (docs/design/one-workflow.md): the run walks its plan's groups in order
 * and, in each, its charts, each chart's steps activities of this workflow. Between groups: the
 * approval gate, then the holds (a pause, a freeze, closed windows). A failed group ends the run.
 * Children only where they earn their place: a chart's canary.
 */
export async function deployRun(input: DeployRunInput): Promise<DeployRunOutcome> {
  const { plan } = input;
  const refused = unsupportedInRun(plan);
  if (refused) throw ApplicationFailure.nonRetryable(refused, NonRetryable.RunPlanUnsupported);
  const control = new RunControl(input.carried, {
    approvalHint: `the gates of ${plan.manifest} are before its groups; a canary waits at its own: approve act/NAME`,
  });
  control.holds.use(plan.windows);
  const canaries = new CanaryChildren(control);
  control.onReplan = (replan) => canaries.forward(replanSignal, replan);
  control.listen((signal, req) => canaries.forward(signal, req));
  const shown = new RunProgress(plan, control);
  const parts: RunParts = {
    control,
    canaries,
    shown,
    told: new RunReports(plan, control, shown),
    namespace: plan.namespace,
  };
  // Cancellation reaches the run through `control`: running charts finish, no new one starts.
  return CancellationScope.nonCancellable(() => walkGroups(plan, parts));
}

/**
 * The groups in order, each behind its gate and holds, until one fails or the run stops; then
 * the run's final status. A failed group or a timed-out gate fails the run.
 */
async function walkGroups(plan: ManifestPlan, parts: RunParts): Promise<DeployRunOutcome> {
  const groups: GroupOutcome[] = [];
  const { complete, failure } = await runGroups(plan, parts, groups);
  const state = await parts.told.ended(complete, failure);
  const result: DeployRunOutcome = { manifest: plan.manifest, state, groups };
  if (failure !== undefined)
    throw ApplicationFailure.nonRetryable(failure, NonRetryable.ManifestFailed, result);
  return result;
}

/** Runs the groups, adding each one's outcome to `groups`; whether every one ran, and why the run failed. */
async function runGroups(
  plan: ManifestPlan,
  parts: RunParts,
  groups: GroupOutcome[],
): Promise<{ complete: boolean; failure?: string }> {
  parts.told.started();
  for (const group of plan.groups) {
    const gate = await passGate(plan, group, parts);
    if (gate !== 'passed')
      return {
        complete: false,
        ...(gate === 'timed-out' && { failure: `approval ${gateBefore(group.name)} timed out` }),
      };
    const outcome = await deployGroup(group, parts);
    groups.push(outcome);
    if (outcome.failed.length) return { complete: false, failure: groupFailure(outcome) };
    if (outcome.stopped) return { complete: false };
  }
  return { complete: true };
}

/**
 * Before a group: its approval gate, if it has one, then the holds. `stopped` when the run goes
 * no further; `timed-out` when the gate timed out and its `on_timeout` is not `continue`.
 */
async function passGate(
  plan: ManifestPlan,
  group: GroupPlan,
  { control, shown, told }: RunParts,
): Promise<'passed' | 'stopped' | 'timed-out'> {
  if (!(await control.mayContinue())) return 'stopped';
  if (group.approval) {
    const gate = gateBefore(group.name);
    shown.show(() => (shown.group(group.name).state = 'waiting-approval'));
    told.gateOpened(group, gate);
    const { timeoutSeconds } = group.approval;
    const rules = gateRules(group.approval, `ArmadaManifest/${plan.manifest}`, control.steering);
    const wait = await control.approval(
      gate,
      timeoutSeconds === undefined ? undefined : timeoutSeconds * 1000,
      rules,
    );
    shown.show((p) => (p.waitingOn = undefined));
    if (wait.decision === 'stopped') return 'stopped';
    if (wait.decision === 'timed-out' && group.approval.onTimeout !== 'continue') return 'timed-out';
    if (wait.decision === 'approved') told.gateApproved(gate, wait.by);
  }
  const held = (hold: Parameters<typeof reportHeld>[3]) => {
    shown.show((p) => (p.waitingOn = hold?.for));
    return reportHeld('ArmadaManifest', plan.namespace, plan.manifest, hold);
  };
  return (await passSafePoint(control, held)) ? 'passed' : 'stopped';
}
