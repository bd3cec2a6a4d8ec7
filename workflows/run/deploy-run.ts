import { CancellationScope } from '@temporalio/workflow';
import { RunControl } from '../control';
import { passSafePoint } from '../holds';
import { replanSignal } from '../messages';
import { reportHeld } from '../status';
import { gateBefore } from '../../core/plan/gates';
import { gateRules } from '../../core/plan/steering';
import { groupFailure } from '../../core/plan/run';
import { finishedBefore } from '../../core/plan/finished-runs';
import { gatedBefore, groupsInOrder } from '../../core/plan/run-modes';
import type { DeployRunInput, DeployRunOutcome } from '../../core/contracts/run';
import type { GroupPlan } from '../../core/plan/plans';
import { CanaryChildren, RunProgress, showFinished } from './progress';
import { deployGroup } from './group';
import type { RunParts } from './parts';
import { endRun, recordGroup, startWalk, type RunWalk } from './saga';
import { steerObjects } from './objects';
import { RunReports } from './reports';

/**
 * One workflow per run (docs/design/one-workflow.md): the run walks its plan's groups in order
 * and, in each, its charts, each chart's steps activities of this workflow. Between groups: the
 * approval gate, then the holds (a pause, a freeze, closed windows). A failed group ends the run,
 * which then rolls back or keeps what it changed (`on_failure`, workflows/run/saga.ts). Modes:
 * deploy, uninstall (groups and charts reversed), a retry (`resume`) and a re-plan (newer specs).
 * Children only where they earn their place: a chart's canary, a Deployer's rollout.
 */
export async function deployRun(input: DeployRunInput): Promise<DeployRunOutcome> {
  const { plan } = input;
  const control = new RunControl(input.carried, {
    approvalHint: `the gates of ${plan.manifest} are before its groups; a canary waits at its own: approve act/NAME`,
  });
  control.holds.use(plan.windows);
  const canaries = new CanaryChildren(control);
  steerObjects(plan, control, canaries);
  control.onReplan = (replan) => canaries.forward(replanSignal, replan);
  control.listen((signal, req) => canaries.forward(signal, req));
  const shown = new RunProgress(plan, control);
  const parts: RunParts = {
    control,
    canaries,
    shown,
    told: new RunReports(input, control, shown),
    namespace: plan.namespace,
    mode: input.mode ?? 'deploy',
    // Made here, under the run's own scope, so the run's cancellation reaches it.
    ...(plan.kind === 'ArmadaChart' && { chartScope: new CancellationScope() }),
  };
  // Cancellation reaches the run through `control`: running charts finish (a standalone chart's
  // is stopped: chartScope), no new one starts; then the run ends as the plan says (endRun:
  // start over, roll back, or keep what ran).
  return CancellationScope.nonCancellable(async () => endRun(input, await walkGroups(input, parts), parts));
}

/**
 * The groups in order (reversed to uninstall), each behind its gate and holds, until one fails
 * or the run stops; a retry skips the groups its failed run finished.
 */
async function walkGroups(input: DeployRunInput, parts: RunParts): Promise<RunWalk> {
  const { plan, mode = 'deploy', resume } = input;
  const walk = startWalk(input);
  parts.told.started();
  for (const group of groupsInOrder(plan, mode)) {
    const finished = resume?.finished[group.name];
    if (finished) showFinished(parts.shown, group.name, finished);
    if (finishedBefore(resume, group.name, names(group))) {
      parts.shown.show(() => (parts.shown.group(group.name).state = 'done'));
      continue;
    }
    if (!(await passGate(input, group, parts, walk))) return walk;
    const outcome = await deployGroup(group, parts, finished);
    recordGroup(walk, group, outcome, plan.namespace);
    if (outcome.failed.length) walk.failure = groupFailure(outcome);
    if (outcome.failed.length || outcome.stopped) return walk;
  }
  walk.complete = true;
  return walk;
}

/**
 * Before a group: its approval gate, if it passes one (gatedBefore), then the holds. False when
 * the run goes no further; a timed-out gate whose `on_timeout` is not `continue` fails the run,
 * which then does what it asked for (see endRun).
 */
async function passGate(
  { plan, mode = 'deploy', resume }: DeployRunInput,
  group: GroupPlan,
  { control, shown, told }: RunParts,
  walk: RunWalk,
): Promise<boolean> {
  if (!(await control.mayContinue())) return false;
  const row = shown.group(group.name);
  if (group.approval && gatedBefore(group, mode, resume)) {
    const gate = gateBefore(group.name);
    shown.show(() => (row.state = 'waiting-approval'));
    told.gateOpened(group, gate);
    const { timeoutSeconds, onTimeout } = group.approval;
    const rules = gateRules(group.approval, `ArmadaManifest/${plan.manifest}`, control.steering);
    const wait = await control.approval(
      gate,
      timeoutSeconds === undefined ? undefined : timeoutSeconds * 1000,
      rules,
    );
    shown.show((p) => (p.waitingOn = undefined));
    if (wait.decision === 'stopped') return false;
    if (wait.decision === 'timed-out' && onTimeout !== 'continue') {
      Object.assign(walk, { failure: `approval ${gate} timed out`, timedOutInto: onTimeout });
      shown.show(() => (row.state = 'stopped'));
      return false;
    }
    if (wait.decision === 'approved') told.gateApproved(gate, wait.by);
  }
  const held = (hold: Parameters<typeof reportHeld>[3]) => {
    shown.show((p) => (p.waitingOn = hold?.for));
    return reportHeld(plan.kind ?? 'ArmadaManifest', plan.namespace, plan.manifest, hold);
  };
  return passSafePoint(control, held);
}

const names = (group: GroupPlan) => group.charts.map((c) => c.chart);
