import type { WorkflowHandle } from '@temporalio/client';
import { groupWorkflow, manifestWorkflow } from '../../workflows';
import type { ManifestRun } from '../../core/contracts/workflows';
import type { GroupPlan } from '../../core/plan/plans';
import {
  approveUpdate,
  canaryProgressQuery,
  freezeSignal,
  progressQuery,
  promoteUpdate,
  unfreezeSignal,
} from '../../workflows/messages';
import type { CanaryProgress } from '../../core/progress';
import { canaryWorkflowId, groupChildWorkflowId, objectWorkflowId } from '../../core/plan/names';
import { sharedWorker, uniqueName } from '../helpers/env';
import { saveHistory, savingHistories } from '../helpers/histories';
import { eventually } from '../helpers/processes';
import { refusal } from '../helpers/runs';
import {
  canaryOf as canaryRun,
  canaryOutcomes,
  fakeRollouts,
  membersUntil as untilMembers,
  type Steps,
} from './fake-rollouts';
import { lockstepScenarios } from './lockstep-scenarios';

/**
 * Lockstep canaries on the real Temporal dev server: a group run with canary_lockstep, its chart
 * runs and their canaries, with Helm and Kubernetes stubbed. Each chart's release exists at
 * revision 1, so its run upgrades it through a canary.
 */
const rollouts = fakeRollouts();
const { helm, lockstepGroup } = rollouts;
const harness = sharedWorker({ activities: rollouts.activities });

/** The group workflow coordinates the set; its result is the group's outcome. */
const scenarios = lockstepScenarios(harness, rollouts, {
  start: (group) =>
    harness().client.workflow.start(groupWorkflow, {
      taskQueue: harness().taskQueue,
      workflowId: uniqueName('g'),
      args: [{ namespace: 'default', group }],
    }),
  outcome: (run) => run.result(),
});

/** A manifest run whose one group is a lockstep set. */
async function startManifest(
  members: string[],
  steps: Steps,
): Promise<WorkflowHandle<typeof manifestWorkflow>> {
  return harness().client.workflow.start(manifestWorkflow, manifestStart(lockstepGroup(members, steps)));
}

/** How a manifest run of the one group `group` starts. */
function manifestStart(group: GroupPlan) {
  return {
    taskQueue: harness().taskQueue,
    workflowId: uniqueName('m'),
    args: [
      {
        plan: {
          manifest: uniqueName('m'),
          namespace: 'default',
          onFailure: 'stop' as const,
          targetState: 'deployed' as const,
          groups: [group],
        },
      },
    ] as [ManifestRun],
  };
}

const canaryOf = (member: string) => canaryRun(harness(), member);
const outcomes = (members: string[]) => canaryOutcomes(harness(), members);
const membersUntil = (members: string[], what: string, ready: (p: CanaryProgress) => boolean) =>
  untilMembers(harness(), members, what, ready);

