import { WorkflowFailedError } from '@temporalio/client';
import { ApplicationFailure } from '@temporalio/common';
import { deployRun } from '../../workflows';
import { uniqueName } from '../helpers/env';
import { eventually } from '../helpers/processes';
import { approveSignal, progressQuery } from '../../workflows/messages';
import { saveHistory, savingHistories, summaryOf, type HistoryEvent } from '../helpers/histories';
import { demoPlan } from './demo-plan';
import { fakeHelm, withWorker, type Call } from './fake-helm';
import { nextOpening } from '../../core/plan/windows';

/** demoPlan's groups: "platform" (sequenced: a, b), then "apps" (parallel: c, d). */
const GROUPS = [
  ['demo-a', 'demo-b'],
  ['demo-c', 'demo-d'],
];

const upgradeOf = (calls: Call[], release: string) =>
  calls.find((c) => c.name === 'upgrade' && c.release === release);

/** The release an activity of the run's history works on, from its summary (`helm upgrade demo-c in …`). */
function releaseOf(e: HistoryEvent): string | undefined {
  return /\bdemo-[a-d]\b/.exec(summaryOf(e))?.[0];
}

/**
 * Workflow tasks the run took from the last activity of one group (its completion) to the first
 * of the next (its scheduling): the round trips of a group transition.
 */
function transitionTasks(events: HistoryEvent[], from: string[], to: string[]): number {
  const scheduled = new Map<string, string | undefined>();
  for (const e of events)
    if (e.activityTaskScheduledEventAttributes) scheduled.set(String(e.eventId), releaseOf(e));
  const inGroup = (group: string[], release?: string) => release !== undefined && group.includes(release);
  const completedIn = (e: HistoryEvent) => {
    const done = e.activityTaskCompletedEventAttributes;
    return done ? inGroup(from, scheduled.get(String(done.scheduledEventId))) : false;
  };
  const lastDone = events.length - 1 - [...events].reverse().findIndex(completedIn);
  const firstNext = events.findIndex(
    (e) => e.activityTaskScheduledEventAttributes && inGroup(to, releaseOf(e)),
  );
  expect(lastDone).toBeGreaterThan(0);
  expect(firstNext).toBeGreaterThan(lastDone);
  return events.slice(lastDone, firstNext).filter((e) => e.workflowTaskCompletedEventAttributes).length;
}

