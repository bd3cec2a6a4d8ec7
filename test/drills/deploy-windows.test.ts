import { AppsV1Api } from '@kubernetes/client-node';
import { Client, Connection } from '@temporalio/client';
import { deployerSpec } from '../../api/deployer';
import { deployerRun, startRun } from '../../runs/requests';
import { deployerRolloutWorkflowId } from '../../core/plan/names';
import { groupOutcomeOf } from '../helpers/plan-of-one';
import type { DeployerOutcome } from '../../core/contracts/workflows';
import { canaryProgressQuery } from '../../workflows/messages';
import { isOpen, nextOpening } from '../../core/plan/windows';
import { kubeConfig, uniqueName } from '../helpers/env';
import {
  HOLD_PROMISE_MS,
  SHOWN_DEADLINE_TOLERANCE_MS,
  TIMER_FIRING_TOLERANCE_MS,
  eventTime,
  historyTimers,
  summaryOf,
  type HistoryTimer,
} from '../helpers/histories';
import { kubectl } from '../helpers/kube';
import { eventually, startDebugWorker, type ProductProcess } from '../helpers/processes';

/** Open 3 s of every 20 (at :00, :20, :40): a 4 s hold that starts inside one ends outside it. */
const WINDOWS = [{ kind: 'allow' as const, schedule: '0/20 * * * * *', duration: '3s', time_zone: 'UTC' }];
const HOLD_SECONDS = 4;

describe('deploy windows: a canary holds at its weight across a closed window (worker SIGKILLed meanwhile)', () => {
  const namespace = uniqueName('windows');
  const taskQueue = uniqueName('windows-queue');
  let connection: Connection;
  let client: Client;
  let worker: ProductProcess | undefined;

  beforeAll(async () => {
    connection = await Connection.connect({ address: process.env.TEMPORAL_ADDRESS! });
    client = new Client({ connection });
  });
  afterAll(async () => {
    await worker?.stop('SIGKILL');
    await connection.close();
    await kubectl('delete', 'namespace', namespace, '--wait=false');
  });

  it('the next step starts when the window opens (within 5 s across a worker restart), at the same weight until then', async () => {
    const name = uniqueName('web');
    const doc = (version: string, windows?: typeof WINDOWS) => ({
      kind: 'Deployer' as const,
      name,
      namespace: 'default',
      spec: deployerSpec.parse({
        type: 'canary',
        deployment: { name: 'web', namespace, image: 'web', version, replicas: 4 },
        steps: [{ percent: 25, sleep: HOLD_SECONDS }, { percent: 100 }],
        ...(windows && { windows }),
      }),
    });
    const apps = kubeConfig().makeApiClient(AppsV1Api);
    const replicas = async () =>
      (await apps.listNamespacedDeployment({ namespace })).items
        .map((d) => `${d.metadata!.name}=${d.spec!.replicas}`)
        .sort();
    worker = await startDebugWorker(taskQueue);
    // First deploy, without windows: web-1 at full size.
    await client.workflow.getHandle(await startRun(client, taskQueue, deployerRun(doc('1')))).result();

    const run = client.workflow.getHandle(await startRun(client, taskQueue, deployerRun(doc('2', WINDOWS))));
    // The canary steps in the run's rollout child (deployerRun's plan of one); the first deploy's
    // rollout ran under the same ID, without a window.
    const handle = client.workflow.getHandle(deployerRolloutWorkflowId('default', name));
    // Held once the window's timer is in history. The query shows the hold a moment before,
    // while the status write's local activity runs: a kill then fails that workflow task, and
    // its retry comes a task timeout (10 s) later.
    const held = await eventually(
      "the canary held at 25 % for the window, the window's timer in history",
      async () => {
        const events = (await handle.fetchHistory()).events ?? [];
        if (!historyTimers(events, 'deploy window opens at').length) return undefined;
        const p = await handle.query(canaryProgressQuery);
        return p.step === 1 && p.waitingOn === 'window' ? p : undefined;
      },
      { process: worker, pauseMs: 200 },
    );
    const step1 = held.history[0];
    const opening = nextOpening(WINDOWS, Date.parse(step1.endedAt!))!;
    expect(held.nextStepAt).toBe(new Date(opening).toISOString());
    expect(held.held).toMatchObject({ for: 'window', until: held.nextStepAt });
    // The step ended once the window had closed: its hold outlasts the window.
    expect(isOpen(WINDOWS, Date.parse(step1.endedAt!))).toBe(false);
    // Held at its current weight: 1 of 4 replicas new.
    expect(await replicas()).toEqual(['web-1=3', 'web-2=1']);

    // During the hold: kill -9, then a fresh worker process.
    await worker.stop('SIGKILL');
    expect(Date.now()).toBeLessThan(opening); // the kill came before the window opened
    worker = await startDebugWorker(taskQueue);

    const outcome = (await handle.result()) as DeployerOutcome;
    expect(outcome).toMatchObject({ result: 'promoted', version: '2', previous: '1' });
    expect((await groupOutcomeOf(run)).deployers).toEqual([{ name, ...outcome }]);
    expect(await replicas()).toEqual(['web-2=4']);

    const events = (await handle.fetchHistory()).events ?? [];
    const [windowTimer] = historyTimers(events, `deploy window opens at ${new Date(opening).toISOString()}`);
    expect(windowTimer?.fired).toBeDefined();
    const { fired, firedAt } = windowTimer as Required<HistoryTimer>;
    const nextStep = events.find(
      (e) =>
        (e.activityTaskScheduledEventAttributes || e.markerRecordedEventAttributes) &&
        summaryOf(e).includes('canary 100 %: scale new up') &&
        Number(e.eventId) > Number(fired.eventId),
    )!;
    const nextStepAt = eventTime(nextStep);
    console.log(
      `deploy windows: the window timer fired ${firedAt - windowTimer.deadline} ms from its deadline, which lay ${windowTimer.deadline - opening} ms from the opening; the next step was scheduled ${nextStepAt - opening} ms after the opening`,
    );
    // A server-side timer: the window opens on time whatever happened to the worker.
    expect(Math.abs(firedAt - windowTimer.deadline)).toBeLessThanOrEqual(TIMER_FIRING_TOLERANCE_MS);
    // Its deadline is the opening the canary showed, but for the showing task's processing time.
    expect(Math.abs(windowTimer.deadline - opening)).toBeLessThanOrEqual(SHOWN_DEADLINE_TOLERANCE_MS);
    // The next step needs a worker to take the task (the new process replays first), as in the crash drill.
    expect(nextStepAt).toBeGreaterThanOrEqual(opening);
    expect(nextStepAt - opening).toBeLessThanOrEqual(HOLD_PROMISE_MS);
    // Nothing ran twice: one scale-up per step.
    const scales = events
      .filter((e) => e.activityTaskScheduledEventAttributes || e.markerRecordedEventAttributes)
      .map(summaryOf)
      .filter((s) => s.includes('scale new up'));
    expect(scales).toEqual([
      `${namespace}/web-2 canary 25 %: scale new up: web-2 → 1`,
      `${namespace}/web-2 canary 100 %: scale new up: web-2 → 4`,
    ]);
  });
});
