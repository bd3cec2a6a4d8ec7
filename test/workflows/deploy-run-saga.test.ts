import { WorkflowFailedError, type WorkflowExecutionInfo, type WorkflowHandle } from '@temporalio/client';
import { ApplicationFailure, CancelledFailure } from '@temporalio/common';
import { deployRun, manifestWorkflow } from '../../workflows';
import type { ManifestOutcome } from '../../core/contracts/workflows';
import { resumeOf } from '../../core/plan/finished-runs';
import { approveSignal, progressQuery, replanSignal, rollbackSignal } from '../../workflows/messages';
import { uniqueName, type Harness } from '../helpers/env';
import type { ManifestPlan } from '../../core/plan/plans';
import { saveHistory, savingHistories } from '../helpers/histories';
import { demoPlan } from './demo-plan';
import { fakeHelm, waitFor, withWorker, type Call } from './fake-helm';

/** A manifest of two groups: "platform" (sequenced: a, b) then "apps" (parallel: c, d). */
const plan = demoPlan;

const upgrades = (calls: Call[]) => calls.filter((c) => c.name === 'upgrade');

/** Whether a run waits at its gate before group apps. */
const atGate = async (run: WorkflowHandle) =>
  (await run.query(progressQuery)).gate?.name === 'before group apps';

/**
 * The saga and the modes of a manifest's run, the same scenarios and assertions through today's
 * tree (manifestWorkflow → groups → charts) and through the one-workflow run (deployRun). The
 * histories each saves with ARMADA_SAVE_HISTORIES=1 (the replay test's): the tree's, named after
 * its scenario, every workflow of it; the run's saga, as deploy-run--saga, and its re-plan (the
 * run that continued as new and the one it started) as deploy-run-replan--deployRun-N.
 */
const RUNS = [
  {
    workflow: manifestWorkflow,
    prefix: 'm',
    histories: { rollbackOnFailure: 'rollback-on-failure', replan: 'replan', saga: undefined },
  },
  {
    workflow: deployRun,
    prefix: 'run',
    histories: { rollbackOnFailure: undefined, replan: 'deploy-run-replan', saga: 'deploy-run--saga' },
  },
];

