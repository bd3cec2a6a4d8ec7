import { WorkflowFailedError, type WorkflowExecutionInfo } from '@temporalio/client';
import { ApplicationFailure, CancelledFailure } from '@temporalio/common';
import { chartWorkflow, driftWorkflow, manifestWorkflow } from '../../workflows';
import type { ManifestOutcome } from '../../core/contracts/workflows';
import {
  approveSignal,
  pauseSignal,
  progressQuery,
  replanSignal,
  resumeSignal,
  rollbackSignal,
} from '../../workflows/messages';
import { temporalHarness, uniqueName } from '../helpers/env';
import { saveHistory, savingHistories } from '../helpers/histories';
import { groupChildWorkflowId } from '../../core/plan/names';
import { demoPlan } from './demo-plan';
import { fakeHelm, type Call } from './fake-helm';
import { lockHolder } from '../../activities/runs';

/** A manifest of two groups: "platform" (sequenced: a, b) then "apps" (parallel: c, d). */
const plan = demoPlan;

const upgrades = (calls: Call[]) => calls.filter((c) => c.name === 'upgrade');
const byRelease = (calls: Call[], release: string) => upgrades(calls).find((c) => c.release === release)!;

/**
 * Runs a test body against a worker with the stub activities. With ARMADA_SAVE_HISTORIES=1, a
 * body given a `history` name saves the histories of every workflow it ran (manifest, groups,
 * charts) as test/histories/<history>--<type>-<n>.json, for the replay test.
 */
async function withRun<T>(
  fake: ReturnType<typeof fakeHelm>,
  body: (h: Awaited<ReturnType<typeof temporalHarness>>) => Promise<T>,
  history?: string,
) {
  const harness = await temporalHarness({ activities: fake.activities });
  try {
    const result = await harness.worker.runUntil(body(harness));
    if (history && savingHistories) await saveHistories(harness, history);
    return result;
  } finally {
    await harness.close();
  }
}

/** Saves the histories of every workflow the harness's task queue ran, for the replay test. */
async function saveHistories(h: Awaited<ReturnType<typeof temporalHarness>>, name: string): Promise<void> {
  const runs = [];
  for await (const run of h.client.workflow.list({ query: `TaskQueue = '${h.taskQueue}'` })) runs.push(run);
  runs.sort((a, b) => a.workflowId.localeCompare(b.workflowId));
  for (const [i, run] of runs.entries())
    await saveHistory(run.workflowId, run.runId, `${name}--${run.type.replace(/Workflow$/, '')}-${i}`);
}

