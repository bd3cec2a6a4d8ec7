import { WorkflowFailedError, type WorkflowHandle } from '@temporalio/client';
import type { ApplicationFailure } from '@temporalio/common';
import { armadaChartSpec } from '../../api/chart';
import { chartWorkflow, deployRun } from '../../workflows';
import type { DeployRunOutcome } from '../../core/contracts/run';
import type { GroupPlan, ManifestPlan } from '../../core/plan/plans';
import { deployerRolloutWorkflowId, objectWorkflowId } from '../../core/plan/names';
import { chartPlanOfOne } from '../../core/plan/plans-of-one';
import { chartOfOne, deployerRun } from '../../runs/requests';
import { approveSignal, progressQuery } from '../../workflows/messages';
import { sharedWorker, uniqueName } from '../helpers/env';
import { saveHistory, savingHistories, summaryOf } from '../helpers/histories';
import { eventually } from '../helpers/processes';
import { canaryOf, fakeRollouts } from './fake-rollouts';
import { lockstepScenarios, type SetRunner } from './lockstep-scenarios';

/**
 * Deployers and lockstep canaries in the one-workflow run (deployRun), on the real Temporal dev
 * server with Helm and Kubernetes stubbed: the assertions of the group workflow's (lockstep.test.ts),
 * the run coordinating the set itself and each Deployer's rollout its child. Each chart's release
 * exists at revision 1, so its run upgrades it through a canary. Then plans of one.
 */
const rollouts = fakeRollouts();
const { helm, lockstepGroup } = rollouts;
const harness = sharedWorker({ activities: rollouts.activities });

/** A plan of `groups`, its objects in `default`. */
const planOf = (...groups: GroupPlan[]): ManifestPlan => ({
  manifest: uniqueName('m'),
  namespace: 'default',
  onFailure: 'stop',
  targetState: 'deployed',
  groups,
});

function startRun(
  plan: ManifestPlan,
  workflowId = uniqueName('run'),
): Promise<WorkflowHandle<typeof deployRun>> {
  return harness().client.workflow.start(deployRun, {
    taskQueue: harness().taskQueue,
    workflowId,
    args: [{ plan }],
  });
}

/** What a run ended with: its outcome, or the outcome its ManifestFailed failure carries. */
async function endOf(run: WorkflowHandle): Promise<{ failed: boolean } & DeployRunOutcome> {
  try {
    return { failed: false, ...((await run.result()) as DeployRunOutcome) };
  } catch (err) {
    if (!(err instanceof WorkflowFailedError)) throw err;
    const cause = err.cause as ApplicationFailure;
    expect(cause.type).toBe('ManifestFailed');
    return { failed: true, ...(cause.details![0] as DeployRunOutcome) };
  }
}

/** deployRun coordinates the set of its plan's lockstep group (and, with `after`, then runs that group). */
const runner = (after?: GroupPlan): SetRunner => ({
  start: (group) => startRun(planOf(group, ...(after ? [after] : []))),
  outcome: async (run) => (await endOf(run)).groups[0],
});
const scenarios = lockstepScenarios(harness, rollouts, runner());

describe('deployRun: lockstep canaries (canary_lockstep on a group)', () => {
  it('starts step k for no member before every member passed step k-1, then promotes all', () =>
    scenarios.stepTogether());

  it("rolls back every member when one member's analysis fails, and leaves every release at its old revision", () =>
    scenarios.analysisRollback());

  it('takes approve, pause and rollback sent to the run as sent to every member', async () => {
    const { members } = await scenarios.steeredAsOne();
    // Each member's canary took the pause and the rollback once: from the set, not the run as well.
    const { events } = await canaryOf(harness(), members[0]).fetchHistory();
    const signals = (events ?? []).flatMap(
      (e) => e.workflowExecutionSignaledEventAttributes?.signalName ?? [],
    );
    expect(signals.filter((s) => s === 'pause' || s === 'rollback')).toEqual(['pause', 'rollback']);
  });

  it('promotes every member on a promote sent to the run, then gates the next group as its own', async () => {
    const after = { ...lockstepGroup([uniqueName('after')], [{ percent: 50 }]), lockstep: undefined };
    const gate = `before group ${after.name}`;
    // The set has closed: the run's gate before the next group is the run's, approved on the run.
    await lockstepScenarios(
      harness,
      rollouts,
      runner({ ...after, approval: { onTimeout: 'stop' } }),
    ).promotedAsOne(async (run) => {
      await eventually('the gate of the next group', async () =>
        (await run.query(progressQuery)).gate?.name === gate ? true : undefined,
      );
      await run.signal(approveSignal, { by: 'lead', gate });
      expect(await endOf(run)).toMatchObject({ failed: false, state: 'deployed' });
    });
  });
});

