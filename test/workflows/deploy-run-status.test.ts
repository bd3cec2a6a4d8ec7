import type { WorkflowHandle } from '@temporalio/client';
import type * as activities from '../../activities';
import {
  approveSignal,
  pauseSignal,
  progressQuery,
  resumeSignal,
  rollbackSignal,
} from '../../workflows/messages';
import { groupPlanOfOne } from '../../core/plan/plans-of-one';
import type { RunEvent } from '../../core/plan/notifications';
import type { ManifestPlan } from '../../core/plan/plans';
import { uniqueName } from '../helpers/env';
import { eventually } from '../helpers/processes';
import type { HistoryEvent } from '../helpers/histories';
import { armadaChartSpec } from '../../api/chart';
import { demoPlan } from './demo-plan';
import { fakeHelm, withWorker } from './fake-helm';

type StatusRequest = Parameters<typeof activities.reportStatus>[0];

/** What one run wrote for its users: status writes by object (in order), its notifications, its ArmadaPhase values. */
interface Told {
  writes: Record<string, unknown[]>;
  /** Every write's run link, by object. */
  links: Record<string, string[]>;
  notified: { object: string; event: string; reason?: string; gate?: string; approvals?: string[] }[];
  phases: string[];
  outcome: unknown;
  /**
   * deployRun's writes of the manifest's progress as each group ends (workflows/run/reports.ts
   * groupEnded), which the tree did not make: taken out of `writes` to compare the rest with it.
   */
  groupEnds: unknown[];
}

/** A write of the manifest's progress as a group ended. */
const isGroupEnd = (object: string, w: unknown) =>
  object.startsWith('ArmadaManifest/') &&
  /^group \S+ done$/.test((w as { event: { message: string } }).event.message);

/** A status write as compared: the status without the run link and times, and the Event. */
function written({ status, event }: StatusRequest): unknown {
  return JSON.parse(
    JSON.stringify({ status, event }, (key, value: unknown) =>
      key === 'workflow' || (typeof value === 'string' && /^\d{4}-\d\d-\d\dT/.test(value))
        ? undefined
        : value,
    ),
  );
}

/** The ArmadaPhase values a run upserted, in order, from its history. */
function phasesIn(events: HistoryEvent[]): string[] {
  return events.flatMap((e) => {
    const field =
      e.upsertWorkflowSearchAttributesEventAttributes?.searchAttributes?.indexedFields?.ArmadaPhase;
    return field?.data ? [JSON.parse(Buffer.from(field.data).toString()) as string] : [];
  });
}

/**
 * Runs `input` (a plan, or a standalone group's GroupRun) as `workflow` (the tree: manifestWorkflow
 * → groupWorkflow → chartWorkflow, a standalone groupWorkflow, or deployRun) on stub Helm activities that record every status write and every notification
 * delivered; `steer` drives it (a pause, an approval) while it runs.
 */