describe('manifest workflow (stubbed activities, real dev server)', () => {
  it('runs groups in order, a sequenced group one chart at a time and a parallel group at once', async () => {
    // c's and d's upgrades each wait for the other to start: run one after the other, they fail.
    const fake = fakeHelm({ delayMs: 300, together: ['demo-c', 'demo-d'] });
    const outcome = await withRun(
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
    const history = await withRun(fake, async (h) => {
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
    await withRun(fake, async (h) => {
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

  it('uninstall removes releases group by group in reverse, a sequenced group last chart first', async () => {
    const fake = fakeHelm();
    for (const release of ['demo-a', 'demo-b', 'demo-c', 'demo-d']) {
      fake.releases.set(release, { revision: 1, status: 'deployed', digest: 'd', lastDeployedRevision: 1 });
    }
    const outcome = await withRun(fake, (h) =>
      h.client.workflow.execute(manifestWorkflow, {
        taskQueue: h.taskQueue,
        workflowId: uniqueName('m'),
        args: [{ plan: plan(), mode: 'uninstall' }],
      }),
    );
    expect(outcome.state).toBe('uninstalled');
    const removed = fake.calls.filter((c) => c.name === 'uninstall').map((c) => c.release);
    expect(removed.slice(0, 2).sort()).toEqual(['demo-c', 'demo-d']); // group apps first, in parallel
    expect(removed.slice(2)).toEqual(['demo-b', 'demo-a']); // then platform, last chart first
    expect(fake.releases.size).toBe(0);
  });

  it('on_failure stop leaves what deployed and fails the run, naming the chart', async () => {
    const fake = fakeHelm({ failOn: 'demo-b' });
    const err = await withRun(fake, (h) =>
      h.client.workflow
        .execute(manifestWorkflow, {
          taskQueue: h.taskQueue,
          workflowId: uniqueName('m'),
          args: [{ plan: plan() }],
        })
        .catch((e: unknown) => e),
    );
    expect(err).toBeInstanceOf(WorkflowFailedError);
    expect(String((err as WorkflowFailedError).cause?.message)).toContain('group platform failed: b: ');
    expect(fake.calls.map((c) => c.name)).not.toContain('rollback');
    expect(upgrades(fake.calls).map((c) => c.release)).toEqual(['demo-a', 'demo-b']); // group apps never started
    expect(fake.releases.get('demo-a')?.revision).toBe(1);
  });

  it('on_failure rollback undoes every change of the run, newest first', async () => {
    const fake = fakeHelm({ failOn: 'demo-c' });
    fake.releases.set('demo-a', { revision: 4, status: 'deployed', digest: 'old', lastDeployedRevision: 4 });
    const err = await withRun(
      fake,
      (h) =>
        h.client.workflow
          .execute(manifestWorkflow, {
            taskQueue: h.taskQueue,
            workflowId: uniqueName('m'),
            args: [{ plan: plan({ on_failure: 'rollback' }) }],
          })
          .catch((e: unknown) => e),
      'rollback-on-failure',
    );
    expect(err).toBeInstanceOf(WorkflowFailedError);
    // Changes: a upgraded from 4, b installed, d installed, c written then failed. Undo newest first.
    const undo = fake.calls
      .filter((c) => c.name === 'rollback' || c.name === 'uninstall')
      .map((c) => `${c.name} ${c.release}`);
    expect(undo).toEqual(['uninstall demo-c', 'uninstall demo-d', 'uninstall demo-b', 'rollback demo-a']);
    expect(fake.releases.get('demo-a')?.digest).toBe('rolled-back-to-4');
    expect([...fake.releases.keys()]).toEqual(['demo-a']);
  });

  it('pause holds before the next chart; resume goes on', async () => {
    const fake = fakeHelm();
    fake.close();
    await withRun(
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
    await withRun(fake, async (h) => {
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

  it.each([
    ['continue', 'deployed', ['demo-a', 'demo-b', 'demo-c', 'demo-d'], []],
    ['rollback', 'failed', ['demo-a', 'demo-b'], ['uninstall demo-b', 'uninstall demo-a']],
    ['stop', 'failed', ['demo-a', 'demo-b'], []],
  ])(
    'an approval gate that times out with on_timeout %s ends %s',
    async (onTimeout, ending, upgraded, undone) => {
      const fake = fakeHelm();
      const result = await withRun(fake, (h) =>
        h.client.workflow
          .execute(manifestWorkflow, {
            taskQueue: h.taskQueue,
            workflowId: uniqueName('m'),
            args: [{ plan: plan({ approval: { before: ['apps'], timeout: '1s', on_timeout: onTimeout } }) }],
          })
          .then(
            (outcome) => outcome.state,
            (err: unknown) => (err as WorkflowFailedError).cause?.message,
          ),
      );
      expect(result).toBe(ending === 'deployed' ? 'deployed' : 'approval before group apps timed out');
      expect(
        upgrades(fake.calls)
          .map((c) => c.release)
          .sort(),
      ).toEqual(upgraded);
      const undo = fake.calls.filter((c) => c.name === 'rollback' || c.name === 'uninstall');
      expect(undo.map((c) => `${c.name} ${c.release}`)).toEqual(undone);
    },
  );

  it('a re-plan at an approval gate starts over with the new specs, keeping what deployed', async () => {
    const fake = fakeHelm();
    const ns = uniqueName('ns');
    const gate = { approval: { before: ['apps'] } };
    const changed = plan(gate, ns);
    changed.groups[0].charts[1].spec.values = { v: 2 }; // chart b changes; a, c and d do not
    const workflowId = uniqueName('m');
    const runs = await withRun(
      fake,
      async (h) => {
        await h.client.workflow.start(manifestWorkflow, {
          taskQueue: h.taskQueue,
          workflowId,
          args: [{ plan: plan(gate, ns) }],
          memo: { specs: 'ArmadaManifest/demo@1', mode: 'deploy' },
        });
        const latest = h.client.workflow.getHandle(workflowId);
        await waitFor(async () => (await latest.query(progressQuery)).phase === 'WaitingApproval');
        await latest.signal(replanSignal, {
          input: { plan: changed },
          memo: { specs: 'ArmadaManifest/demo@2', mode: 'deploy' },
        });
        await waitFor(async () => {
          const { memo } = await latest.describe();
          return (
            memo?.specs === 'ArmadaManifest/demo@2' &&
            (await latest.query(progressQuery)).phase === 'WaitingApproval'
          );
        });
        await latest.signal(approveSignal, { by: 'bob' });
        expect((await latest.result()).state).toBe('deployed');
        // Visibility lists a run as closed a moment after it closes.
        let runs: WorkflowExecutionInfo[] = [];
        await waitFor(async () => {
          runs = [];
          for await (const run of h.client.workflow.list({ query: `WorkflowId = '${workflowId}'` }))
            runs.push(run);
          return runs.length === 2 && runs.every((run) => run.status.name !== 'RUNNING');
        });
        return runs;
      },
      'replan',
    );
    expect(runs.map((r) => r.status.name).sort()).toEqual(['COMPLETED', 'CONTINUED_AS_NEW']);
    // The first run deployed a and b; the second upgraded only b (a is unchanged), then c and d.
    const order = upgrades(fake.calls).map((c) => c.release);
    expect(order.slice(0, 3)).toEqual(['demo-a', 'demo-b', 'demo-b']);
    expect(order.slice(3).sort()).toEqual(['demo-c', 'demo-d']);
    expect(fake.calls.filter((c) => c.name === 'rollback' || c.name === 'uninstall')).toEqual([]);
  });

  it('a rollback after a re-plan undoes the changes of the runs it continued from too, newest first', async () => {
    // Issue 32.1: the saga's record lived in one run only, so A's upgrade was kept.
    const fake = fakeHelm({ failOn: 'demo-c' });
    fake.releases.set('demo-a', { revision: 4, status: 'deployed', digest: 'old', lastDeployedRevision: 4 });
    const ns = uniqueName('ns');
    const spec = { on_failure: 'rollback', approval: { before: ['apps'] } };
    const workflowId = uniqueName('m');
    const outcome = await withRun(fake, async (h) => {
      await h.client.workflow.start(manifestWorkflow, {
        taskQueue: h.taskQueue,
        workflowId,
        args: [{ plan: plan(spec, ns) }],
        memo: { specs: 'ArmadaManifest/demo@1', mode: 'deploy' },
      });
      const latest = h.client.workflow.getHandle(workflowId);
      await waitFor(async () => (await latest.query(progressQuery)).phase === 'WaitingApproval');
      // The same plan (only a description changed): the new run finds a and b unchanged.
      await latest.signal(replanSignal, {
        input: { plan: plan(spec, ns) },
        memo: { specs: 'ArmadaManifest/demo@2', mode: 'deploy' },
      });
      await waitFor(async () => {
        const { memo } = await latest.describe();
        return (
          memo?.specs === 'ArmadaManifest/demo@2' &&
          (await latest.query(progressQuery)).phase === 'WaitingApproval'
        );
      });
      await latest.signal(approveSignal, { by: 'bob' });
      const err = await latest.result().catch((e: unknown) => e);
      expect(err).toBeInstanceOf(WorkflowFailedError);
      return (err as WorkflowFailedError).cause as ApplicationFailure;
    });
    const undo = fake.calls
      .filter((c) => c.name === 'rollback' || c.name === 'uninstall')
      .map((c) => `${c.name} ${c.release}`);
    expect(undo).toEqual(['uninstall demo-c', 'uninstall demo-d', 'uninstall demo-b', 'rollback demo-a']);
    expect(fake.releases.get('demo-a')?.digest).toBe('rolled-back-to-4');
    expect((outcome.details?.[0] as ManifestOutcome).rolledBack).toHaveLength(4);
  });

  it('a rollback signal mid-run stops new charts and undoes the run', async () => {
    const fake = fakeHelm();
    fake.close();
    const p = plan();
    const outcome = await withRun(fake, async (h) => {
      const handle = await h.client.workflow.start(manifestWorkflow, {
        taskQueue: h.taskQueue,
        workflowId: uniqueName('m'),
        args: [{ plan: p }],
      });
      await waitFor(() => upgrades(fake.calls).length === 1);
      await handle.signal(rollbackSignal, { reason: 'bad release' });
      fake.open();
      return handle.result();
    });
    expect(outcome.state).toBe('rolled-back');
    expect(upgrades(fake.calls).map((c) => c.release)).toEqual(['demo-a']); // the running chart finished, no other started
    expect(outcome.rolledBack).toEqual([`${p.groups[0].charts[0].namespace}/demo-a`]);
    expect(fake.releases.has('demo-a')).toBe(false);
  });

  it('a cancelled run lets the running chart finish, starts nothing more, rolls back and ends cancelled', async () => {
    const fake = fakeHelm();
    fake.close();
    const err = await withRun(fake, async (h) => {
      const handle = await h.client.workflow.start(manifestWorkflow, {
        taskQueue: h.taskQueue,
        workflowId: uniqueName('m'),
        args: [{ plan: plan({ on_failure: 'rollback' }) }],
      });
      await waitFor(() => upgrades(fake.calls).length === 1);
      await handle.cancel();
      fake.open();
      return handle.result().catch((e: unknown) => e);
    });
    expect(err).toBeInstanceOf(WorkflowFailedError);
    expect((err as WorkflowFailedError).cause).toBeInstanceOf(CancelledFailure);
    expect(upgrades(fake.calls).map((c) => [c.release, c.end !== undefined])).toEqual([['demo-a', true]]);
    expect(fake.calls.filter((c) => c.name === 'uninstall').map((c) => c.release)).toEqual(['demo-a']);
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
    await withRun(fake, async (h) => {
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

/** Polls a condition (the run's progress, the stub's calls) until it holds; fails after 20 s. */
async function waitFor(check: () => boolean | Promise<boolean>): Promise<void> {
  const deadline = Date.now() + 20_000;
  while (!(await check())) {
    if (Date.now() > deadline) throw new Error('condition not met within 20 s');
    await new Promise((r) => setTimeout(r, 50));
  }
}

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
