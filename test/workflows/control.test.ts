import { WorkflowFailedError, type WorkflowHandle } from '@temporalio/client';
import { ApplicationFailure } from '@temporalio/common';
import { armadaChartSpec } from '../../api/chart';
import { armadaChartGroupSpec } from '../../api/chart-group';
import type { DeployWindow } from '../../api/windows';
import { chartWorkflow, groupWorkflow, manifestWorkflow } from '../../workflows';
import {
  approveSignal,
  approveUpdate,
  pauseSignal,
  progressQuery,
  promoteUpdate,
  replanSignal,
  resumeSignal,
  rollbackSignal,
} from '../../workflows/messages';
import { rootMessage } from '../../core/failures';
import type { Progress } from '../../core/progress';
import { planGroup } from '../../core/plan/manifest';
import type { ManifestPlan } from '../../core/plan/plans';
import { sharedWorker, uniqueName } from '../helpers/env';
import { saveHistory, savingHistories } from '../helpers/histories';
import { eventually } from '../helpers/processes';
import { detailsOf, refusal } from '../helpers/runs';
import { demoPlan } from './demo-plan';
import { fakeHelm } from './fake-helm';
import { nextOpening } from '../../core/plan/windows';

/** A manifest of "platform" (a, b) then "apps" (c, d) behind an approval gate. */
const gatedPlan = (namespace?: string) => demoPlan({ approval: { before: ['apps'] } }, namespace);

/** A standalone chart's run input for a local chart, its spec with `extra`. */
const chartInput = (namespace: string, release: string, extra: Record<string, unknown> = {}) => ({
  chart: release,
  release,
  namespace,
  spec: armadaChartSpec.parse({ release, namespace, source: { type: 'local', location: 'x' }, ...extra }),
});

const progressOf = (handle: WorkflowHandle) => handle.query(progressQuery) as Promise<Progress>;
const until = (what: string, handle: WorkflowHandle, check: (p: Progress) => boolean) =>
  eventually(what, async () => ((await check(await progressOf(handle))) ? true : undefined), {
    timeoutMs: 30_000,
  });