async function told(
  workflow: 'manifestWorkflow' | 'groupWorkflow' | 'deployRun',
  input: object,
  opts: {
    failOn?: string;
    /** Upgrades wait until `steer` opens them. */
    held?: boolean;
    /** How many notifications the run makes (the notifiers deliver them after it). */
    notes: number;
    /** Releases there before the run, by name. */
    installed?: string[];
    steer?: (run: WorkflowHandle, fake: ReturnType<typeof fakeHelm>) => Promise<void>;
    mode?: 'uninstall';
  },
): Promise<Told> {
  const fake = fakeHelm({ failOn: opts.failOn });
  if (opts.held) fake.close();
  for (const release of opts.installed ?? [])
    fake.releases.set(release, {
      revision: 1,
      status: 'deployed',
      digest: 'before',
      lastDeployedRevision: 1,
    });
  Object.assign(fake.activities, canaryStubs);
  // A run held by the stub would keep the worker from shutting down when a check fails.
  const steer = async (run: WorkflowHandle) => {
    try {
      await opts.steer?.(run, fake);
    } finally {
      fake.open();
    }
  };
  const result: Told = { writes: {}, links: {}, notified: [], phases: [], outcome: undefined, groupEnds: [] };
  const reportStatus = fake.activities.reportStatus!;
  fake.activities.reportStatus = async (req) => {
    const object = `${req.kind}/${req.name}`;
    const w = written(req);
    if (isGroupEnd(object, w)) result.groupEnds.push(w);
    else (result.writes[object] ??= []).push(w);
    const link = (req.status as { workflow?: { id: string } }).workflow?.id;
    if (link) (result.links[object] ??= []).push(link);
    return reportStatus(req);
  };
  fake.activities.deliverNotification = async ({ event }: { event: RunEvent }) => {
    const { object, approvals } = event;
    result.notified.push({
      object: `${object.kind}/${object.name}`,
      event: event.event,
      reason: event.reason,
      gate: event.gate,
      ...(approvals && { approvals: approvals.map((a) => `${a.gate} by ${a.by}`) }),
    });
    return { status: 200 };
  };
  const workflowId = uniqueName('told');
  await withWorker(fake, async (h) => {
    const run = await h.client.workflow.start(workflow, {
      taskQueue: h.taskQueue,
      workflowId,
      args: [{ ...input, ...(opts.mode && { mode: opts.mode }) }],
    });
    await steer(run);
    result.outcome = await run.result().then(
      (r) => r.state,
      (err: Error) => `failed: ${(err.cause as Error | undefined)?.message}`,
    );
    // The notifiers deliver after the run's end.
    await eventually(
      `${opts.notes} notifications`,
      async () => (result.notified.length >= opts.notes ? true : undefined),
      { timeoutMs: 20_000, pauseMs: 50 },
    );
    result.phases = phasesIn((await run.fetchHistory()).events ?? []);
  });
  // deployRun's writes link to itself (a canary's, to the canary).
  for (const [object, links] of Object.entries(result.links))
    if (workflow === 'deployRun')
      expect([object, links.filter((l) => l !== workflowId && !l.endsWith('/canary'))]).toEqual([object, []]);
  return result;
}

/** Holds a's upgrade, pauses and resumes the run meanwhile, then approves the gate before apps. */
async function pauseThenApprove(run: WorkflowHandle, fake: ReturnType<typeof fakeHelm>): Promise<void> {
  const upgrading = () => (fake.calls.some((c) => c.name === 'upgrade') ? true : undefined);
  await eventually('demo-a upgrades', async () => upgrading(), { timeoutMs: 20_000, pauseMs: 50 });
  const writesOf = (phase: string) =>
    fake.statusWrites.filter((w) => w.phase === phase && !w.object.startsWith('ArmadaChart/')).length;
  await run.signal(pauseSignal, { by: 'alice', reason: 'look' });
  await eventually('the pause shown', async () => (writesOf('Paused') === 2 ? true : undefined), {
    timeoutMs: 20_000,
    pauseMs: 50,
  });
  await run.signal(resumeSignal, { by: 'alice' });
  await eventually('the resume shown', async () => (writesOf('Resumed') === 2 ? true : undefined), {
    timeoutMs: 20_000,
    pauseMs: 50,
  });
  fake.open();
  await eventually(
    'the gate before apps opens',
    async () => ((await run.query(progressQuery)).gate?.name === 'before group apps' ? true : undefined),
    { timeoutMs: 20_000, pauseMs: 50 },
  );
  await run.signal(approveSignal, { by: 'bob', reason: 'looks fine' });
}

const hook = { secret_ref: { name: 'hook' } };

/** A chart canary's activities: copies of the release's one Deployment, scaled as asked. */
const canaryStubs: Partial<typeof activities> = {
  async createCanaryCopies({ release }) {
    return [{ canary: `${release}-canary`, stable: release, replicas: 2, stableReplicas: 2 }];
  },
  async scaleDeployment({ replicas }) {
    return replicas;
  },
  async deleteDeployments() {},
};

/** demoPlan with chart c's upgrade a canary (two steps) whose events are notified. */
function canaryPlan(namespace: string): ManifestPlan {
  const plan = demoPlan({ notifications: hook }, namespace);
  const c = plan.groups[1].charts[0];
  c.spec = armadaChartSpec.parse({ ...c.spec, canary: { steps: [{ percent: 50 }] }, notifications: hook });
  return plan;
}

