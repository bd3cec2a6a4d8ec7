import type { WorkflowHandle } from '@temporalio/client';
import type * as activities from '../../activities';
import { deployRun, manifestWorkflow } from '../../workflows';
import { approveSignal, pauseSignal, progressQuery, resumeSignal } from '../../workflows/messages';
import type { RunEvent } from '../../core/plan/notifications';
import type { ManifestPlan } from '../../core/plan/plans';
import { uniqueName } from '../helpers/env';
import { eventually } from '../helpers/processes';
import type { HistoryEvent } from '../helpers/histories';
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
}

/** A status write as compared: the status without the run link and times, and the Event. */
function written({ status, event }: StatusRequest): unknown {
  return JSON.parse(
    JSON.stringify({ status, event }, (key, value: unknown) =>
      ['workflow', 'since', 'until'].includes(key) ? undefined : value,
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
 * Runs `plan` as `workflow` (the tree: manifestWorkflow → groupWorkflow → chartWorkflow, or
 * deployRun) on stub Helm activities that record every status write and every notification
 * delivered; `steer` drives it (a pause, an approval) while it runs.
 */
async function told(
  workflow: typeof manifestWorkflow | typeof deployRun,
  plan: ManifestPlan,
  opts: {
    failOn?: string;
    /** Upgrades wait until `steer` opens them. */
    held?: boolean;
    steer?: (run: WorkflowHandle, fake: ReturnType<typeof fakeHelm>) => Promise<void>;
  } = {},
): Promise<Told> {
  const fake = fakeHelm({ failOn: opts.failOn });
  if (opts.held) fake.close();
  // A run held by the stub would keep the worker from shutting down when a check fails.
  const steer = async (run: WorkflowHandle) => {
    try {
      await opts.steer?.(run, fake);
    } finally {
      fake.open();
    }
  };
  const result: Told = { writes: {}, links: {}, notified: [], phases: [], outcome: undefined };
  const reportStatus = fake.activities.reportStatus!;
  fake.activities.reportStatus = async (req) => {
    const object = `${req.kind}/${req.name}`;
    (result.writes[object] ??= []).push(written(req));
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
      args: [{ plan }],
    });
    await steer(run);
    result.outcome = await run.result().then(
      (r) => r.state,
      (err: Error) => `failed: ${(err.cause as Error | undefined)?.message}`,
    );
    // The notifier delivers after the run's end: the last event is the ending one.
    if (plan.notify)
      await eventually(
        'the ending notification',
        async () =>
          ['completed', 'failed'].includes(result.notified.at(-1)?.event ?? '') ? true : undefined,
        { timeoutMs: 20_000, pauseMs: 50 },
      );
    result.phases = phasesIn((await run.fetchHistory()).events ?? []);
  });
  for (const [object, links] of Object.entries(result.links))
    if (workflow === deployRun) expect([object, new Set(links)]).toEqual([object, new Set([workflowId])]);
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

describe('deployRun tells users what the tree of workflows told them (stubbed activities, real dev server)', () => {
  it('writes the same status and Events per object, the same ArmadaPhase values and notifications: a pause, a gate, two groups', async () => {
    const namespace = uniqueName('ns');
    const plan = demoPlan({ approval: { before: ['apps'] }, notifications: hook }, namespace);
    const tree = await told(manifestWorkflow, plan, { held: true, steer: pauseThenApprove });
    const run = await told(deployRun, plan, { held: true, steer: pauseThenApprove });
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
    expect(reasons('ArmadaChart/c')).toEqual(['Deploying', 'Deployed']);
    expect(run.phases).toEqual(tree.phases);
    expect(run.phases).toEqual(['Running', 'Running', 'WaitingApproval', 'Running', 'Deployed']);
    expect(run.notified).toEqual(tree.notified);
    expect(run.notified.map((n) => n.event)).toEqual(['started', 'waiting-approval', 'completed']);
  });

  it('writes the same status, ArmadaPhase values and notifications when a chart of a parallel group fails', async () => {
    const namespace = uniqueName('ns');
    const plan = demoPlan({ notifications: hook }, namespace);
    const tree = await told(manifestWorkflow, plan, { failOn: 'demo-c' });
    const run = await told(deployRun, plan, { failOn: 'demo-c' });
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
});
