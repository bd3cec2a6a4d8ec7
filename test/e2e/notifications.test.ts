import { Client, Connection } from '@temporalio/client';
import { randomBytes } from 'node:crypto';
import { armadaChartSpec, type ArmadaChartSpecInput } from '../../api/chart';
import { armadaChartGroupSpec } from '../../api/chart-group';
import { armadaManifestSpec } from '../../api/manifest';
import { manifestRun, startRun } from '../../runs/requests';
import type { ManifestDocuments } from '../../core/plan/manifest';
import type { JsonNotification } from '../../activities/notifications/payload';
import type { ChartOutcome } from '../../core/contracts/workflows';
import { approveUpdate } from '../../workflows/messages';
import { canaryWorkflowId, notifierWorkflowId } from '../../core/plan/names';
import { uniqueName } from '../helpers/env';
import { chartRuns } from '../helpers/chart-runs';
import { applyObjects, kubectl } from '../helpers/kube';
import { placesHolding } from '../helpers/leaks';
import { eventually, startDebugWorker, type ProductProcess } from '../helpers/processes';
import { freePort } from '../helpers/temporal';
import { startReceiver } from '../helpers/webhook-receiver';

/**
 * Webhook notifications on the real stack: the worker process (dist/, logging at debug), the dev
 * server, helm and the sandbox. The webhook URL lives in a Secret of the ArmadaChart's
 * namespace; it must reach no history and nothing the worker prints (it carries a token).
 */
