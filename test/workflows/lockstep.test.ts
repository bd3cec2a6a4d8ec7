import type { WorkflowHandle } from '@temporalio/client';
import type * as activities from '../../activities';
import { armadaChartSpec } from '../../api/chart';
import { armadaChartGroupSpec } from '../../api/chart-group';
import { groupWorkflow, manifestWorkflow } from '../../workflows';
import type { CanaryOutcome } from '../../workflows/canary';
import {
  approveUpdate,
  canaryProgressQuery,
  pauseSignal,
  progressQuery,
  promoteUpdate,
  resumeSignal,
  rollbackSignal,
  type CanaryProgress,
} from '../../workflows/messages';
import { planGroup } from '../../workflows/plan/manifest';
import { canaryWorkflowId } from '../../workflows/plan/names';
import { sharedWorker, uniqueName } from '../helpers/env';
import { saveHistory, savingHistories } from '../helpers/histories';
import { eventually } from '../helpers/processes';
import { detailsOf, refusal } from '../helpers/runs';
import { fakeHelm } from './fake-helm';

/**
 * Lockstep canaries on the real Temporal dev server: a group run with canary_lockstep, its chart
 * runs and their canaries, with Helm and Kubernetes stubbed. Each chart's release exists at
 * revision 1, so its run upgrades it through a canary.
 */
const helm = fakeHelm();
/** Analysis answers per URL, in order; a URL with none left answers healthy. */
const analysis = new Map<string, boolean[]>();
/** Extra milliseconds the new side of a release takes to become Ready, per release. */
const slowReadiness = new Map<string, number>();
const deleted: string[] = [];
const stubs: Partial<typeof activities> = {
  ...helm.activities,
  async createCanaryCopies(req) {
    return [{ canary: `${req.release}-new`, stable: `${req.release}-old`, replicas: 2, stableReplicas: 2 }];
  },
  async scaleDeployment(req) {
    return req.replicas;
  },
  async waitForResources(req) {
    const canaries = (req.targets ?? []).filter((t) => t.fieldSelector?.endsWith('-new'));
    const delay = slowReadiness.get(req.release);
    if (canaries.length && delay) await new Promise((resolve) => setTimeout(resolve, delay));
    return helm.activities.waitForResources!(req);
  },
  async deleteDeployments(req) {
    deleted.push(...req.names);
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
function lockstepGroup(members: string[], steps: Steps) {
  const namespace = uniqueName('ns');
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
  const spec = armadaChartGroupSpec.parse({ chart_group: members, canary_lockstep: true });
  return planGroup({ namespace: 'default', name: uniqueName('lockstep'), spec, charts });
}

async function startGroup(members: string[], steps: Steps): Promise<WorkflowHandle<typeof groupWorkflow>> {
  return harness().client.workflow.start(groupWorkflow, {
    taskQueue: harness().taskQueue,
    workflowId: uniqueName('g'),
    args: [{ namespace: 'default', group: lockstepGroup(members, steps) }],
  });
}

/** A manifest run whose one group is a lockstep set. */
async function startManifest(
  members: string[],
  steps: Steps,
): Promise<WorkflowHandle<typeof manifestWorkflow>> {
  const group = lockstepGroup(members, steps);
  return harness().client.workflow.start(manifestWorkflow, {
    taskQueue: harness().taskQueue,
    workflowId: uniqueName('m'),
    args: [
      {
        plan: {
          manifest: uniqueName('m'),
          namespace: 'default',
          onFailure: 'stop',
          targetState: 'deployed',
          groups: [group],
        },
      },
    ],
  });
}

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
  });
});