describe('deployRun tells users what the tree of workflows told them (stubbed activities, real dev server)', () => {
  it('writes the same status and Events per object, the same ArmadaPhase values and notifications: a pause, a gate, two groups', async () => {
    const namespace = uniqueName('ns');
    const plan = demoPlan({ approval: { before: ['apps'] }, notifications: hook }, namespace);
    const tree = await told('manifestWorkflow', { plan }, { held: true, steer: pauseThenApprove, notes: 3 });
    const run = await told('deployRun', { plan }, { held: true, steer: pauseThenApprove, notes: 3 });
    expect(run.outcome).toBe('deployed');
    expect(tree.outcome).toBe('deployed');
    // Per object in order; across objects the tree's order is not fixed (children run at once).
    expect(run.writes).toEqual(tree.writes);
    expect(Object.keys(run.writes).sort()).toEqual([
      'ArmadaChart/a',
      'ArmadaChart/b',
      'ArmadaChart/c',
      'ArmadaChart/d',
      'ArmadaChartGroup/apps',
      'ArmadaChartGroup/platform',
      'ArmadaManifest/demo',
    ]);
    const reasons = (object: string) =>
      run.writes[object].map((w) => (w as { event: { reason: string } }).event.reason);
    expect(reasons('ArmadaManifest/demo')).toEqual([
      'Running',
      'Running',
      'Paused',
      'Resumed',
      'WaitingApproval',
      'Running',
      'Deployed',
    ]);
    expect(reasons('ArmadaChartGroup/platform')).toEqual(['Deploying', 'Paused', 'Resumed', 'Deployed']);
    expect(tree.groupEnds).toEqual([]);
    expect(
      run.groupEnds.map((w) => (w as { status: { progress: { summary: string } } }).status.progress.summary),
    ).toEqual(['1/2 platform', '2/2 apps']);
    expect(reasons('ArmadaChart/c')).toEqual(['Deploying', 'Deployed']);
    expect(run.phases).toEqual(tree.phases);
    expect(run.phases).toEqual(['Running', 'Running', 'WaitingApproval', 'Running', 'Deployed']);
    expect(run.notified).toEqual(tree.notified);
    expect(run.notified.map((n) => n.event)).toEqual(['started', 'waiting-approval', 'completed']);
  });

  it('writes the same status, ArmadaPhase values and notifications when a chart of a parallel group fails', async () => {
    const namespace = uniqueName('ns');
    const plan = demoPlan({ notifications: hook }, namespace);
    const tree = await told('manifestWorkflow', { plan }, { failOn: 'demo-c', notes: 2 });
    const run = await told('deployRun', { plan }, { failOn: 'demo-c', notes: 2 });
    expect(run.outcome).toMatch(/^failed: group apps failed: c: helm upgrade demo-c failed: boom/);
    expect(run.outcome).toEqual(tree.outcome);
    expect(run.writes).toEqual(tree.writes);
    const last = (object: string) =>
      run.writes[object].at(-1) as { event: { reason: string; message: string } };
    expect(last('ArmadaChartGroup/apps').event).toMatchObject({
      reason: 'Failed',
      message: '1/2 charts deployed; failed: c',
    });
    expect(last('ArmadaChart/d').event.reason).toBe('Deployed');
    expect(run.phases).toEqual(tree.phases);
    expect(run.phases).toEqual(['Running', 'Running', 'Running', 'Failed']);
    expect(run.notified).toEqual(tree.notified);
    expect(run.notified.map((n) => n.event)).toEqual(['started', 'failed']);
  });

  it("forwards a chart canary's notifications and writes its status as the chart workflow did", async () => {
    const plan = canaryPlan(uniqueName('ns'));
    const installed = ['demo-c'];
    const tree = await told('manifestWorkflow', { plan }, { installed, notes: 4 });
    const run = await told('deployRun', { plan }, { installed, notes: 4 });
    expect(run.outcome).toBe('deployed');
    expect(run.writes).toEqual(tree.writes);
    expect(run.phases).toEqual(tree.phases);
    // Per notifier (the manifest's, the chart's) in order; the two deliver side by side.
    const byObject = (t: Told) => {
      const by: Record<string, Told['notified']> = {};
      for (const n of t.notified) (by[n.object] ??= []).push(n);
      return by;
    };
    expect(byObject(run)).toEqual(byObject(tree));
    expect(byObject(run)['ArmadaChart/c']?.map((n) => n.event)).toEqual(['step-reached', 'step-reached']);
  });

  it('writes the same status, ArmadaPhase values and notifications when a failed run rolls back (on_failure: rollback)', async () => {
    const plan = demoPlan({ on_failure: 'rollback', notifications: hook }, uniqueName('ns'));
    const installed = ['demo-a', 'demo-b'];
    const tree = await told('manifestWorkflow', { plan }, { failOn: 'demo-c', installed, notes: 2 });
    const run = await told('deployRun', { plan }, { failOn: 'demo-c', installed, notes: 2 });
    expect(run.outcome).toEqual(tree.outcome);
    expect(run.writes).toEqual(tree.writes);
    const reasons = (object: string) =>
      run.writes[object].map((w) => (w as { event: { reason: string } }).event.reason);
    expect(reasons('ArmadaManifest/demo').slice(-2)).toEqual(['RollingBack', 'Failed']);
    expect(run.phases).toEqual(tree.phases);
    expect(run.notified).toEqual(tree.notified);
  });

  it("counts a group done in the manifest's PROGRESS as it ends, so a run paused before its next group shows how far it got", async () => {
    const plan = demoPlan({}, uniqueName('ns'));
    // Its charts run at once: a pause while they upgrade lets them finish, and the run holds after it.
    plan.groups[0].sequenced = false;
    /** The manifest's status as kubectl reads it after every write so far (each a merge patch). */
    const manifestStatus = (fake: ReturnType<typeof fakeHelm>) =>
      Object.assign(
        {},
        ...fake.statusFields.filter((w) => w.object === 'ArmadaManifest/demo').map((w) => w.status),
      ) as { actual_state?: string; progress?: { summary: string } };
    const steer = async (run: WorkflowHandle, fake: ReturnType<typeof fakeHelm>) => {
      await eventually(
        'demo-a upgrades',
        async () => (fake.calls.some((c) => c.name === 'upgrade') ? true : undefined),
        {
          timeoutMs: 20_000,
          pauseMs: 50,
        },
      );
      await run.signal(pauseSignal, { by: 'alice', reason: 'look' });
      await eventually(
        'the pause shown',
        async () => (manifestStatus(fake).actual_state === 'paused' ? true : undefined),
        {
          timeoutMs: 20_000,
          pauseMs: 50,
        },
      );
      expect(manifestStatus(fake).progress?.summary).toBe('0/2 platform');
      fake.open(); // platform's charts finish; the run holds before apps
      await eventually(
        'platform counted done',
        async () => (manifestStatus(fake).progress?.summary === '1/2 platform' ? true : undefined),
        { timeoutMs: 20_000, pauseMs: 50 },
      );
      expect(manifestStatus(fake).actual_state).toBe('paused');
      expect((await run.query(progressQuery)).groups.map((g) => g.state)).toEqual(['done', 'pending']);
      await run.signal(resumeSignal, { by: 'alice' });
    };
    const run = await told('deployRun', { plan }, { held: true, steer, notes: 0 });
    expect(run.outcome).toBe('deployed');
  });

  it('writes the same status and ArmadaPhase values to uninstall, and notifies no one', async () => {
    const plan = demoPlan({ notifications: hook }, uniqueName('ns'));
    const installed = ['demo-a', 'demo-b', 'demo-c', 'demo-d'];
    const tree = await told('manifestWorkflow', { plan }, { installed, notes: 0, mode: 'uninstall' });
    const run = await told('deployRun', { plan }, { installed, notes: 0, mode: 'uninstall' });
    expect(run.outcome).toEqual(tree.outcome);
    expect(run.writes).toEqual(tree.writes);
    expect(run.writes['ArmadaChartGroup/apps'][0]).toMatchObject({ event: { reason: 'Uninstalling' } });
    expect(run.phases).toEqual(tree.phases);
    expect(run.notified).toEqual([]);
  });
});

