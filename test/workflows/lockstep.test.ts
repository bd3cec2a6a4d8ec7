import type { WorkflowHandle } from '@temporalio/client';
import type * as activities from '../../activities';
import { armadaChartSpec } from '../../api/chart';
import { armadaChartGroupSpec } from '../../api/chart-group';
import { deployerSpec } from '../../api/deployer';
import type { DeployedVersion } from '../../core/contracts/kube';
import { groupWorkflow, manifestWorkflow } from '../../workflows';
import type { CanaryOutcome, DeployerOutcome, ManifestRun } from '../../core/contracts/workflows';
import type { GroupPlan } from '../../core/plan/plans';
import {
  approveUpdate,
  canaryProgressQuery,
  freezeSignal,
  pauseSignal,
  progressQuery,
  promoteUpdate,
  resumeSignal,
  rollbackSignal,
  unfreezeSignal,
} from '../../workflows/messages';
import type { CanaryProgress } from '../../core/progress';
import { planGroup } from '../../core/plan/manifest';
import { canaryWorkflowId, groupChildWorkflowId, objectWorkflowId } from '../../core/plan/names';
import { sharedWorker, uniqueName } from '../helpers/env';
import { saveHistory, savingHistories } from '../helpers/histories';
import { eventually } from '../helpers/processes';
import { detailsOf, refusal } from '../helpers/runs';
import { chartCanaryStubs, fakeHelm } from './fake-helm';

/**
 * Lockstep canaries on the real Temporal dev server: a group run with canary_lockstep, its chart
 * runs and their canaries, with Helm and Kubernetes stubbed. Each chart's release exists at
 * revision 1, so its run upgrades it through a canary.
 */
const helm = fakeHelm();
/** Analysis answers per URL, in order; a URL with none left answers healthy. */
const analysis = new Map<string, boolean[]>();
/** Extra milliseconds the new side of a release (a Deployer: `<namespace>/<name>-v2`) takes to become Ready. */
const slowReadiness = new Map<string, number>();
const deleted: string[] = [];
/** The versions running per Deployment namespace, as observeOwnedDeployments finds them. */
const running = new Map<string, DeployedVersion[]>();
const stubs: Partial<typeof activities> = {
  ...helm.activities,
  ...chartCanaryStubs,
  async waitForResources(req) {
    // The new side: a chart's canary copy (`-new`) or a Deployer's new version (`-v2`).
    const canaries = (req.targets ?? []).filter((t) => /-(new|v2)$/.test(t.fieldSelector ?? ''));
    const delay = slowReadiness.get(req.release);
    if (canaries.length && delay) await new Promise((resolve) => setTimeout(resolve, delay));
    return helm.activities.waitForResources!(req);
  },
  async deleteDeployments(req) {
    deleted.push(...req.names);
  },
  async observeOwnedDeployments(ref) {
    return running.get(ref.namespace) ?? [];
  },
  async createDeployerDeployment(req) {
    return `${req.name}-${req.version}`;
  },
  async checkAnalysis(req) {
    const ok = analysis.get(req.url)?.shift() ?? true;
    if (ok) return { ok, message: 'ok' };
    return { ok, message: `GET ${req.url}: status 503, expected 200` };
  },
};
const harness = sharedWorker({ activities: stubs });

type Steps = { percent: number; sleep?: string; approval?: boolean }[];