describe('notifications: run events POSTed in order to a webhook named by a Secret', () => {
  const objects = uniqueName('nt-cr');
  const releases = uniqueName('nt-rel');
  const taskQueue = uniqueName('nt-queue');
  const token = () => `tok${randomBytes(8).toString('hex')}`;
  const paths = { json: `/json/${token()}`, slack: `/slack/${token()}`, manifest: `/manifest/${token()}` };
  const urls: string[] = [];
  let receiver: Awaited<ReturnType<typeof startReceiver>>;
  let worker: ProductProcess;
  let connection: Connection;
  let client: Client;
  const charts = chartRuns(() => client, objects, taskQueue);

  /** A Secret `name` of the charts' namespace whose key `url` is `url`, remembered as never to leak. */
  const webhookSecret = async (name: string, url: string) => {
    urls.push(url);
    await applyObjects(objects, [
      { apiVersion: 'v1', kind: 'Secret', metadata: { name }, stringData: { url } },
    ]);
  };
  const chart = (release: string, extra: Partial<ArmadaChartSpecInput>): ArmadaChartSpecInput => ({
    release,
    namespace: releases,
    source: { type: 'local', location: 'examples/charts/hello' },
    values: { replicaCount: 2, image: { tag: '1.0.0' } },
    wait: { timeout: 60 },
    ...extra,
  });
  const deploy = async (name: string, spec: ArmadaChartSpecInput) => {
    const handle = await charts.start(name, spec);
    const { runId } = charts.runs.at(-1)!;
    return { handle, runId: runId!, outcome: (await handle.result()) as ChartOutcome };
  };
  /** The run's notifier(s): added to the histories searched for leaks. */
  const notifierOf = (workflowId: string, runId: string) => {
    const id = notifierWorkflowId(workflowId, runId, 1);
    charts.runs.push({ workflowId: id });
    return id;
  };
  const events = (path: string) =>
    receiver.delivered(path).map((r) => (r.body as unknown as JsonNotification).event);

  beforeAll(async () => {
    receiver = await startReceiver({ [paths.slack]: 2 });
    await kubectl('create', 'namespace', objects);
    worker = await startDebugWorker(taskQueue);
    connection = await Connection.connect({ address: process.env.TEMPORAL_ADDRESS });
    client = new Client({ connection });
  });
  afterAll(async () => {
    await worker?.stop();
    await connection?.close();
    await receiver?.close();
    await kubectl('delete', 'namespace', objects, releases, '--ignore-not-found', '--wait=false');
  });

  it("delivers a chart's run and canary events in order, as JSON with the run link and commands", async () => {
    await webhookSecret('hooks-json', `${receiver.base}${paths.json}`);
    const spec = (tag: string) =>
      chart('web', {
        values: { replicaCount: 2, image: { tag } },
        canary: { steps: [{ percent: 50, sleep: 1 }] },
        notifications: { secret_ref: { name: 'hooks-json' } },
      });
    const install = await deploy('web', spec('1.0.0'));
    expect(install.outcome).toMatchObject({ action: 'installed' });
    // Each run has its notifier: order holds within a run, so the next run waits for this one's.
    await eventually('the install notified', async () => (events(paths.json).length >= 2 ? true : undefined));
    const upgrade = await deploy('web', spec('2.0.0'));
    expect(upgrade.outcome).toMatchObject({ action: 'upgraded' });
    notifierOf(install.handle.workflowId, install.runId);
    notifierOf(upgrade.handle.workflowId, upgrade.runId);

    await eventually(
      'six events delivered',
      async () => (events(paths.json).length >= 6 ? true : undefined),
      {
        process: worker,
      },
    );
    expect(events(paths.json)).toEqual([
      'started',
      'completed',
      'started',
      'step-reached',
      'step-reached',
      'completed',
    ]);
    const bodies = receiver.delivered(paths.json).map((r) => r.body as unknown as JsonNotification);
    const object = { kind: 'ArmadaChart', namespace: objects, name: 'web' };
    const canaryId = canaryWorkflowId(objects, 'web');
    const [, , started, half, full, completed] = bodies;
    expect(started).toMatchObject({
      object,
      run: { workflow_id: upgrade.handle.workflowId, run_id: upgrade.runId },
      reason: `${releases}/web`,
      commands: { rollback: `armadactl rollback act/web -n ${objects}` },
    });
    expect(half).toMatchObject({
      object,
      run: { workflow_id: canaryId },
      step: { number: 1, of: 2, percent: 50 },
      commands: { rollback: `armadactl rollback act/web -n ${objects}` },
    });
    expect(half.links.run).toBe(
      `http://localhost:8233/namespaces/default/workflows/${encodeURIComponent(canaryId)}/${half.run.run_id}/history`,
    );
    expect(full).toMatchObject({ step: { number: 2, of: 2, percent: 100 } });
    expect(completed).toMatchObject({
      object,
      commands: { rollback: `armadactl rollback act/web -n ${objects} --previous` },
    });
    expect(Date.parse(completed.time)).toBeGreaterThanOrEqual(Date.parse(full.time));
  });

  it('retries a receiver that fails the first attempts with backoff, still in order, in the Slack form', async () => {
    await webhookSecret('hooks-slack', `${receiver.base}${paths.slack}`);
    const spec = (tag: string) =>
      chart('api', {
        values: { replicaCount: 2, image: { tag } },
        canary: { steps: [{ percent: 50, approval: true }] },
        notifications: { secret_ref: { name: 'hooks-slack' }, format: 'slack' },
      });
    expect((await deploy('api', spec('1.0.0'))).outcome).toMatchObject({ action: 'installed' });
    const texts = () => receiver.delivered(paths.slack).map((r) => r.body.text as string);
    await eventually('the install notified, after the retries', async () =>
      texts().length >= 2 ? true : undefined,
    );
    const upgrade = await charts.start('api', spec('2.0.0'));
    const gate = 'step 1 (50 %)';
    const waiting = `ArmadaChart ${objects}/api waits for approval: step 1/2 at 50 %; gate ${gate}`;
    await eventually(
      'the approval wait notified',
      async () => (receiver.delivered(paths.slack).some((r) => r.body.text === waiting) ? true : undefined),
      { process: worker },
    );
    await client.workflow
      .getHandle(canaryWorkflowId(objects, 'api'))
      .executeUpdate(approveUpdate, { args: [{ by: 'notifications test', gate }] });
    expect(await upgrade.result()).toMatchObject({ action: 'upgraded' });

    await eventually('seven messages delivered', async () => (texts().length >= 7 ? true : undefined), {
      process: worker,
    });
    expect(texts()).toEqual([
      `ArmadaChart ${objects}/api started: ${releases}/api`,
      expect.stringMatching(new RegExp(`^ArmadaChart ${objects}/api completed: `)),
      `ArmadaChart ${objects}/api started: ${releases}/api`,
      `ArmadaChart ${objects}/api reached a canary step: step 1/2 at 50 %`,
      waiting,
      `ArmadaChart ${objects}/api reached a canary step: step 2/2 at 100 %`,
      expect.stringMatching(new RegExp(`^ArmadaChart ${objects}/api completed: `)),
    ]);
    // The first message was refused twice and taken at the third attempt, later each time.
    const first = receiver.attempts(paths.slack).slice(0, 3);
    expect(first.map((r) => [r.status, r.body.text])).toEqual([
      [500, texts()[0]],
      [500, texts()[0]],
      [200, texts()[0]],
    ]);
    expect(first[1].at - first[0].at).toBeGreaterThanOrEqual(900);
    expect(first[2].at - first[1].at).toBeGreaterThanOrEqual(1800);
    // The approval message carries the run link and the exact commands.
    const message = receiver.delivered(paths.slack).find((r) => r.body.text === waiting)!.body;
    const blocks = JSON.stringify(message.blocks);
    expect(blocks).toContain(
      `http://localhost:8233/namespaces/default/workflows/${encodeURIComponent(canaryWorkflowId(objects, 'api'))}/`,
    );
    expect(blocks).toContain(
      JSON.stringify(`armadactl approve act/api -n ${objects} --gate '${gate}'`).slice(1, -1),
    );
    expect(blocks).toContain(`armadactl rollback act/api -n ${objects}`);
  });

  it("delivers a manifest's start, its gate and its end, with the approve command for that gate", async () => {
    await webhookSecret('hooks-manifest', `${receiver.base}${paths.manifest}`);
    const docs: ManifestDocuments = {
      namespace: objects,
      manifest: {
        name: 'site',
        spec: armadaManifestSpec.parse({
          release_prefix: 'site',
          chart_groups: ['base', 'apps'],
          approval: { before: ['apps'] },
          notifications: { secret_ref: { name: 'hooks-manifest' } },
        }),
      },
      groups: {
        base: armadaChartGroupSpec.parse({ chart_group: ['db'] }),
        apps: armadaChartGroupSpec.parse({ chart_group: ['shop'] }),
      },
      charts: { db: armadaChartSpec.parse(chart('db', {})), shop: armadaChartSpec.parse(chart('shop', {})) },
    };
    const workflowId = await startRun(client, taskQueue, manifestRun(docs));
    const handle = client.workflow.getHandle(workflowId);
    charts.runs.push({ workflowId });
    const bodies = () => receiver.delivered(paths.manifest).map((r) => r.body as unknown as JsonNotification);
    const gate = 'before group apps';
    await eventually(
      'the gate notified',
      async () => (bodies().some((b) => b.gate === gate) ? true : undefined),
      {
        process: worker,
      },
    );
    await handle.executeUpdate(approveUpdate, { args: [{ by: 'notifications test', gate }] });
    expect(await handle.result()).toMatchObject({ state: 'deployed' });
    await eventually('three events delivered', async () => (bodies().length >= 3 ? true : undefined));
    const object = { kind: 'ArmadaManifest', namespace: objects, name: 'site' };
    const { runId } = await handle.describe();
    notifierOf(workflowId, runId);
    expect(bodies()).toEqual([
      expect.objectContaining({ event: 'started', object, reason: '2 groups' }),
      expect.objectContaining({
        event: 'waiting-approval',
        object,
        gate,
        commands: {
          approve: `armadactl approve amf/site -n ${objects} --gate '${gate}'`,
          rollback: `armadactl rollback amf/site -n ${objects}`,
        },
      }),
      expect.objectContaining({ event: 'completed', object, reason: 'deployed' }),
    ]);
    expect(bodies().every((b) => b.run.workflow_id === workflowId && b.run.run_id === runId)).toBe(true);
  });

  it('never holds a deploy for a receiver down for good; the failure is logged without the URL', async () => {
    const closed = await freePort();
    const downUrl = `http://127.0.0.1:${closed}/down/${token()}`;
    await webhookSecret('hooks-down', downUrl);
    const { handle, runId, outcome } = await deploy(
      'down',
      chart('down', { notifications: { secret_ref: { name: 'hooks-down' } } }),
    );
    expect(outcome).toMatchObject({ action: 'installed' });
    // The run ended without a delivery of its own: they are its notifier's, which goes on alone.
    const scheduled = (await handle.fetchHistory()).events!.map(
      (e) => e.activityTaskScheduledEventAttributes?.activityType?.name,
    );
    expect(scheduled).toContain('helmUpgradeInstall');
    expect(scheduled).not.toContain('deliverNotification');
    const notifier = client.workflow.getHandle(notifierOf(handle.workflowId, runId));
    expect((await notifier.describe()).status.name).toBe('RUNNING');
    const warning = await eventually(
      'the undelivered notification logged',
      async () =>
        worker
          .output()
          .split('\n')
          .find((line) => line.includes('notification not delivered') && line.includes('ECONNREFUSED')),
      { process: worker },
    );
    expect(warning).toContain(`ArmadaChart ${objects}/down`);
    expect(warning).toContain('webhook not reached: ECONNREFUSED');
  });

  it('keeps every webhook URL out of the histories and the worker output', async () => {
    const secrets = urls.map((url) => new URL(url).pathname);
    expect(secrets).toHaveLength(4);
    const { leaks } = await charts.searchHistories(secrets);
    expect(leaks).toEqual([]);
    expect(placesHolding(secrets, { worker: worker.output() })).toEqual([]);
  });
});