describe('run control (stubbed activities, real dev server)', () => {
  const fake = fakeHelm();
  const harness = sharedWorker({ activities: fake.activities });
  afterEach(() => fake.open()); // a test that failed with helm held must not hold the next one
  const start = (workflowId: string, plan: ManifestPlan, memo?: Record<string, unknown>) =>
    harness().client.workflow.start(manifestWorkflow, {
      taskQueue: harness().taskQueue,
      workflowId,
      args: [{ plan }],
      ...(memo && { memo }),
    });
  /** A standalone chart's run of a local chart, under its release's workflow ID, its spec with `extra`. */
  const startChart = (namespace: string, release: string, extra: Record<string, unknown> = {}) =>
    harness().client.workflow.start(chartWorkflow, {
      taskQueue: harness().taskQueue,
      workflowId: `helm:${namespace}/${release}`,
      args: [chartInput(namespace, release, extra)],
    });

  it("a standalone chart's rollback after a re-plan puts the release back as it was before the first run", async () => {
    // Issue 32.1 for a chart: its continued run rolled back only its own write.
    const namespace = uniqueName('ns');
    const release = uniqueName('chain');
    fake.releases.set(release, { revision: 4, status: 'deployed', digest: 'old', lastDeployedRevision: 4 });
    const input = (v: number) => chartInput(namespace, release, { values: { v } });
    const upgradesOf = () => fake.calls.filter((c) => c.name === 'upgrade' && c.release === release);
    fake.close();
    const latest = await startChart(namespace, release, { values: { v: 2 } });
    await eventually('the first upgrade in helm', async () => (upgradesOf().length === 1 ? true : undefined));
    await latest.signal(replanSignal, {
      input: input(3),
      memo: { specs: 'ArmadaChart/chain@2', mode: 'deploy' },
    });
    // The first upgrade finishes (revision 5); the continued run's upgrade is held in its turn.
    fake.open();
    fake.close();
    await eventually('the second upgrade in helm', async () =>
      upgradesOf().length === 2 ? true : undefined,
    );
    await latest.signal(rollbackSignal, { by: 'dave' });
    fake.open();
    const outcome = await latest.result();
    expect(outcome).toMatchObject({ action: 'rolled-back', revision: 4 });
    const undo = fake.calls.filter((c) => c.name === 'rollback' && c.release === release);
    expect(undo).toHaveLength(2); // back to 5, then to 4: newest first
    expect(fake.releases.get(release)?.digest).toBe('rolled-back-to-4');
  });

  it('an approve sent before the gate is refused, and never passes a later gate', async () => {
    fake.close(); // platform's charts hold in helm
    const handle = await start(uniqueName('early'), gatedPlan());
    await until('platform deploying', handle, (p) => p.groups[0].state === 'running');
    expect(await refusal(handle.executeUpdate(approveUpdate, { args: [{ by: 'eve' }] }))).toMatch(
      /^no approval gate is waiting; a canary waits at its own gates/,
    );
    // The same through a signal: refused, and shown as refused.
    await handle.signal(approveSignal, { by: 'eve', reason: 'early' });
    await until('the signal shown as refused', handle, (p) => p.refused?.[0]?.verb === 'approve');
    fake.open();
    await until('the gate reached', handle, (p) => p.gate?.name === 'before group apps');
    const waiting = await progressOf(handle);
    expect(waiting.phase).toBe('WaitingApproval');
    expect(waiting.refused).toEqual([
      expect.objectContaining({ verb: 'approve', by: 'eve', why: expect.stringMatching(/no approval gate/) }),
    ]);
    expect(await refusal(handle.executeUpdate(approveUpdate, { args: [{ gate: 'before group db' }] }))).toBe(
      'the gate waiting is "before group apps", not "before group db"',
    );
    expect(
      await handle.executeUpdate(approveUpdate, {
        args: [{ by: 'bob', reason: 'ok', gate: 'before group apps' }],
      }),
    ).toBe('approved before group apps');
    expect((await handle.result()).state).toBe('deployed');
    if (savingHistories) await saveHistory(handle.workflowId, undefined, 'control-early-approve--manifest');
  });

  it('a run paused at its gate stays paused through a re-plan, with who, why and since', async () => {
    const ns = uniqueName('ns');
    const workflowId = uniqueName('paused');
    const handle = await start(workflowId, gatedPlan(ns), { specs: 'ArmadaManifest/demo@1', mode: 'deploy' });
    await until('the gate reached', handle, (p) => p.phase === 'WaitingApproval');
    await handle.signal(pauseSignal, { by: 'alice', reason: 'freeze' });
    const { paused } = await progressOf(handle);
    // The UI shows the same facts as the query: the pause and the gate it holds at.
    await eventually('the pause in the current details', async () =>
      /paused by alice \(freeze\)/.test(await detailsOf(handle)) ? true : undefined,
    );
    expect(await detailsOf(handle)).toMatch(/before group apps/);
    const changed = gatedPlan(ns);
    changed.groups[1].charts[0].spec.values = { v: 2 };
    await handle.signal(replanSignal, {
      input: { plan: changed },
      memo: { specs: 'ArmadaManifest/demo@2', mode: 'deploy' },
    });
    const latest = harness().client.workflow.getHandle(workflowId);
    await eventually('the run continued as new', async () =>
      (await latest.describe()).memo?.specs === 'ArmadaManifest/demo@2' ? true : undefined,
    );
    const after = await progressOf(latest);
    expect(after.paused).toEqual(paused); // the same pause: by, reason and since
    expect(after.paused).toMatchObject({ by: 'alice', reason: 'freeze' });
    // Paused before its first group: it has not reached its gate again.
    expect(after.gate).toBeUndefined();
    expect(await refusal(latest.executeUpdate(approveUpdate, { args: [{}] }))).toMatch(/no approval gate/);
    await latest.signal(resumeSignal);
    await until('the gate reached after resume', latest, (p) => p.gate?.name === 'before group apps');
    await latest.executeUpdate(approveUpdate, { args: [{ by: 'bob' }] });
    const outcome = await latest.result();
    expect(outcome.state).toBe('deployed');
    if (savingHistories) {
      await saveHistory(workflowId, handle.firstExecutionRunId, 'control-paused-replan--manifest-0');
      await saveHistory(workflowId, undefined, 'control-paused-replan--manifest-1');
    }
  });

  it('promote is refused by a run with no canary, approve by a group with no gates', async () => {
    fake.close();
    const manifest = await start(uniqueName('m'), gatedPlan());
    expect(await refusal(manifest.executeUpdate(promoteUpdate, { args: [{}] }))).toMatch(
      /^promote steers a canary/,
    );
    const namespace = uniqueName('ns');
    const group = await harness().client.workflow.start(groupWorkflow, {
      taskQueue: harness().taskQueue,
      workflowId: uniqueName('g'),
      args: [
        {
          namespace: 'default',
          group: planGroup({
            namespace: 'default',
            name: 'solo',
            spec: armadaChartGroupSpec.parse({ chart_group: ['x'] }),
            charts: {
              x: armadaChartSpec.parse({ release: 'x', namespace, source: { type: 'local', location: 'x' } }),
            },
          }),
        },
      ],
    });
    expect(await refusal(group.executeUpdate(approveUpdate, { args: [{}] }))).toMatch(
      /^no approval gate is waiting; a group has no approval gates/,
    );
    fake.open();
    await manifest.signal(rollbackSignal, { by: 'test' });
    await manifest.result().catch(() => undefined);
    expect((await group.result()).outcomes).toHaveLength(1);
  });

  it('a standalone chart pauses before it writes its release, and resumes', async () => {
    const namespace = uniqueName('ns');
    const release = uniqueName('solo');
    // Started with the pause, so the pause is in its first workflow task.
    const handle = await harness().client.workflow.signalWithStart(chartWorkflow, {
      taskQueue: harness().taskQueue,
      workflowId: `helm:${namespace}/${release}`,
      signal: pauseSignal,
      signalArgs: [{ by: 'carol' }],
      args: [
        {
          chart: release,
          release,
          namespace,
          spec: armadaChartSpec.parse({ release, namespace, source: { type: 'local', location: 'x' } }),
        },
      ],
    });
    // Observed and prepared, then held at the safe point: nothing written while paused.
    await eventually('prepared', async () =>
      fake.calls.some((c) => c.name === 'prepare') ? true : undefined,
    );
    expect((await progressOf(handle)).paused?.by).toBe('carol');
    expect(fake.calls.filter((c) => c.release === release && c.name === 'upgrade')).toEqual([]);
    await handle.signal(resumeSignal);
    const outcome = await handle.result();
    expect(outcome.action).toBe('installed');
    if (savingHistories) await saveHistory(handle.workflowId, undefined, 'control-chart-pause--chart');
  });

  it('a standalone chart outside its deploy windows holds before it writes its release, and installs at the opening', async () => {
    const namespace = uniqueName('ns');
    const release = uniqueName('window');
    // One window a minute, opening 5 s from now (the run starts well before it), 30 s long.
    const at = new Date(Date.now() + 5_000);
    const windows: DeployWindow[] = [
      { kind: 'allow', schedule: `${at.getUTCSeconds()} * * * * *`, duration: '30s', time_zone: 'UTC' },
    ];
    const opening = nextOpening(windows, Date.now())!;
    const handle = await startChart(namespace, release, { windows });
    const held = await eventually('held outside its windows', async () => (await progressOf(handle)).held);
    expect(held).toMatchObject({ for: 'window', until: new Date(opening).toISOString() });
    expect(fake.calls.filter((c) => c.release === release && c.name === 'upgrade')).toEqual([]);
    expect((await handle.result()).action).toBe('installed');
    expect(Date.now()).toBeGreaterThanOrEqual(opening);
    if (savingHistories) await saveHistory(handle.workflowId, undefined, 'windows-chart--chart');
  });
  it('a standalone chart cancelled while helm runs ends cancelled, not stuck', async () => {
    const namespace = uniqueName('ns');
    const release = uniqueName('cancel');
    fake.close();
    const handle = await startChart(namespace, release);
    await eventually('helm running', async () =>
      fake.calls.some((c) => c.release === release && c.name === 'upgrade') ? true : undefined,
    );
    await handle.cancel();
    fake.open();
    // It ends (before, its pause follower's wait rejected unhandled and failed every task after).
    const ended = await handle.result().then(
      () => 'completed',
      (err: unknown) => rootMessage(err as WorkflowFailedError),
    );
    expect(ended).toMatch(/cancel/i);
  });
});

describe('status writes off the critical path', () => {
  const fake = fakeHelm();
  const harness = sharedWorker({
    activities: {
      ...fake.activities,
      // What a missing RBAC rule for the status subresource gives: final, not retried.
      async reportStatus() {
        throw ApplicationFailure.nonRetryable(
          'HTTP 403: armadamanifests.armada.airshipit.org/status is forbidden',
          'Forbidden',
        );
      },
    },
  });

  it('a status write that keeps failing is reported, and the deploy still succeeds', async () => {
    const plan = gatedPlan();
    plan.groups[1].approval = undefined;
    const handle = await harness().client.workflow.start(manifestWorkflow, {
      taskQueue: harness().taskQueue,
      workflowId: uniqueName('status'),
      args: [{ plan }],
    });
    const outcome = await handle.result();
    expect(outcome.state).toBe('deployed');
    const progress = await progressOf(handle);
    expect(progress.statusWriteFailures?.count).toBeGreaterThan(1);
    expect(progress.statusWriteFailures?.last).toMatch(/HTTP 403: .*forbidden/);
  });
});
