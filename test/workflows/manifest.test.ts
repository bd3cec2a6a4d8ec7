import { WorkflowFailedError } from '@temporalio/client';
import { chartWorkflow, driftWorkflow, manifestWorkflow } from '../../workflows';
import { approveSignal, pauseSignal, progressQuery, resumeSignal } from '../../workflows/messages';
import { temporalHarness, uniqueName } from '../helpers/env';
import { groupChildWorkflowId } from '../../core/plan/names';
import { demoPlan } from './demo-plan';
import { fakeHelm, waitFor, withWorker, type Call } from './fake-helm';
import { lockHolder } from '../../activities/runs';

/** A manifest of two groups: "platform" (sequenced: a, b) then "apps" (parallel: c, d). */
const plan = demoPlan;

const upgrades = (calls: Call[]) => calls.filter((c) => c.name === 'upgrade');
const byRelease = (calls: Call[], release: string) => upgrades(calls).find((c) => c.release === release)!;

describe('manifest workflow (stubbed activities, real dev server)', () => {
  it('runs groups in order, a sequenced group one chart at a time and a parallel group at once', async () => {
    // c's and d's upgrades each wait for the other to start: run one after the other, they fail.
    const fake = fakeHelm({ delayMs: 300, together: ['demo-c', 'demo-d'] });
    const outcome = await withWorker(
      fake,
      (h) =>
        h.client.workflow.execute(manifestWorkflow, {
          taskQueue: h.taskQueue,
          workflowId: uniqueName('m'),
          args: [{ plan: plan() }],
        }),
      'ordered',
    );
    expect(outcome.state).toBe('deployed');
    const [a, b, c, d] = ['demo-a', 'demo-b', 'demo-c', 'demo-d'].map((r) => byRelease(fake.calls, r));
    expect(b.start).toBeGreaterThanOrEqual(a.end!); // sequenced
    expect(Math.min(c.start, d.start)).toBeGreaterThanOrEqual(b.end!); // group order
    expect(Math.max(c.start, d.start)).toBeLessThan(Math.min(c.end!, d.end!)); // parallel: they overlap
  });

  it("writes a group's final status from the manifest, off its path, linked to the group's run", async () => {
    const fake = fakeHelm();
    const workflowId = uniqueName('m');
    const history = await withWorker(fake, async (h) => {
      await h.client.workflow.execute(manifestWorkflow, {
        taskQueue: h.taskQueue,
        workflowId,
        args: [{ plan: plan() }],
      });
      return h.client.workflow.getHandle(workflowId).fetchHistory();
    });
    for (const group of ['platform', 'apps'])
      expect(fake.statusWrites.filter((w) => w.object === `ArmadaChartGroup/${group}`).at(-1)).toEqual({
        object: `ArmadaChartGroup/${group}`,
        phase: 'Deployed',
        link: groupChildWorkflowId(workflowId, group),
        by: workflowId,
      });
    // platform's final status is scheduled by the workflow task that starts apps: not before it.
    const events = history.events ?? [];
    const startApps = events.find(
      (e) =>
        e.startChildWorkflowExecutionInitiatedEventAttributes?.workflowId ===
        groupChildWorkflowId(workflowId, 'apps'),
    )!.startChildWorkflowExecutionInitiatedEventAttributes!;
    const writtenWithIt = events
      .map((e) => e.activityTaskScheduledEventAttributes)
      .filter(
        (a) =>
          a?.activityType?.name === 'reportStatus' &&
          String(a.workflowTaskCompletedEventId) === String(startApps.workflowTaskCompletedEventId),
      )
      .map((a) => Buffer.from(a!.input!.payloads![0].data!).toString());
    expect(writtenWithIt).toEqual(
      expect.arrayContaining([
        expect.stringMatching(/"kind":"ArmadaChartGroup","namespace":"[^"]*","name":"platform"/),
      ]),
    );
  });

  it('applies nothing new when run again unchanged', async () => {
    const fake = fakeHelm();
    const p = plan();
    await withWorker(fake, async (h) => {
      await h.client.workflow.execute(manifestWorkflow, {
        taskQueue: h.taskQueue,
        workflowId: uniqueName('m'),
        args: [{ plan: p }],
      });
      const second = await h.client.workflow.execute(manifestWorkflow, {
        taskQueue: h.taskQueue,
        workflowId: uniqueName('m'),
        args: [{ plan: p }],
      });
      expect(second.groups.flatMap((g) => g.outcomes.map((o) => o.action))).toEqual([
        'unchanged',
        'unchanged',
        'unchanged',
        'unchanged',
      ]);
    });
    expect(upgrades(fake.calls)).toHaveLength(4);
  });

  it('pause holds before the next chart; resume goes on', async () => {
    const fake = fakeHelm();
    fake.close();
    await withWorker(
      fake,
      async (h) => {
        const handle = await h.client.workflow.start(manifestWorkflow, {
          taskQueue: h.taskQueue,
          workflowId: uniqueName('m'),
          args: [{ plan: plan() }],
        });
        await waitFor(() => upgrades(fake.calls).length === 1); // demo-a's upgrade is in flight
        await handle.signal(pauseSignal, { by: 'alice', reason: 'lunch' });
        fake.open();
        await waitFor(
          async () => (await handle.query(progressQuery)).groups[0].charts[0].state === 'deployed',
        );
        const paused = await handle.query(progressQuery);
        expect(paused.paused).toMatchObject({ by: 'alice', reason: 'lunch' });
        expect(upgrades(fake.calls).map((c) => c.release)).toEqual(['demo-a']); // b has not started
        await handle.signal(resumeSignal);
        expect((await handle.result()).state).toBe('deployed');
      },
      'pause-resume',
    );
    expect(upgrades(fake.calls)).toHaveLength(4);
  });

  it('waits at an approval gate until approved', async () => {
    const fake = fakeHelm();
    await withWorker(fake, async (h) => {
      const handle = await h.client.workflow.start(manifestWorkflow, {
        taskQueue: h.taskQueue,
        workflowId: uniqueName('m'),
        args: [{ plan: plan({ approval: { before: ['apps'] } }) }],
      });
      await waitFor(async () => (await handle.query(progressQuery)).phase === 'WaitingApproval');
      expect(upgrades(fake.calls).map((c) => c.release)).toEqual(['demo-a', 'demo-b']);
      await handle.signal(approveSignal, { by: 'bob' });
      expect((await handle.result()).state).toBe('deployed');
    });
    expect(upgrades(fake.calls)).toHaveLength(4);
  });

  it('waits while a drift repair holds a release (its lock), then deploys it', async () => {
    // Issue 32.3: a repair ran beside the lock, so a deploy could write between its read and its rollback.
    const fake = fakeHelm();
    const p = plan();
    const repair = heldRepair(fake);
    const harness = await temporalHarness({ activities: repair.activities });
    try {
      await harness.worker.runUntil(async () => {
        const repairRun = await repair.start(harness, p.groups[0].charts[0]);
        const manifest = await harness.client.workflow.start(manifestWorkflow, {
          taskQueue: harness.taskQueue,
          workflowId: uniqueName('m'),
          args: [{ plan: p }],
        });
        // The manifest finds demo-a's lock held by the repair and asks again: nothing is written meanwhile.
        await waitFor(() => repair.lockAsks() >= 2).finally(repair.release);
        expect(upgrades(fake.calls)).toEqual([]);
        expect(await repairRun.result()).toMatchObject({ result: 'none' });
        expect((await manifest.result()).state).toBe('deployed');
      });
    } finally {
      await harness.close();
    }
    expect(
      upgrades(fake.calls)
        .map((c) => c.release)
        .sort(),
    ).toEqual(['demo-a', 'demo-b', 'demo-c', 'demo-d']);
  });

  it("a rollback puts each release back under the release's lock: it waits while a drift repair holds one", async () => {
    // Issue 32.3: the saga wrote releases outside their lock, beside a repair of them.
    const fake = fakeHelm({ failOn: 'demo-c' });
    fake.releases.set('demo-a', { revision: 4, status: 'deployed', digest: 'old', lastDeployedRevision: 4 });
    const p = plan({ on_failure: 'rollback' });
    const repair = heldRepair(fake);
    let repairStarted: () => void = () => {};
    const started = new Promise<void>((r) => (repairStarted = r));
    const activities = {
      ...repair.activities,
      // The rollback's first step (c) waits until the repair holds demo-a.
      async helmUninstall(req: Parameters<NonNullable<typeof fake.activities.helmUninstall>>[0]) {
        await started;
        return fake.activities.helmUninstall!(req);
      },
    };
    const harness = await temporalHarness({ activities });
    try {
      await harness.worker.runUntil(async () => {
        const manifest = await harness.client.workflow.start(manifestWorkflow, {
          taskQueue: harness.taskQueue,
          workflowId: uniqueName('m'),
          args: [{ plan: p }],
        });
        await waitFor(() => upgrades(fake.calls).some((c) => c.release === 'demo-c'));
        await waitFor(
          async () =>
            (await harness.client.workflow.getHandle(p.groups[0].charts[0].workflowId).describe()).status
              .name !== 'RUNNING',
        );
        const repairRun = await repair.start(harness, p.groups[0].charts[0]);
        repairStarted();
        // c, d and b are put back; a waits for the repair: its lock is asked for again and again.
        await waitFor(() => repair.lockAsks() >= 2).finally(repair.release);
        const undone = fake.calls.filter((c) => c.name === 'rollback' || c.name === 'uninstall');
        expect(undone.map((c) => `${c.name} ${c.release}`)).toEqual([
          'uninstall demo-c',
          'uninstall demo-d',
          'uninstall demo-b',
        ]);
        expect(await repairRun.result()).toMatchObject({ result: 'none' });
        expect(await manifest.result().catch((e: unknown) => e)).toBeInstanceOf(WorkflowFailedError);
      });
    } finally {
      await harness.close();
    }
    expect(fake.releases.get('demo-a')?.digest).toBe('rolled-back-to-4');
  });

  it('refuses a second run on a release another run drives, naming that run', async () => {
    const fake = fakeHelm();
    fake.close();
    const p = plan();
    const chart = p.groups[0].charts[0];
    await withWorker(fake, async (h) => {
      await h.client.workflow.start(chartWorkflow, {
        taskQueue: h.taskQueue,
        workflowId: chart.workflowId,
        args: [{ ...chart }],
      });
      await waitFor(() => upgrades(fake.calls).length === 1);
      const err = await h.client.workflow
        .execute(manifestWorkflow, {
          taskQueue: h.taskQueue,
          workflowId: uniqueName('m'),
          args: [{ plan: p }],
        })
        .catch((e: unknown) => e);
      expect(String((err as WorkflowFailedError).cause?.message)).toContain(
        `release ${chart.namespace}/demo-a is being driven by another run (workflow ${chart.workflowId})`,
      );
      fake.open();
    });
  });
});

/**
 * A drift repair of one release, held in its first step (helmCheckDrift) until `release()`: it
 * holds the release's lock meanwhile. `lockAsks()`: how often a run asked who holds a lock.
 */
function heldRepair(fake: ReturnType<typeof fakeHelm>) {
  let release: () => void = () => {};
  const held = new Promise<void>((r) => (release = r));
  let asks = 0;
  return {
    activities: {
      ...fake.activities,
      async lockHolder(workflowId: string) {
        asks++;
        return lockHolder(workflowId);
      },
      async helmCheckDrift() {
        await held;
        return null;
      },
    },
    release: () => release(),
    lockAsks: () => asks,
    start: (
      h: Awaited<ReturnType<typeof temporalHarness>>,
      chart: { workflowId: string; release: string; namespace: string; chart: string },
    ) =>
      h.client.workflow.start(driftWorkflow, {
        taskQueue: h.taskQueue,
        workflowId: chart.workflowId,
        args: [
          {
            release: chart.release,
            namespace: chart.namespace,
            chart: { namespace: 'default', name: chart.chart },
            policy: 'repair' as const,
            objects: [],
          },
        ],
      }),
  };
}