describe('lockstep canaries (canary_lockstep on a group)', () => {
  it('starts step k for no member before every member passed step k-1, then promotes all', () =>
    scenarios.stepTogether());

  it("rolls back every member when one member's analysis fails, and leaves every release at its old revision", async () => {
    const { run: group, members } = await scenarios.analysisRollback();
    if (savingHistories) {
      await saveHistory(group.workflowId, undefined, 'lockstep-analysis-rollback--group');
      for (const [i, m] of members.entries())
        await saveHistory(
          canaryWorkflowId('default', m),
          undefined,
          `lockstep-analysis-rollback--canary-${i}`,
        );
    }
  });

  it('takes approve, pause and rollback sent to the group as sent to every member', () =>
    scenarios.steeredAsOne());

  it('promotes every member on a promote sent to the group, and upgrades every release', () =>
    scenarios.promotedAsOne());

  it('passes approve and promote sent to the manifest on to its running lockstep group', async () => {
    const members = [uniqueName('web'), uniqueName('api')];
    const manifest = await startManifest(members, [
      { percent: 30, approval: true },
      { percent: 60, sleep: '1h' },
    ]);
    // Before the set waits anywhere, the manifest has nothing to approve or promote.
    expect(await refusal(manifest.executeUpdate(promoteUpdate, { args: [{ by: 'ops' }] }))).toMatch(
      /this run has none/,
    );
    await membersUntil(members, 'every member waiting for approval', (p) => p.gate?.name === 'step 1 (30 %)');
    // The set's gate opens on the manifest: an approval names it, and a wrong name is refused.
    await eventually(
      'the manifest shows the set’s gate',
      async () => (await manifest.query(progressQuery)).gate?.name,
    );
    expect(
      await refusal(manifest.executeUpdate(approveUpdate, { args: [{ by: 'ops', gate: 'step 2 (60 %)' }] })),
    ).toBe('the gate waiting is "step 1 (30 %)", not "step 2 (60 %)"');
    expect(await manifest.executeUpdate(approveUpdate, { args: [{ by: 'ops' }] })).toBe(
      'approved step 1 (30 %)',
    );
    await membersUntil(members, 'every member holding step 2', (p) => p.step === 2 && p.waitingOn === 'hold');
    for (const m of members)
      expect((await canaryOf(m).query(canaryProgressQuery)).approvals).toEqual([
        expect.objectContaining({ gate: 'step 1 (30 %)', by: 'ops' }),
      ]);

    expect(await manifest.executeUpdate(promoteUpdate, { args: [{ by: 'lead' }] })).toMatch(/^promoting/);
    for (const o of await outcomes(members)) {
      expect(o.result).toBe('promoted');
      expect(o.reason).toBe('promoted by lead');
    }
    expect((await manifest.result()).state).toBe('deployed');
    for (const m of members) expect(helm.releases.get(m)?.revision).toBe(2);
    if (savingHistories) {
      // The group told the manifest where its set could be approved and promoted.
      await saveHistory(manifest.workflowId, undefined, 'lockstep-steered-from-manifest--manifest');
      const [group] = (await manifest.query(progressQuery)).groups;
      const groupId = groupChildWorkflowId(manifest.workflowId, group.name);
      await saveHistory(groupId, undefined, 'lockstep-steered-from-manifest--group');
    }
  });

  it('holds a frozen manifest before its group and its canaries before their next step; each goes on once unfrozen', async () => {
    const members = [uniqueName('frz')];
    const group = lockstepGroup(members, [{ percent: 50, approval: true }, { percent: 100 }]);
    const freeze = { by: 'ops', reason: 'release freeze' };
    // Frozen from its first task on: it holds before its one group.
    const manifest = await harness().client.workflow.signalWithStart(manifestWorkflow, {
      ...manifestStart(group),
      signal: freezeSignal,
      signalArgs: [freeze],
    });
    const held = await eventually(
      'the manifest held by the freeze',
      async () => (await manifest.query(progressQuery)).held,
    );
    expect(held).toMatchObject({ for: 'freeze' });
    expect(helm.calls.filter((c) => c.release === members[0])).toEqual([]);
    await manifest.signal(unfreezeSignal, { by: 'ops' });
    await membersUntil(members, 'the member waiting for approval', (p) => p.gate?.name === 'step 1 (50 %)');

    // Frozen again while the canary waits: the freeze goes down to it (group, chart, canary).
    await manifest.signal(freezeSignal, freeze);
    await eventually('the canary told of the freeze', async () => {
      const { events } = await canaryOf(members[0]).fetchHistory();
      return (
        events?.some((e) => e.workflowExecutionSignaledEventAttributes?.signalName === 'freeze') || undefined
      );
    });
    expect(await manifest.executeUpdate(approveUpdate, { args: [{ by: 'ops' }] })).toBe(
      'approved step 1 (50 %)',
    );
    // Approved, it does not take its next step while frozen.
    await membersUntil(members, 'the member held by the freeze', (p) => p.waitingOn === 'freeze');
    expect((await canaryOf(members[0]).query(canaryProgressQuery)).step).toBe(1);
    await manifest.signal(unfreezeSignal, { by: 'ops' });
    const [outcome] = await outcomes(members);
    expect(outcome.result).toBe('promoted');
    expect((await manifest.result()).state).toBe('deployed');
    expect(helm.releases.get(members[0])?.revision).toBe(2);
    if (savingHistories) {
      await saveHistory(manifest.workflowId, undefined, 'freeze--manifest');
      const groupId = groupChildWorkflowId(manifest.workflowId, group.name);
      await saveHistory(groupId, undefined, 'freeze--group');
      await saveHistory(group.charts[0].workflowId, undefined, 'freeze--chart');
      await saveHistory(canaryWorkflowId('default', members[0]), undefined, 'freeze--canary');
    }
  });
});

describe('lockstep canaries with a Deployer (deployers of a group)', () => {
  it('steps two chart canaries and a Deployer together, then promotes all three', () =>
    scenarios.withDeployer());

  it("rolls back both charts and the Deployer when the Deployer's analysis fails; every release stays at its old revision", async () => {
    const { run: group, deployer } = await scenarios.deployerRollback();
    if (savingHistories) {
      await saveHistory(group.workflowId, undefined, 'lockstep-deployer-rollback--group');
      await saveHistory(
        scenarios.deployerRunOf(deployer).workflowId,
        undefined,
        'lockstep-deployer-rollback--deployer',
      );
    }
  });

  it("takes a Deployer's first deploy as no canary: the charts wait for it to be Ready, then step without it", () =>
    scenarios.deployerFirstDeploy());
});

describe("a group's Deployers without lockstep", () => {
  it('a sequenced group rolls its Deployers out after its charts, in order, and counts them in its result', async () => {
    const { group: plan, chart, deployers } = rollouts.sequencedWithDeployers();
    const group = await harness().client.workflow.start(groupWorkflow, {
      taskQueue: harness().taskQueue,
      workflowId: uniqueName('g'),
      args: [{ namespace: 'default', group: plan }],
    });
    const result = await group.result();
    expect(result.failed).toEqual([]);
    expect(result.deployers?.map((d) => [d.name, d.result])).toEqual(deployers.map((d) => [d, 'promoted']));
    const describe = (workflowId: string) => harness().client.workflow.getHandle(workflowId).describe();
    const chartRun = await describe(plan.charts[0].workflowId);
    const [first, second] = await Promise.all(
      deployers.map((d) => describe(objectWorkflowId('Deployer', 'default', d))),
    );
    expect(first.startTime.getTime()).toBeGreaterThanOrEqual(chartRun.closeTime!.getTime());
    expect(second.startTime.getTime()).toBeGreaterThanOrEqual(first.closeTime!.getTime());
    expect((await group.query(progressQuery)).groups?.[0].charts.map((c) => [c.chart, c.state])).toEqual([
      [chart, 'deployed'],
      ...deployers.map((d) => [`Deployer/${d}`, 'deployed']),
    ]);
  });
});