/** A standalone group (the platform group of demoPlan, no manifest) as groupWorkflow's input and as deployRun's. */
function standaloneGroup(): { group: object; run: object } {
  const namespace = uniqueName('ns');
  const group = { group: demoPlan({}, namespace).groups[0], namespace };
  return { group, run: { plan: groupPlanOfOne(group) } };
}

/** Waits until a's and b's upgrades are held, then `signal`s the run. */
function whileUpgrading(signal: (run: WorkflowHandle) => Promise<void>, open = true) {
  return async (run: WorkflowHandle, fake: ReturnType<typeof fakeHelm>) => {
    const upgrading = () => (fake.calls.some((c) => c.name === 'upgrade') ? true : undefined);
    await eventually('an upgrade starts', async () => upgrading(), { timeoutMs: 20_000, pauseMs: 50 });
    await signal(run);
    if (open) fake.open();
  };
}

/** A pause and a resume, each shown on the group before the next. */
const pauseAndResume = whileUpgrading(async (run) => {
  const groupWrites = async (reason: string) =>
    ((await run.query(progressQuery)).paused === undefined) === (reason === 'Resumed') ? true : undefined;
  await run.signal(pauseSignal, { by: 'alice', reason: 'look' });
  await eventually('paused', () => groupWrites('Paused'), { timeoutMs: 20_000, pauseMs: 50 });
  await run.signal(resumeSignal, { by: 'alice' });
  await eventually('resumed', () => groupWrites('Resumed'), { timeoutMs: 20_000, pauseMs: 50 });
});