/** A group of canary charts with `canary_lockstep: true`, each release existing at revision 1. */
function lockstepGroup(members: string[], steps: Steps, deployers: string[] = []) {
  const namespace = uniqueName('ns');
  // Each Deployer runs version v1 in a namespace of its own (none for a first deploy: `firstDeploys`).
  const deployerSpecs = Object.fromEntries(
    deployers.map((name) => {
      if (!firstDeploys.has(name))
        running.set(name, [{ deployment: `${name}-v1`, version: 'v1', replicas: 2 }]);
      const spec = deployerSpec.parse({
        type: 'canary',
        deployment: { name, namespace: name, image: 'registry.test/app', version: 'v2', replicas: 2 },
        steps,
        analysis: { url: `http://analysis.test/${name}`, interval: '1h' },
      });
      return [name, spec];
    }),
  );
  const charts = Object.fromEntries(
    members.map((name) => {
      helm.releases.set(name, { revision: 1, status: 'deployed', digest: 'old', lastDeployedRevision: 1 });
      const spec = armadaChartSpec.parse({
        release: name,
        namespace,
        source: { type: 'local', location: name },
        canary: { steps, analysis: { url: `http://analysis.test/${name}`, interval: '1h' } },
      });
      return [name, spec];
    }),
  );
  const spec = armadaChartGroupSpec.parse({
    chart_group: members,
    canary_lockstep: true,
    ...(deployers.length && { deployers }),
  });
  return planGroup({
    namespace: 'default',
    name: uniqueName('lockstep'),
    spec,
    charts,
    deployers: deployerSpecs,
  });
}
/** Deployers that run no version yet: their run is a first deploy. */
const firstDeploys = new Set<string>();

async function startGroup(
  members: string[],
  steps: Steps,
  deployers: string[] = [],
): Promise<WorkflowHandle<typeof groupWorkflow>> {
  return harness().client.workflow.start(groupWorkflow, {
    taskQueue: harness().taskQueue,
    workflowId: uniqueName('g'),
    args: [{ namespace: 'default', group: lockstepGroup(members, steps, deployers) }],
  });
}

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

/** A Deployer's run, which the group started under the Deployer's own workflow ID. */
const deployerRunOf = (name: string) =>
  harness().client.workflow.getHandle<(run: unknown) => Promise<DeployerOutcome>>(
    objectWorkflowId('Deployer', 'default', name),
  );

const canaryOf = (member: string) =>
  harness().client.workflow.getHandle<(run: unknown) => Promise<CanaryOutcome>>(
    canaryWorkflowId('default', member),
  );

/** Every member's canary outcome, once it ended. */
const outcomes = (members: string[]) => Promise.all(members.map((m) => canaryOf(m).result()));

/** Waits until every member's canary answers its progress query with `ready` true. */
async function membersUntil(
  members: string[],
  what: string,
  ready: (p: CanaryProgress) => boolean,
): Promise<void> {
  await eventually(
    what,
    async () => {
      for (const m of members) {
        const p = await canaryOf(m)
          .query(canaryProgressQuery)
          .catch(() => undefined);
        if (!p || !ready(p)) return undefined;
      }
      return true;
    },
    { timeoutMs: 30_000 },
  );
}

