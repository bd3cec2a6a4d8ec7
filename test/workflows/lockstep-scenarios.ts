import type { WorkflowHandle } from '@temporalio/client';
import type { DeployerOutcome, GroupOutcome } from '../../core/contracts/workflows';
import type { GroupPlan } from '../../core/plan/plans';
import { objectWorkflowId } from '../../core/plan/names';
import type { CanaryProgress } from '../../core/progress';
import {
  approveUpdate,
  canaryProgressQuery,
  pauseSignal,
  progressQuery,
  promoteUpdate,
  resumeSignal,
  rollbackSignal,
} from '../../workflows/messages';
import { uniqueName, type Harness } from '../helpers/env';
import { eventually } from '../helpers/processes';
import { detailsOf } from '../helpers/runs';
import { canaryOf, canaryOutcomes, membersUntil, type fakeRollouts, type Steps } from './fake-rollouts';

/** The run that coordinates a lockstep group: a group workflow, or the one-workflow run. */
export interface SetRunner {
  /** Starts a run of `group` (its objects in `default`). */
  start(group: GroupPlan): Promise<WorkflowHandle>;
  /** What the group did, once the run ended (also when the group failed it). */
  outcome(run: WorkflowHandle): Promise<GroupOutcome>;
}

const time = (iso?: string) => Date.parse(iso!);

/** Every member started step k only after every member passed step k-1, for k < `through`. */
export function expectLockstep(records: { startedAt?: string; endedAt?: string }[][], through: number): void {
  for (let k = 1; k < through; k++) {
    const lastPassed = Math.max(...records.map((r) => time(r[k - 1].endedAt)));
    for (const r of records) expect(time(r[k].startedAt)).toBeGreaterThanOrEqual(lastPassed);
  }
}

const twoSteps: Steps = [
  { percent: 30, sleep: '1s' },
  { percent: 60, sleep: '1s' },
];

/**
 * The lockstep scenarios, each with its assertions, for any run that coordinates the set
 * (lockstep.test.ts: a group workflow; deploy-run-deployers.test.ts: deployRun). Each returns its
 * run and members, for what a test checks or saves beyond them.
 */