describe.each(RUNS)('$workflow.name: saga and modes (stubbed activities, real dev server)', (run) => {
  const { workflow, prefix, histories } = run;

  /**
   * Starts a run of `first` (specs demo@1), re-plans it with `next` (demo@2) at its gate before
   * apps, and approves that gate in the run that started over: the run's handle.
   */
  const replannedAtGate = async (h: Harness, workflowId: string, first: ManifestPlan, next: ManifestPlan) => {
    await h.client.workflow.start(workflow, {
      taskQueue: h.taskQueue,
      workflowId,
      args: [{ plan: first }],
      memo: { specs: 'ArmadaManifest/demo@1', mode: 'deploy' },
    });
    const latest = h.client.workflow.getHandle(workflowId);
    await waitFor(() => atGate(latest));
    await latest.signal(replanSignal, {
      input: { plan: next },
      memo: { specs: 'ArmadaManifest/demo@2', mode: 'deploy' },
    });
    await waitFor(async () => {
      const { memo } = await latest.describe();
      return memo?.specs === 'ArmadaManifest/demo@2' && (await atGate(latest));
    });
    await latest.signal(approveSignal, { by: 'bob' });
    return latest;
  };

  it('uninstall removes releases group by group in reverse, a sequenced group last chart first', async () => {
    const fake = fakeHelm();
    for (const release of ['demo-a', 'demo-b', 'demo-c', 'demo-d']) {
      fake.releases.set(release, { revision: 1, status: 'deployed', digest: 'd', lastDeployedRevision: 1 });
    }
    const outcome = await withWorker(fake, (h) =>
      h.client.workflow.execute(workflow, {
        taskQueue: h.taskQueue,
        workflowId: uniqueName(prefix),
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
    const err = await withWorker(fake, (h) =>
      h.client.workflow
        .execute(workflow, {
          taskQueue: h.taskQueue,
          workflowId: uniqueName(prefix),
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
    const workflowId = uniqueName(prefix);
    const err = await withWorker(
      fake,
      async (h) => {
        const failure = await h.client.workflow
          .execute(workflow, {
            taskQueue: h.taskQueue,
            workflowId,
            args: [{ plan: plan({ on_failure: 'rollback' }) }],
          })
          .catch((e: unknown) => e);
        if (histories.saga && savingHistories) await saveHistory(workflowId, undefined, histories.saga);
        return failure;
      },
      histories.rollbackOnFailure,
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

  it.each([
    ['continue', 'deployed', ['demo-a', 'demo-b', 'demo-c', 'demo-d'], []],
    ['rollback', 'failed', ['demo-a', 'demo-b'], ['uninstall demo-b', 'uninstall demo-a']],
    ['stop', 'failed', ['demo-a', 'demo-b'], []],
  ])(
    'an approval gate that times out with on_timeout %s ends %s',
    async (onTimeout, ending, upgraded, undone) => {
      const fake = fakeHelm();
      const result = await withWorker(fake, (h) =>
        h.client.workflow
          .execute(workflow, {
            taskQueue: h.taskQueue,
            workflowId: uniqueName(prefix),
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
    const workflowId = uniqueName(prefix);
    const runs = await withWorker(
      fake,
      async (h) => {
        const latest = await replannedAtGate(h, workflowId, plan(gate, ns), changed);
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
      histories.replan,
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
    const workflowId = uniqueName(prefix);
    const outcome = await withWorker(fake, async (h) => {
      // The same plan (only a description changed): the new run finds a and b unchanged.
      const latest = await replannedAtGate(h, workflowId, plan(spec, ns), plan(spec, ns));
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
    const outcome = await withWorker(fake, async (h) => {
      const handle = await h.client.workflow.start(workflow, {
        taskQueue: h.taskQueue,
        workflowId: uniqueName(prefix),
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
    const err = await withWorker(fake, async (h) => {
      const handle = await h.client.workflow.start(workflow, {
        taskQueue: h.taskQueue,
        workflowId: uniqueName(prefix),
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

  it('a retry takes up the failed run: what finished stays, no gate it passed waits again, the rest deploys', async () => {
    const fault = { failOn: 'demo-c' as string | undefined };
    const fake = fakeHelm(fault);
    const p = plan({ approval: { before: ['apps'] } });
    const { outcome, shown, retried } = await withWorker(fake, async (h) => {
      const failed = await h.client.workflow.start(workflow, {
        taskQueue: h.taskQueue,
        workflowId: uniqueName(prefix),
        args: [{ plan: p }],
      });
      await waitFor(() => atGate(failed));
      await failed.signal(approveSignal, { by: 'bob' });
      const err = await failed.result().catch((e: unknown) => e);
      expect(err).toBeInstanceOf(WorkflowFailedError);
      const cause = (err as WorkflowFailedError).cause as ApplicationFailure;
      expect(cause.message).toMatch(/^group apps failed: c: /);
      const { groups } = cause.details?.[0] as ManifestOutcome;
      const resume = resumeOf(failed.firstExecutionRunId, groups, false);
      expect(resume).toEqual({
        retryOf: failed.firstExecutionRunId,
        finished: { platform: ['a', 'b'], apps: ['d'] },
      });
      fault.failOn = undefined; // the fault is fixed; the retry takes up the run
      const before = fake.calls.length;
      const retry = await h.client.workflow.start(workflow, {
        taskQueue: h.taskQueue,
        workflowId: uniqueName(prefix),
        args: [{ plan: p, resume: resume as Exclude<typeof resume, { refused: string }> }],
      });
      const result = await retry.result();
      return { outcome: result, shown: await retry.query(progressQuery), retried: fake.calls.slice(before) };
    });
    expect(outcome.state).toBe('deployed');
    // The failed run wrote a and b, then c (failed) and d together; the retry touched c alone.
    const first = upgrades(fake.calls.slice(0, fake.calls.length - retried.length)).map((c) => c.release);
    expect([...first.slice(0, 2), ...first.slice(2).sort()]).toEqual([
      'demo-a',
      'demo-b',
      'demo-c',
      'demo-d',
    ]);
    expect(new Set(retried.map((c) => c.release).filter(Boolean))).toEqual(new Set(['demo-c']));
    expect(upgrades(retried).map((c) => c.release)).toEqual(['demo-c']);
    expect(outcome.groups.map((g) => [g.group, g.outcomes.map((o) => `${o.chart} ${o.action}`)])).toEqual([
      ['apps', ['c installed']],
    ]);
    expect(shown.groups.map((g) => [g.name, g.state, g.charts.map((c) => c.state)])).toEqual([
      ['platform', 'done', ['unchanged', 'unchanged']],
      ['apps', 'done', ['deployed', 'unchanged']],
    ]);
  });
});
