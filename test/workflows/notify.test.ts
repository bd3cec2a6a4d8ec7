import { Context } from '@temporalio/activity';
import { mkdtempSync } from 'node:fs';
import { tmpdir } from 'node:os';
import path from 'node:path';
import type * as activities from '../../activities';
import type { NotificationDelivery } from '../../activities/notifications/deliver';
import type { DeployerSpec } from '../../api/deployer';
import { notifications } from '../../api/notifications';
import { loadSteeringKey } from '../../runs/steering-key';
import { deployerWorkflow } from '../../workflows';
import { approveUpdate } from '../../workflows/messages';
import type { Carried } from '../../core/control';
import { notifierWorkflowId } from '../../core/plan/names';
import type { RunEvent } from '../../core/plan/notifications';
import { sharedWorker, uniqueName } from '../helpers/env';
import { saveHistory, savingHistories } from '../helpers/histories';
import { eventually } from '../helpers/processes';

/** Deliveries as the stub took them, by Deployment namespace; the first attempt of each run's first event fails. */
const delivered = new Map<string, RunEvent[]>();
const requests: NotificationDelivery[] = [];

const stubs: Partial<typeof activities> = {
  async observeOwnedDeployments() {
    return [{ deployment: 'nginx-1.25.3', version: '1.25.3', replicas: 10 }];
  },
  async createDeployerDeployment(req) {
    return `${req.name}-${req.version}`;
  },
  async scaleDeployment(req) {
    return req.replicas;
  },
  async waitForResources() {
    return { resources: [], summary: 'ready' };
  },
  async deleteDeployments() {},
  async reportStatus() {
    return { onCluster: false, tookMs: 0 };
  },
  async deliverNotification(req) {
    requests.push(req);
    const { attempt } = Context.current().info;
    const list = delivered.get(req.event.object.name) ?? [];
    if (list.length === 0 && attempt === 1) throw new Error('webhook answered HTTP 503');
    delivered.set(req.event.object.name, [...list, req.event]);
    return { status: 200 };
  },
};

const harness = sharedWorker({ activities: stubs });

/**
 * Starts Deployer `name` (namespace shop) moving nginx from 1.25.3 to 1.26.0, with `spec`'s steps
 * and more; `carried`: as the bridge starts it (its steering key).
 */
function startDeployer(
  name: string,
  workflowId: string,
  spec: Pick<DeployerSpec, 'steps'> & Partial<DeployerSpec>,
  carried?: Carried,
) {
  return harness().client.workflow.start(deployerWorkflow, {
    taskQueue: harness().taskQueue,
    workflowId,
    args: [
      {
        name,
        namespace: 'shop',
        spec: {
          type: 'canary',
          deployment: { name: 'nginx', namespace: 'shop', image: 'nginx', version: '1.26.0', replicas: 10 },
          ...spec,
        },
        ...(carried && { carried }),
      },
    ],
  });
}

describe('notifications of a Deployer run (stubbed activities)', () => {
  it('hands every event to its notifier in order, which retries a failed delivery and outlives the run', async () => {
    const name = uniqueName('nginx');
    const workflowId = uniqueName('dpl');
    const config = notifications.parse({ secret_ref: { name: 'hooks' }, format: 'slack' });
    const handle = await startDeployer(name, workflowId, {
      steps: [{ percent: 50, sleep: 1 }],
      service_account_name: 'deployer',
      notifications: config,
    });
    expect(await handle.result()).toMatchObject({ result: 'promoted' });
    const events = await eventually('four events delivered', async () => {
      const list = delivered.get(name) ?? [];
      return list.length >= 4 ? list : undefined;
    });
    expect(events.map((e) => [e.event, e.step?.percent])).toEqual([
      ['started', undefined],
      ['step-reached', 50],
      ['step-reached', 100],
      ['completed', undefined],
    ]);
    expect(
      events.every((e) => e.run.workflow_id === workflowId && e.run.run_id === handle.firstExecutionRunId),
    ).toBe(true);
    // Read in the Deployer's namespace as its ServiceAccount; the run carries the Secret's name only.
    expect(requests.find((r) => r.event.object.name === name)).toMatchObject({
      namespace: 'shop',
      notifications: config,
      actAs: { namespace: 'shop', name: 'deployer' },
    });

    const notifier = harness().client.workflow.getHandle(
      notifierWorkflowId(workflowId, handle.firstExecutionRunId, 1),
    );
    if (savingHistories) {
      await saveHistory(workflowId, undefined, 'deployer-notifications--deployer');
      // The notifier idles a minute before it ends: saved while it waits, after its deliveries.
      await saveHistory(notifier.workflowId, undefined, 'deployer-notifications--notifier');
    }
    await notifier.terminate('test over');
  });

  it('names who approved a gate, as the run recorded them, on every event after the approval', async () => {
    const name = uniqueName('nginx');
    const workflowId = uniqueName('dpl');
    // Started as the bridge starts it (its key), so a signed approval is the authenticated user's.
    const bridge = loadSteeringKey(path.join(mkdtempSync(path.join(tmpdir(), 'steering-')), 'key.pem'), {
      create: true,
    });
    const handle = await startDeployer(
      name,
      workflowId,
      {
        steps: [{ percent: 50, approval: true }],
        notifications: notifications.parse({ secret_ref: { name: 'hooks' } }),
      },
      { steering: { key: bridge.publicKey } },
    );
    const gate = 'step 1 (50 %)';
    await eventually('the gate announced', async () =>
      delivered.get(name)?.some((e) => e.event === 'waiting-approval') ? true : undefined,
    );
    const alice = 'system:serviceaccount:shop:alice';
    const req = { by: alice, gate, reason: 'change 42' };
    await handle.executeUpdate(approveUpdate, {
      args: [{ ...req, proof: bridge.prove(workflowId, 'approve', req) }],
    });
    expect(await handle.result()).toMatchObject({ result: 'promoted' });
    const events = await eventually('five events delivered', async () => {
      const list = delivered.get(name) ?? [];
      return list.length >= 5 ? list : undefined;
    });
    const approval = { gate, by: alice, reason: 'change 42', at: expect.any(String) };
    expect(events.map((e) => [e.event, e.approvals])).toEqual([
      ['started', undefined],
      ['step-reached', undefined],
      ['waiting-approval', undefined],
      ['step-reached', [approval]],
      ['completed', [approval]],
    ]);
    expect(JSON.stringify(events)).not.toMatch(/"proof"/);

    const notifier = harness().client.workflow.getHandle(
      notifierWorkflowId(workflowId, handle.firstExecutionRunId, 1),
    );
    if (savingHistories) {
      await saveHistory(workflowId, undefined, 'notify-approval--deployer');
      await saveHistory(notifier.workflowId, undefined, 'notify-approval--notifier');
    }
    await notifier.terminate('test over');
  });

  it('hands nothing when the Deployer has no notifications: no notifier, no delivery', async () => {
    const name = uniqueName('nginx');
    const workflowId = uniqueName('dpl');
    const handle = await startDeployer(name, workflowId, { steps: [{ percent: 50 }] });
    expect(await handle.result()).toMatchObject({ result: 'promoted' });
    const history = await handle.fetchHistory();
    expect(history.events!.some((e) => e.startChildWorkflowExecutionInitiatedEventAttributes)).toBe(false);
    expect(requests.some((r) => r.event.object.name === name)).toBe(false);
  });
});