describe('deployRun: one workflow walks the groups and charts (stubbed activities, real dev server)', () => {
  it('runs groups in order, a sequenced group one chart at a time and a parallel one at once, in ≤ 2 tasks a transition', async () => {
    // c's and d's upgrades each wait for the other to start: run one after the other, they fail.
    const fake = fakeHelm({ delayMs: 300, together: ['demo-c', 'demo-d'] });
    const workflowId = uniqueName('run');
    const { outcome, history } = await withWorker(fake, async (h) => {
      const run = await h.client.workflow.start(deployRun, {
        taskQueue: h.taskQueue,
        workflowId,
        args: [{ plan: demoPlan() }],
      });
      const result = await run.result();
      if (savingHistories) await saveHistory(workflowId, run.firstExecutionRunId, 'deploy-run--deployRun');
      return { outcome: result, history: await run.fetchHistory() };
    });
    expect(outcome.state).toBe('deployed');
    expect(outcome.groups.map((g) => [g.group, g.outcomes.map((o) => o.action).sort()])).toEqual([
      ['platform', ['installed', 'installed']],
      ['apps', ['installed', 'installed']],
    ]);
    const [a, b, c, d] = GROUPS.flat().map((r) => upgradeOf(fake.calls, r)!);
    expect(b.start).toBeGreaterThanOrEqual(a.end!); // sequenced: b after a
    expect(Math.min(c.start, d.start)).toBeGreaterThanOrEqual(b.end!); // apps after platform
    expect(Math.max(c.start, d.start)).toBeLessThan(Math.min(c.end!, d.end!)); // parallel: they overlap
    // No child workflow: the charts' steps are activities of the run itself.
    const events = history.events ?? [];
    expect(events.filter((e) => e.startChildWorkflowExecutionInitiatedEventAttributes)).toEqual([]);
    const tasks = transitionTasks(events, GROUPS[0], GROUPS[1]);
    console.log(`deployRun group transition platform → apps: ${tasks} workflow task(s)`);
    expect(tasks).toBeLessThanOrEqual(2);
  });

  it('stops at a failed chart: the rest of its group and the groups after it never run', async () => {
    const fake = fakeHelm({ failOn: 'demo-a' });
    const failure = await withWorker(fake, (h) =>
      h.client.workflow
        .execute(deployRun, {
          taskQueue: h.taskQueue,
          workflowId: uniqueName('run'),
          args: [{ plan: demoPlan() }],
        })
        .then(
          () => undefined,
          (err: unknown) => err,
        ),
    );
    expect(failure).toBeInstanceOf(WorkflowFailedError);
    const cause = (failure as WorkflowFailedError).cause as ApplicationFailure;
    expect(cause.type).toBe('ManifestFailed');
    expect(cause.message).toMatch(/^group platform failed: a: helm upgrade demo-a failed: boom/);
    expect(fake.calls.filter((c) => c.name === 'upgrade').map((c) => c.release)).toEqual(['demo-a']);
    expect(fake.calls.filter((c) => ['demo-b', 'demo-c', 'demo-d'].includes(c.release ?? ''))).toEqual([]);
  });

  it('waits at the approval gate before a group until approved, having run the groups before it', async () => {
    const fake = fakeHelm();
    const outcome = await withWorker(fake, async (h) => {
      const run = await h.client.workflow.start(deployRun, {
        taskQueue: h.taskQueue,
        workflowId: uniqueName('run'),
        args: [{ plan: demoPlan({ approval: { before: ['apps'] } }) }],
      });
      await eventually(
        'the gate before apps opens',
        async () => ((await run.query(progressQuery)).gate?.name === 'before group apps' ? true : undefined),
        { timeoutMs: 20_000, pauseMs: 50 },
      );
      const waiting = await run.query(progressQuery);
      expect(waiting.groups.map((g) => g.state)).toEqual(['done', 'waiting-approval']);
      expect(fake.calls.filter((c) => c.name === 'upgrade').map((c) => c.release)).toEqual(GROUPS[0]);
      await run.signal(approveSignal, { by: 'bob' });
      return run.result();
    });
    expect(outcome.state).toBe('deployed');
    expect(fake.calls.filter((c) => c.name === 'upgrade')).toHaveLength(4);
  });

  it("holds a chart's helm write by the chart's own deploy windows, as its chart workflow did; the rest of its group goes on", async () => {
    const plan = demoPlan();
    const d = plan.groups[1].charts.find((c) => c.chart === 'd')!;
    // One window a day for d, 12 hours from now: closed for the whole test, whatever the load.
    const opensAt = new Date(Date.now() + 12 * 3600_000);
    const windows = [
      {
        kind: 'allow' as const,
        schedule: `${opensAt.getUTCMinutes()} ${opensAt.getUTCHours()} * * *`,
        duration: '1m',
        time_zone: 'UTC',
      },
    ];
    d.spec = { ...d.spec, windows };
    const fake = fakeHelm();
    await withWorker(fake, async (h) => {
      const run = await h.client.workflow.start(deployRun, {
        taskQueue: h.taskQueue,
        workflowId: uniqueName('run'),
        args: [{ plan }],
      });
      const held = await eventually(
        'd held outside its windows',
        async () => (await run.query(progressQuery)).held,
        {
          timeoutMs: 60_000,
          pauseMs: 50,
        },
      );
      expect(held).toMatchObject({
        for: 'window',
        until: new Date(nextOpening(windows, Date.now())!).toISOString(),
      });
      const rows = async () =>
        (await run.query(progressQuery)).groups[1].charts.map((c) => `${c.chart} ${c.state}`).join(', ');
      await eventually(
        'c deployed beside held d',
        async () => (await rows()) === 'c deployed, d deploying' || undefined,
        {
          timeoutMs: 60_000,
          pauseMs: 50,
        },
      );
      expect(upgradeOf(fake.calls, 'demo-c')?.end).toBeDefined();
      expect(upgradeOf(fake.calls, 'demo-d')).toBeUndefined();
      await run.terminate('the test saw the hold');
    });
    expect(fake.statusWrites.filter((w) => w.object === 'ArmadaChart/d').map((w) => w.phase)).toContain(
      'OutsideWindow',
    );
  });
});