describe('deployRun: lockstep canaries with a Deployer (deployers of a group)', () => {
  it('steps two chart canaries and a Deployer together, then promotes all three', () =>
    scenarios.withDeployer());

  it("rolls back both charts and the Deployer when the Deployer's analysis fails; every release stays at its old revision", async () => {
    const { run } = await scenarios.deployerRollback();
    if (savingHistories)
      await saveHistory(run.workflowId, undefined, 'deploy-run--lockstep-deployer-rollback');
  });

  it("takes a Deployer's first deploy as no canary: the charts wait for it to be Ready, then step without it", () =>
    scenarios.deployerFirstDeploy());
});

describe("deployRun: a group's Deployers without lockstep", () => {
  it('a sequenced group rolls its Deployers out after its charts, in order, and counts them in its outcome', async () => {
    const { group, chart, deployers } = rollouts.sequencedWithDeployers();
    const run = await startRun(planOf(group));
    const end = await endOf(run);
    expect(end.groups[0].failed).toEqual([]);
    expect(end.groups[0].deployers?.map((d) => [d.name, d.result])).toEqual(
      deployers.map((d) => [d, 'promoted']),
    );
    const describe = (workflowId: string) => harness().client.workflow.getHandle(workflowId).describe();
    const [first, second] = await Promise.all(
      deployers.map((d) => describe(objectWorkflowId('Deployer', 'default', d))),
    );
    // The chart's steps (activities of the run itself) all ended before the first Deployer
    // started; its status writes are off the run's path.
    const events = (await run.fetchHistory()).events ?? [];
    const isStep = (e: (typeof events)[number]) =>
      e.activityTaskScheduledEventAttributes?.activityType?.name !== 'reportStatus' &&
      summaryOf(e).includes(chart);
    const ofChart = new Set(
      events.flatMap((e) => (e.activityTaskScheduledEventAttributes && isStep(e) ? [String(e.eventId)] : [])),
    );
    const chartDone = events.map((e, i) =>
      ofChart.has(String(e.activityTaskCompletedEventAttributes?.scheduledEventId)) ? i : -1,
    );
    const firstChild = events.findIndex((e) => e.startChildWorkflowExecutionInitiatedEventAttributes);
    expect(ofChart.size).toBeGreaterThanOrEqual(3); // observe, upgrade, wait
    expect(Math.max(...chartDone)).toBeGreaterThan(0);
    expect(Math.max(...chartDone)).toBeLessThan(firstChild);
    expect(second.startTime.getTime()).toBeGreaterThanOrEqual(first.closeTime!.getTime());
    expect((await run.query(progressQuery)).groups[0].charts.map((c) => [c.chart, c.state])).toEqual([
      [chart, 'deployed'],
      ...deployers.map((d) => [`Deployer/${d}`, 'deployed']),
    ]);
  });
});

describe('deployRun: plans of one', () => {
  const chartInput = (name: string) =>
    chartOfOne(
      {
        kind: 'ArmadaChart',
        name,
        namespace: 'default',
        spec: armadaChartSpec.parse({
          release: name,
          namespace: 'apps',
          source: { type: 'local', location: 'x' },
        }),
      },
      'deploy',
    );
  const stepsOf = (release: string) => helm.calls.filter((c) => c.release === release).map((c) => c.name);

  it('deploys a plan of one chart with the outcome of chartWorkflow, through the same helm steps', async () => {
    // Two new releases: one through chartWorkflow, one through deployRun; then each again, unchanged.
    const [viaChart, viaRun] = [uniqueName('one'), uniqueName('one')];
    for (const expected of ['installed', 'unchanged']) {
      const alone = await harness().client.workflow.execute(chartWorkflow, {
        taskQueue: harness().taskQueue,
        workflowId: uniqueName('chart'),
        args: [chartInput(viaChart)],
      });
      expect(alone.action).toBe(expected);
      const end = await endOf(await startRun(chartPlanOfOne(chartInput(viaRun))));
      expect(end).toMatchObject({ failed: false, state: 'deployed' });
      expect(end.groups.map((g) => g.group)).toEqual([viaRun]);
      expect(end.groups[0].outcomes).toEqual([{ ...alone, chart: viaRun, release: viaRun }]);
    }
    expect(stepsOf(viaRun)).toEqual(stepsOf(viaChart));
    expect(stepsOf(viaRun)).toEqual(['observe', 'upgrade', 'wait', 'observe']);
  });

  it("rolls a plan of one Deployer out as the run's child, the run holding the Deployer's own workflow ID", async () => {
    const name = uniqueName('dpl');
    const spec = rollouts.deployer(name, [{ percent: 50 }]);
    const request = deployerRun({ kind: 'Deployer', name, namespace: 'default', spec });
    const end = await endOf(await startRun(request.input.plan, request.workflowId));
    expect(end.groups[0].deployers).toEqual([
      expect.objectContaining({ name, result: 'promoted', version: 'v2', previous: 'v1' }),
    ]);
    const child = await harness()
      .client.workflow.getHandle(deployerRolloutWorkflowId('default', name))
      .describe();
    expect(child.type).toBe('deployerWorkflow');
    expect(child.parentExecution?.workflowId).toBe(request.workflowId);
  });
});