describe("deployRun tells users what a standalone group's groupWorkflow told them (plan of one; stubbed activities, real dev server)", () => {
  const reasonsOf = (t: Told, object: string) =>
    t.writes[object].map((w) => (w as { event: { reason: string } }).event.reason);

  it('writes the same status and Events of the group and its charts, and none of a manifest: a pause, then deployed', async () => {
    const { group, run: input } = standaloneGroup();
    const tree = await told('groupWorkflow', group, { held: true, steer: pauseAndResume, notes: 0 });
    const run = await told('deployRun', input, { held: true, steer: pauseAndResume, notes: 0 });
    expect(run.outcome).toBe('deployed');
    expect(run.writes).toEqual(tree.writes);
    expect(Object.keys(run.writes).sort()).toEqual([
      'ArmadaChart/a',
      'ArmadaChart/b',
      'ArmadaChartGroup/platform',
    ]);
    expect(reasonsOf(run, 'ArmadaChartGroup/platform')).toEqual([
      'Deploying',
      'Paused',
      'Resumed',
      'Deployed',
    ]);
    // The run's ArmadaPhase (a groupWorkflow kept the one it started with).
    expect(tree.phases).toEqual([]);
    expect(run.phases).toEqual(['Running', 'Running', 'Deployed']);
  });

  it('rolls back a rollback asked for as the group did, in its words', async () => {
    const { group, run: input } = standaloneGroup();
    const installed = ['demo-a', 'demo-b'];
    const rollBack = whileUpgrading((run) => run.signal(rollbackSignal, { by: 'carol', reason: 'bad' }));
    const tree = await told('groupWorkflow', group, { held: true, installed, steer: rollBack, notes: 0 });
    const run = await told('deployRun', input, { held: true, installed, steer: rollBack, notes: 0 });
    expect(run.outcome).toBe('rolled-back');
    expect(run.writes).toEqual(tree.writes);
    const last = (object: string) => run.writes[object].slice(-2);
    expect(last('ArmadaChartGroup/platform')).toMatchObject([
      { event: { reason: 'RollingBack', message: 'rollback requested by carol' } },
      { event: { reason: 'RolledBack', message: expect.stringMatching(/^rolled back: ns-[^/]+\/demo-a$/) } },
    ]);
  });

  it('writes the same failure of a chart of the group', async () => {
    const { group, run: input } = standaloneGroup();
    const tree = await told('groupWorkflow', group, { failOn: 'demo-a', notes: 0 });
    const run = await told('deployRun', input, { failOn: 'demo-a', notes: 0 });
    expect(run.outcome).toMatch(/^failed: group platform failed: a: helm upgrade demo-a failed: boom/);
    expect(run.writes).toEqual(tree.writes);
    expect(reasonsOf(run, 'ArmadaChartGroup/platform').at(-1)).toBe('Failed');
  });
});
