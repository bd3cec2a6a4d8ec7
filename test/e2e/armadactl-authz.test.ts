import { mkdtemp, readFile, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import path from 'node:path';
import type { JsonNotification } from '../../activities/notifications/payload';
import { ACTION_ANNOTATION } from '../../runs/annotations';
import { manifestWorkflowId } from '../../runs/targets';
import { progressQuery } from '../../workflows/messages';
import { armadactlAs, tenant, type Tenant } from '../helpers/armadactl';
import { sharedWorker } from '../helpers/env';
import { applyObjects, installCrds, kubectl } from '../helpers/kube';
import { eventually, startBridge, type ProductProcess } from '../helpers/processes';
import { startReceiver } from '../helpers/webhook-receiver';

const repo = path.resolve(__dirname, '../..');
const example = path.join(repo, 'examples/sequenced-manifest.yaml');

describe('who may steer a run: armadactl steers through the API server as the caller (sandbox cluster, bridge process, Temporal dev server)', () => {
  const harness = sharedWorker();
  let a: Tenant;
  let b: Tenant;
  let bridge: ProductProcess;
  let workflowId: string;
  let receiver: Awaited<ReturnType<typeof startReceiver>>;
  /** The run's notifications, as its webhook received them. */
  const notified = () => receiver.delivered('/hooks').map((r) => r.body as unknown as JsonNotification);
  const progress = () => harness().client.workflow.getHandle(workflowId).query(progressQuery);
  /** The signals the run received so far, by name, from its history. */
  const signals = async () =>
    ((await harness().client.workflow.getHandle(workflowId).fetchHistory()).events ?? [])
      .map((e) => e.workflowExecutionSignaledEventAttributes?.signalName)
      .filter((name) => name !== undefined && name !== null);
  const annotations = async () =>
    JSON.parse(await kubectl('get', 'amf', 'demo', '-n', b.namespace, '-o', 'json')).metadata.annotations ??
    {};

  beforeAll(async () => {
    await installCrds();
    const dir = await mkdtemp(path.join(tmpdir(), 'armadactl-authz-'));
    [a, b] = await Promise.all([tenant('tenant-a', dir), tenant('tenant-b', dir)]);
    // Tenant B's manifest on the cluster, run by the bridge; it waits at its first gate, before
    // any chart, so it stays running while the tenants try to steer it. Its events go to a webhook.
    receiver = await startReceiver();
    await applyObjects(b.namespace, [
      {
        apiVersion: 'v1',
        kind: 'Secret',
        metadata: { name: 'hooks' },
        stringData: { url: `${receiver.base}/hooks` },
      },
    ]);
    const file = path.join(dir, 'manifest.yaml');
    const manifest = (await readFile(example, 'utf8'))
      .replaceAll('namespace: demo', `namespace: ${b.namespace}`)
      .replace(
        '  on_failure: rollback',
        '  on_failure: rollback\n  approval:\n    before: [platform]\n  notifications:\n    secret_ref:\n      name: hooks',
      );
    await writeFile(file, manifest);
    await kubectl('apply', '-n', b.namespace, '-f', file);
    bridge = startBridge(b.namespace, { ARMADA_TASK_QUEUE: harness().taskQueue });
    workflowId = manifestWorkflowId(b.namespace, 'demo');
    await eventually(
      'the run waiting at its gate',
      async () => ((await progress()).phase === 'WaitingApproval' ? true : undefined),
      { process: bridge },
    );
  });

  afterAll(async () => {
    await bridge?.stop();
    await receiver?.close();
    await harness()
      .client.workflow.getHandle(workflowId)
      .terminate('test over')
      .catch(() => undefined);
    await kubectl('delete', 'namespace', a.namespace, b.namespace, '--wait=false');
  });

  it("refuses tenant A pausing tenant B's run: the API server names the user and the right, and nothing is written or sent", async () => {
    const { code, stderr } = await armadactlAs(a.kubeconfig, 'pause', 'demo', '-n', b.namespace);
    expect(stderr).toMatch(/^armadactl pause: cannot read ArmadaManifest .*\/demo: HTTP 403: /);
    expect(stderr).toContain(`User "${a.username}" cannot get resource "armadamanifests"`);
    expect(code).toBe(1);
    expect((await annotations())[ACTION_ANNOTATION]).toBeUndefined();
    expect(await signals()).toEqual([]);
  });

  it("lets tenant B pause its own run through the cluster: the bridge's answer names the ServiceAccount, as the run does", async () => {
    const { code, stdout } = await armadactlAs(
      b.kubeconfig,
      'pause',
      'demo',
      '-n',
      b.namespace,
      '--reason',
      'mine',
    );
    expect(stdout).toBe(
      `${b.username} asked to pause (mine): pausing at the next safe point (${workflowId})`,
    );
    expect(code).toBe(0);
    const paused = await eventually('the run paused', async () => (await progress()).paused);
    expect(paused).toMatchObject({ by: b.username, reason: 'mine' });
    // Taken: the annotations are gone, `by` with them.
    expect(Object.keys(await annotations()).filter((k) => k.startsWith('armada.airshipit.org/'))).toEqual([
      'armada.airshipit.org/author',
    ]);
  });

  it("exits 1 with the bridge's refusal when the run refuses the command", async () => {
    const { code, stderr } = await armadactlAs(b.kubeconfig, 'pause', 'demo', '-n', b.namespace);
    expect(stderr).toMatch(
      new RegExp(
        `^armadactl pause: ${b.username} asked to pause: refused: pause refused by .*: paused already since`,
      ),
    );
    expect(code).toBe(1);
  });

  it('refuses --as-temporal-admin to a tenant where the cluster answers, naming the right it lacks, and sends nothing', async () => {
    const before = await signals();
    const { code, stderr } = await armadactlAs(
      a.kubeconfig,
      'resume',
      'demo',
      '-n',
      b.namespace,
      '--as-temporal-admin',
    );
    expect(stderr).toBe(
      `armadactl resume: you (${a.username}) may not update armadapolicies.armada.airshipit.org: --as-temporal-admin is a platform administrator's path where a cluster answers; steer without it, through the cluster`,
    );
    expect(code).toBe(1);
    expect(await signals()).toEqual(before);
  });

  it('lets a platform administrator steer Temporal directly, recorded as temporal-admin:$USER', async () => {
    const admin = process.env.KUBECONFIG!;
    expect((await armadactlAs(admin, 'resume', 'demo', '-n', b.namespace, '--as-temporal-admin')).code).toBe(
      0,
    );
    await eventually('the run resumed', async () => ((await progress()).paused ? undefined : true));
    expect((await armadactlAs(admin, 'pause', 'demo', '-n', b.namespace, '--as-temporal-admin')).code).toBe(
      0,
    );
    const paused = await eventually('the run paused again', async () => (await progress()).paused);
    expect(paused.by).toBe('temporal-admin:ops-alice');
  });

  it('the audit trail of an approved gate names the user the API server authenticated: the Event, the run, armadactl status and history, the notifications', async () => {
    expect((await armadactlAs(b.kubeconfig, 'resume', 'demo', '-n', b.namespace)).code).toBe(0);
    const { code, stdout } = await armadactlAs(
      b.kubeconfig,
      'approve',
      'demo',
      '-n',
      b.namespace,
      '--gate',
      'before group platform',
      '--reason',
      'change 42',
    );
    expect(stdout).toMatch(new RegExp(`^${b.username} asked to approve \\(change 42\\): `));
    expect(code).toBe(0);
    // The object's Event.
    const events = JSON.parse(
      await kubectl('get', 'events', '-n', b.namespace, '--field-selector', 'reason=Action', '-o', 'json'),
    ).items.map((e: { message: string }) => e.message);
    expect(events).toContain(stdout);
    // The run: its progress and the approve Update in its history.
    expect((await progress()).approvals).toEqual([
      expect.objectContaining({ gate: 'before group platform', by: b.username, reason: 'change 42' }),
    ]);
    // armadactl status and history, as any reader of the run sees them.
    const status = await armadactlAs(b.kubeconfig, 'status', 'demo', '-n', b.namespace);
    expect(status.stdout).toContain(b.username);
    const history = await armadactlAs(b.kubeconfig, 'history', 'demo', '-n', b.namespace);
    expect(history.stdout.split('\n')[0]).toContain('approved by');
    expect(history.stdout).toContain(`${b.username} (before group platform)`);
    // The notifications: the gate announced without an approver, then the run's next event (its
    // end) names who approved it.
    const approved = await eventually(
      'an event after the approval notified',
      async () => notified().find((n) => n.approvals),
      { timeoutMs: 120_000 },
    );
    expect(notified().find((n) => n.event === 'waiting-approval')).toMatchObject({
      gate: 'before group platform',
    });
    expect(notified().find((n) => n.event === 'waiting-approval')!.approvals).toBeUndefined();
    expect(approved.approvals).toEqual([
      { gate: 'before group platform', by: b.username, reason: 'change 42', at: expect.any(String) },
    ]);
  });
});