describe('lockstep canaries (canary_lockstep on a group)', () => {
  it('starts step k for no member before every member passed step k-1, then promotes all', async () => {
    const members = [uniqueName('web'), uniqueName('api'), uniqueName('db')];
    // api's canary takes 1.5 s longer to become Ready at each step: alone, web and db would run ahead.
    slowReadiness.set(members[1], 1500);
    const group = await startGroup(members, [
      { percent: 30, sleep: '1s' },
      { percent: 60, sleep: '1s' },
    ]);
    const result = await group.result();
    expect(result.failed).toEqual([]);
    expect(result.outcomes.map((o) => o.action)).toEqual(['upgraded', 'upgraded', 'upgraded']);

    const records = (await outcomes(members)).map((o) => {
      expect(o.result).toBe('promoted');
      return o.steps;
    });
    const time = (iso?: string) => Date.parse(iso!);
    for (let k = 1; k < 3; k++) {
      const lastPassed = Math.max(...records.map((steps) => time(steps[k - 1].endedAt)));
      for (const steps of records) expect(time(steps[k].startedAt)).toBeGreaterThanOrEqual(lastPassed);
    }
    // The fast members waited for the slow one: their step 2 began only after its step 1 ended,
    // which ended after theirs.
    const [web, api] = records;
    expect(time(api[0].endedAt)).toBeGreaterThan(time(web[0].endedAt));
    expect(time(web[1].startedAt)).toBeGreaterThanOrEqual(time(api[0].endedAt));
    for (const m of members) expect(helm.releases.get(m)?.revision).toBe(2);
  });

  it("rolls back every member when one member's analysis fails, and leaves every release at its old revision", async () => {
    const members = [uniqueName('web'), uniqueName('api')];
    // api passes step 1's check, then fails step 2's.
    analysis.set(`http://analysis.test/${members[1]}`, [true, false]);
    const group = await startGroup(members, [
      { percent: 30, sleep: '1s' },
      { percent: 60, sleep: '1s' },
    ]);
    const result = await group.result();
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

  it('takes approve, pause and rollback sent to the group as sent to every member', async () => {
    const members = [uniqueName('web'), uniqueName('api')];
    const group = await startGroup(members, [
      { percent: 30, approval: true },
      { percent: 60, sleep: '1h' },
    ]);
    // Both members wait at step 1's approval: the group shows that gate and one approval passes both.
    await membersUntil(members, 'every member waiting for approval', (p) => p.gate?.name === 'step 1 (30 %)');
    await eventually('the group opens the gate', async () => (await group.query(progressQuery)).gate?.name);
    expect(await group.executeUpdate(approveUpdate, { args: [{ by: 'ops' }] })).toBe(
      'approved step 1 (30 %)',
    );
    await membersUntil(members, 'every member holding step 2', (p) => p.step === 2 && p.waitingOn === 'hold');
    // The group's current details in the Temporal UI show the set as one table.
    const details = await eventually('the group details showing both members holding step 2', async () => {
      const text = await detailsOf(group);
      return members.every((m) => text.includes(`| ${m} | 2/3 | 60 % | Progressing | hold |`))
        ? text
        : undefined;
    });
    expect(details).toContain('| member | step | percent | state | waiting on |');
    for (const m of members)
      expect((await canaryOf(m).query(canaryProgressQuery)).approvals).toEqual([
        expect.objectContaining({ gate: 'step 1 (30 %)', by: 'ops' }),
      ]);

    await group.signal(pauseSignal, { by: 'ops', reason: 'metrics' });
    await membersUntil(members, 'every member paused by ops', (p) => p.paused?.by === 'ops');
    await group.signal(resumeSignal, { by: 'ops' });
    await membersUntil(members, 'every member resumed', (p) => !p.paused && p.waitingOn === 'hold');

    await group.signal(rollbackSignal, { by: 'ops', reason: 'bad release' });
    for (const o of await outcomes(members)) {
      expect(o.result).toBe('rolled-back');
      expect(o.reason).toBe('rollback requested by ops: bad release');
    }
    const result = await group.result();
    expect(result.outcomes).toEqual([]);
    for (const m of members) expect(helm.releases.get(m)?.revision).toBe(1);
  });

  it('promotes every member on a promote sent to the group, and upgrades every release', async () => {
    const members = [uniqueName('web'), uniqueName('api')];
    const group = await startGroup(members, [{ percent: 30, sleep: '1h' }]);
    await membersUntil(members, 'every member holding step 1', (p) => p.step === 1 && p.waitingOn === 'hold');
    expect(await group.executeUpdate(promoteUpdate, { args: [{ by: 'ops' }] })).toMatch(/^promoting/);
    for (const o of await outcomes(members)) {
      expect(o.result).toBe('promoted');
      expect(o.reason).toBe('promoted by ops');
    }
    expect((await group.result()).failed).toEqual([]);
    for (const m of members) expect(helm.releases.get(m)?.revision).toBe(2);
  });

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
  const steps = [
    { percent: 30, sleep: '1s' },
    { percent: 60, sleep: '1s' },
  ];
  /** Start and end times of each step, per member (charts' canaries, then the Deployer). */
  const time = (iso?: string) => Date.parse(iso!);
  function expectLockstep(records: { startedAt?: string; endedAt?: string }[][], through: number): void {
    for (let k = 1; k < through; k++) {
      const lastPassed = Math.max(...records.map((r) => time(r[k - 1].endedAt)));
      for (const r of records) expect(time(r[k].startedAt)).toBeGreaterThanOrEqual(lastPassed);
    }
  }

  it('steps two chart canaries and a Deployer together, then promotes all three', async () => {
    const charts = [uniqueName('web'), uniqueName('api')];
    const deployer = uniqueName('dpl');
    // The Deployer's new version takes 1.5 s longer to become Ready at each step: the charts wait for it.
    slowReadiness.set(`${deployer}/${deployer}-v2`, 1500);
    const group = await startGroup(charts, steps, [deployer]);
    const result = await group.result();
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
    expect((await group.query(progressQuery)).groups?.[0].charts.at(-1)).toMatchObject({
      chart: `Deployer/${deployer}`,
      release: `${deployer}-v2`,
      state: 'deployed',
    });
  });

  it("rolls back both charts and the Deployer when the Deployer's analysis fails; every release stays at its old revision", async () => {
    const charts = [uniqueName('web'), uniqueName('api')];
    const deployer = uniqueName('dpl');
    // The Deployer passes step 1's check, then fails step 2's.
    analysis.set(`http://analysis.test/${deployer}`, [true, false]);
    const group = await startGroup(charts, steps, [deployer]);
    const result = await group.result();
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
    if (savingHistories) {
      await saveHistory(group.workflowId, undefined, 'lockstep-deployer-rollback--group');
      await saveHistory(
        deployerRunOf(deployer).workflowId,
        undefined,
        'lockstep-deployer-rollback--deployer',
      );
    }
  });

  it("takes a Deployer's first deploy as no canary: the charts wait for it to be Ready, then step without it", async () => {
    const charts = [uniqueName('web'), uniqueName('api')];
    const deployer = uniqueName('dpl');
    firstDeploys.add(deployer);
    const group = await startGroup(charts, steps, [deployer]);
    const result = await group.result();
    expect(result.failed).toEqual([]);
    const dpl = await deployerRunOf(deployer).result();
    expect(dpl).toMatchObject({ result: 'deployed', version: 'v2' });
    expect(dpl.steps.map((s) => s.percent)).toEqual([100]);
    const records = (await outcomes(charts)).map((o) => o.steps);
    expectLockstep(records, 3);
    // No chart started its first step before the Deployer's one step (100 %) was Ready.
    for (const r of records) expect(time(r[0].startedAt)).toBeGreaterThanOrEqual(time(dpl.steps[0].readyAt));
  });
});

describe("a group's Deployers without lockstep", () => {
  it('a sequenced group rolls its Deployers out after its charts, in order, and counts them in its result', async () => {
    const namespace = uniqueName('ns');
    const chart = uniqueName('web');
    const deployers = [uniqueName('dpl'), uniqueName('dpl')];
    helm.releases.set(chart, { revision: 1, status: 'deployed', digest: 'old', lastDeployedRevision: 1 });
    for (const name of deployers)
      running.set(name, [{ deployment: `${name}-v1`, version: 'v1', replicas: 2 }]);
    const plan = planGroup({
      namespace: 'default',
      name: uniqueName('seq'),
      spec: armadaChartGroupSpec.parse({ chart_group: [chart], deployers, sequenced: true }),
      charts: {
        [chart]: armadaChartSpec.parse({
          release: chart,
          namespace,
          source: { type: 'local', location: chart },
        }),
      },
      deployers: Object.fromEntries(
        deployers.map((name) => [
          name,
          deployerSpec.parse({
            type: 'canary',
            deployment: { name, namespace: name, image: 'registry.test/app', version: 'v2', replicas: 2 },
            steps: [{ percent: 50 }],
          }),
        ]),
      ),
    });
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