export function lockstepScenarios(
  h: () => Harness,
  rollouts: ReturnType<typeof fakeRollouts>,
  runner: SetRunner,
) {
  const { helm, analysis, slowReadiness, deleted, firstDeploys, lockstepGroup } = rollouts;
  const outcomes = (members: string[]) => canaryOutcomes(h(), members);
  const until = (members: string[], what: string, ready: (p: CanaryProgress) => boolean) =>
    membersUntil(h(), members, what, ready);
  /** A Deployer's run, which the group started under the Deployer's own workflow ID. */
  const deployerRunOf = (name: string) =>
    h().client.workflow.getHandle<(run: unknown) => Promise<DeployerOutcome>>(
      objectWorkflowId('Deployer', 'default', name),
    );
  const start = (members: string[], steps: Steps, deployers: string[] = []) =>
    runner.start(lockstepGroup(members, steps, deployers));

  return {
    deployerRunOf,

    /** Three canary charts, one slow: none starts step k before all passed step k-1; all promote. */
    async stepTogether() {
      const members = [uniqueName('web'), uniqueName('api'), uniqueName('db')];
      // api's canary takes 1.5 s longer to become Ready at each step: alone, web and db would run ahead.
      slowReadiness.set(members[1], 1500);
      const run = await start(members, twoSteps);
      const result = await runner.outcome(run);
      expect(result.failed).toEqual([]);
      expect(result.outcomes.map((o) => o.action)).toEqual(['upgraded', 'upgraded', 'upgraded']);
      const records = (await outcomes(members)).map((o) => {
        expect(o.result).toBe('promoted');
        return o.steps;
      });
      expectLockstep(records, 3);
      // The fast members waited for the slow one: their step 2 began only after its step 1 ended,
      // which ended after theirs.
      const [web, api] = records;
      expect(time(api[0].endedAt)).toBeGreaterThan(time(web[0].endedAt));
      expect(time(web[1].startedAt)).toBeGreaterThanOrEqual(time(api[0].endedAt));
      for (const m of members) expect(helm.releases.get(m)?.revision).toBe(2);
    },

    /** One member's analysis fails: every member rolls back, every release stays at revision 1. */
    async analysisRollback() {
      const members = [uniqueName('web'), uniqueName('api')];
      // api passes step 1's check, then fails step 2's.
      analysis.set(`http://analysis.test/${members[1]}`, [true, false]);
      const run = await start(members, twoSteps);
      const result = await runner.outcome(run);
      expect(result.failed.map((f) => f.chart).sort()).toEqual([...members].sort());
      const [web, api] = await outcomes(members);
      expect(api).toMatchObject({ result: 'rolled-back' });
      expect(api.reason).toMatch(/analysis failed 1 time\(s\)/);
      expect(web.result).toBe('rolled-back');
      expect(web.reason).toMatch(
        new RegExp(`^rollback requested by lockstep set .*: ${members[1]}: .*analysis failed`),
      );
      // Neither reached 100 %, and neither release was upgraded.
      for (const o of [web, api]) expect(o.steps[2].startedAt).toBeUndefined();
      for (const m of members) {
        expect(helm.releases.get(m)?.revision).toBe(1);
        expect(deleted).toContain(`${m}-new`);
      }
      return { run, members };
    },

    /** Approve, pause, resume and rollback sent to the run reach every member. */
    async steeredAsOne() {
      const members = [uniqueName('web'), uniqueName('api')];
      const run = await start(members, [
        { percent: 30, approval: true },
        { percent: 60, sleep: '1h' },
      ]);
      // Both members wait at step 1's approval: the run shows that gate and one approval passes both.
      await until(members, 'every member waiting for approval', (p) => p.gate?.name === 'step 1 (30 %)');
      await eventually('the run opens the gate', async () => (await run.query(progressQuery)).gate?.name);
      expect(await run.executeUpdate(approveUpdate, { args: [{ by: 'ops' }] })).toBe(
        'approved step 1 (30 %)',
      );
      await until(members, 'every member holding step 2', (p) => p.step === 2 && p.waitingOn === 'hold');
      // The run's current details in the Temporal UI show the set as one table.
      const details = await eventually('the details showing both members holding step 2', async () => {
        const text = await detailsOf(run);
        return members.every((m) => text.includes(`| ${m} | 2 / 3 | 60 % | Progressing | hold |`))
          ? text
          : undefined;
      });
      expect(details).toContain('| member | step | percent | state | waiting on |');
      for (const m of members)
        expect((await canaryOf(h(), m).query(canaryProgressQuery)).approvals).toEqual([
          expect.objectContaining({ gate: 'step 1 (30 %)', by: 'ops' }),
        ]);

      await run.signal(pauseSignal, { by: 'ops', reason: 'metrics' });
      await until(members, 'every member paused by ops', (p) => p.paused?.by === 'ops');
      await run.signal(resumeSignal, { by: 'ops' });
      await until(members, 'every member resumed', (p) => !p.paused && p.waitingOn === 'hold');

      await run.signal(rollbackSignal, { by: 'ops', reason: 'bad release' });
      for (const o of await outcomes(members)) {
        expect(o.result).toBe('rolled-back');
        expect(o.reason).toBe('rollback requested by ops: bad release');
      }
      expect((await runner.outcome(run)).outcomes).toEqual([]);
      for (const m of members) expect(helm.releases.get(m)?.revision).toBe(1);
      return { run, members };
    },

    /** A promote sent to the run promotes every member; `then`: what the run does before it ends. */
    async promotedAsOne(then: (run: WorkflowHandle) => Promise<void> = async () => undefined) {
      const members = [uniqueName('web'), uniqueName('api')];
      const run = await start(members, [{ percent: 30, sleep: '1h' }]);
      await until(members, 'every member holding step 1', (p) => p.step === 1 && p.waitingOn === 'hold');
      expect(await run.executeUpdate(promoteUpdate, { args: [{ by: 'ops' }] })).toMatch(/^promoting/);
      for (const o of await outcomes(members)) {
        expect(o.result).toBe('promoted');
        expect(o.reason).toBe('promoted by ops');
      }
      await then(run);
      expect((await runner.outcome(run)).failed).toEqual([]);
      for (const m of members) expect(helm.releases.get(m)?.revision).toBe(2);
    },

    /** Two chart canaries and a slow Deployer step together; all three promote. */
    async withDeployer() {
      const charts = [uniqueName('web'), uniqueName('api')];
      const deployer = uniqueName('dpl');
      // The Deployer's new version takes 1.5 s longer to become Ready at each step: the charts wait for it.
      slowReadiness.set(`${deployer}/${deployer}-v2`, 1500);
      const run = await start(charts, twoSteps, [deployer]);
      const result = await runner.outcome(run);
      expect(result.failed).toEqual([]);
      expect(result.deployers).toEqual([
        expect.objectContaining({ name: deployer, result: 'promoted', version: 'v2', previous: 'v1' }),
      ]);
      const records = [
        ...(await outcomes(charts)).map((o) => o.steps),
        (await deployerRunOf(deployer).result()).steps,
      ];
      expectLockstep(records, 3);
      const [web, , dpl] = records;
      expect(time(web[1].startedAt)).toBeGreaterThanOrEqual(time(dpl[0].endedAt));
      for (const m of charts) expect(helm.releases.get(m)?.revision).toBe(2);
      // The old version goes once the new one serves.
      expect(deleted).toContain(`${deployer}-v1`);
      expect((await run.query(progressQuery)).groups?.[0].charts.at(-1)).toMatchObject({
        chart: `Deployer/${deployer}`,
        release: `${deployer}-v2`,
        state: 'deployed',
      });
    },

    /** The Deployer's analysis fails: both charts and the Deployer roll back. */
    async deployerRollback() {
      const charts = [uniqueName('web'), uniqueName('api')];
      const deployer = uniqueName('dpl');
      // The Deployer passes step 1's check, then fails step 2's.
      analysis.set(`http://analysis.test/${deployer}`, [true, false]);
      const run = await start(charts, twoSteps, [deployer]);
      const result = await runner.outcome(run);
      expect(result.failed.map((f) => f.chart).sort()).toEqual([...charts, `Deployer/${deployer}`].sort());
      const dpl = await deployerRunOf(deployer).result();
      expect(dpl).toMatchObject({ result: 'rolled-back', version: 'v1' });
      expect(dpl.reason).toMatch(/analysis failed 1 time\(s\)/);
      for (const o of await outcomes(charts)) {
        expect(o.result).toBe('rolled-back');
        expect(o.reason).toMatch(
          new RegExp(`^rollback requested by lockstep set .*: Deployer/${deployer}: .*analysis failed`),
        );
        expect(o.steps[2].startedAt).toBeUndefined();
      }
      expect(dpl.steps[2].startedAt).toBeUndefined();
      for (const m of charts) {
        expect(helm.releases.get(m)?.revision).toBe(1);
        expect(deleted).toContain(`${m}-new`);
      }
      // The new version is gone; the old one stays.
      expect(deleted).toContain(`${deployer}-v2`);
      expect(deleted).not.toContain(`${deployer}-v1`);
      return { run, deployer };
    },

    /** A Deployer's first deploy has no canary: the charts wait for it to be Ready, then step without it. */
    async deployerFirstDeploy() {
      const charts = [uniqueName('web'), uniqueName('api')];
      const deployer = uniqueName('dpl');
      firstDeploys.add(deployer);
      const result = await runner.outcome(await start(charts, twoSteps, [deployer]));
      expect(result.failed).toEqual([]);
      const dpl = await deployerRunOf(deployer).result();
      expect(dpl).toMatchObject({ result: 'deployed', version: 'v2' });
      expect(dpl.steps.map((s) => s.percent)).toEqual([100]);
      const records = (await outcomes(charts)).map((o) => o.steps);
      expectLockstep(records, 3);
      // No chart started its first step before the Deployer's one step (100 %) was Ready.
      for (const r of records)
        expect(time(r[0].startedAt)).toBeGreaterThanOrEqual(time(dpl.steps[0].readyAt));
    },
  };
}
