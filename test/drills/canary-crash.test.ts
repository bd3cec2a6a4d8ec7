import { AppsV1Api } from '@kubernetes/client-node';
import { Client, Connection } from '@temporalio/client';
import { deployerSpec } from '../../api/deployer';
import { deployerRun, startRun } from '../../runs/requests';
import { deployerRolloutWorkflowId } from '../../core/plan/names';
import { groupOutcomeOf } from '../helpers/plan-of-one';
import type { DeployerOutcome } from '../../core/contracts/workflows';
import { canaryProgressQuery } from '../../workflows/messages';
import { kubeConfig, uniqueName } from '../helpers/env';
import {
  SHOWN_DEADLINE_TOLERANCE_MS,
  TIMER_FIRING_TOLERANCE_MS,
  HOLD_PROMISE_MS,
  stepAfter,
  historyTimers,
  summaryOf,
  type HistoryTimer,
} from '../helpers/histories';
import { kubectl } from '../helpers/kube';
import { WORKER_POLLING, eventually, startProcess, type ProductProcess } from '../helpers/processes';

const HOLD_SECONDS = 10;

/** The worker as production runs it, a process of its own so the drill can SIGKILL it. */
async function startWorker(taskQueue: string): Promise<ProductProcess> {
  const worker = startProcess('dist/worker/main.js', { ARMADA_TASK_QUEUE: taskQueue });
  await worker.printed(WORKER_POLLING);
  return worker;
}

describe('crash drill: SIGKILL the worker during a canary hold', () => {
  const namespace = uniqueName('crash');
  const taskQueue = uniqueName('crash-queue');
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

  it('the hold ends on its original deadline (±1 s), no step runs twice, the run completes', async () => {
    const doc = (version: string) => ({
      kind: 'Deployer' as const,
      name: uniqueName('web'),
      namespace: 'default',
      spec: deployerSpec.parse({
        type: 'canary',
        deployment: { name: 'web', namespace, image: 'web', version, replicas: 4 },
        steps: [{ percent: 25, sleep: HOLD_SECONDS }, { percent: 100 }],
      }),
    });
    worker = await startWorker(taskQueue);
    // First deploy: web-1 at full size.
    const first = doc('1');
    await client.workflow.getHandle(await startRun(client, taskQueue, deployerRun(first))).result();

    const change = { ...doc('2'), name: first.name };
    const run = client.workflow.getHandle(await startRun(client, taskQueue, deployerRun(change)));
    // The canary steps in the run's rollout child (deployerRun's plan of one); the first deploy's
    // rollout ran under the same ID, without a hold.
    const handle = client.workflow.getHandle(deployerRolloutWorkflowId('default', first.name));
    // In the hold once its timer is in history. The deadline shows a moment before, while the
    // status write's local activity runs: a kill then fails that workflow task, and its retry, a
    // task timeout (10 s) later, starts the hold anew with a later deadline.
    const holding = async () => {
      if (!historyTimers((await handle.fetchHistory()).events ?? [], ' — hold').length) return undefined;
      const progress = await handle.query(canaryProgressQuery);
      return progress.waitingOn === 'hold' ? progress : undefined;
    };
    const hold = await eventually("the hold's timer in history", holding, { pauseMs: 50 });
    const shownDeadline = Date.parse(hold.nextStepAt!);

    // Mid-hold: kill -9, then a fresh worker process.
    await new Promise((resolve) => setTimeout(resolve, 3000));
    await worker.stop('SIGKILL');
    worker = await startWorker(taskQueue);

    const outcome = (await handle.result()) as DeployerOutcome;
    expect(outcome).toMatchObject({ result: 'promoted', version: '2', previous: '1' });
    expect((await groupOutcomeOf(run)).deployers).toEqual([{ name: first.name, ...outcome }]);
    const replicas = (
      await kubeConfig().makeApiClient(AppsV1Api).listNamespacedDeployment({ namespace })
    ).items.map((d) => `${d.metadata!.name}=${d.spec!.replicas}`);
    expect(replicas).toEqual(['web-2=4']);

    const events = (await handle.fetchHistory()).events ?? [];
    const timers = historyTimers(events);
    expect(timers.map((t) => t.summary)).toEqual([`${namespace}/web-2 canary 25 % — hold ${HOLD_SECONDS}s`]);
    expect(timers[0].fired).toBeDefined();
    const { fired, firedAt, deadline } = timers[0] as Required<HistoryTimer>;
    const nextStepAt = stepAfter(events, fired)!;
    console.log(
      `crash drill: timer fired ${firedAt - deadline} ms from its deadline, which lay ${deadline - shownDeadline} ms from the one shown; the next step started ${nextStepAt - shownDeadline} ms after the deadline shown`,
    );
    // The hold is a server-side timer: it ends on its deadline whatever happened to the worker,
    expect(Math.abs(firedAt - deadline)).toBeLessThanOrEqual(TIMER_FIRING_TOLERANCE_MS);
    // the deadline shown before the kill, but for the showing task's processing time.
    expect(Math.abs(deadline - shownDeadline)).toBeLessThanOrEqual(SHOWN_DEADLINE_TOLERANCE_MS);
    // The promise itself: the step after the hold starts within HOLD_PROMISE_MS of the deadline shown.
    expect(Math.abs(nextStepAt - shownDeadline)).toBeLessThanOrEqual(HOLD_PROMISE_MS);
    // No step repeated: the 25 % step scaled the new Deployment to 1 exactly once.
    // A step's scale-up is a local activity: its record is a marker carrying the same summary.
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
