import { mkdtemp, readFile, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import path from 'node:path';
import { main } from '../../cli/main';
import { manifestWorkflowId } from '../../runs/targets';
import { progressQuery } from '../../workflows/messages';
import { armadactlAs, tenant, type Tenant } from '../helpers/armadactl';
import { sharedWorker } from '../helpers/env';
import { kubectl } from '../helpers/kube';
import { eventually } from '../helpers/processes';

const repo = path.resolve(__dirname, '../..');
const example = path.join(repo, 'examples/sequenced-manifest.yaml');

describe('who may steer a run: armadactl asks the API server (sandbox cluster, Temporal dev server)', () => {
  const harness = sharedWorker();
  let a: Tenant;
  let b: Tenant;
  let workflowId: string;
  const progress = () => harness().client.workflow.getHandle(workflowId).query(progressQuery);
  /** The signals the run received so far, by name, from its history. */
  const signals = async () =>
    ((await harness().client.workflow.getHandle(workflowId).fetchHistory()).events ?? [])
      .map((e) => e.workflowExecutionSignaledEventAttributes?.signalName)
      .filter((name) => name !== undefined && name !== null);

  beforeAll(async () => {
    const dir = await mkdtemp(path.join(tmpdir(), 'armadactl-authz-'));
    [a, b] = await Promise.all([tenant('tenant-a', dir), tenant('tenant-b', dir)]);
    // Tenant B's manifest, started from a file by an administrator; it waits at its first gate,
    // before any chart, so it stays running while the tenants try to steer it.
    const file = path.join(dir, 'manifest.yaml');
    const manifest = (await readFile(example, 'utf8'))
      .replaceAll('namespace: demo', `namespace: ${b.namespace}`)
      .replace('  on_failure: rollback', '  on_failure: rollback\n  approval:\n    before: [platform]');
    await writeFile(file, manifest);
    process.env.ARMADA_TASK_QUEUE = harness().taskQueue;
    const applied: string[] = [];
    const push = (line: string) => applied.push(line);
    expect(await main(['apply', '-f', file, '-n', b.namespace], push, push)).toBe(0);
    workflowId = manifestWorkflowId(b.namespace, 'demo');
    await eventually('the run waiting at its gate', async () =>
      (await progress()).phase === 'WaitingApproval' ? true : undefined,
    );
  });

  afterAll(async () => {
    await harness()
      .client.workflow.getHandle(workflowId)
      .terminate('test over')
      .catch(() => undefined);
    await kubectl('delete', 'namespace', a.namespace, b.namespace, '--wait=false');
  });

  it("refuses tenant A pausing tenant B's run, naming the missing permission, and sends nothing", async () => {
    const { code, stderr } = await armadactlAs(a.kubeconfig, 'pause', 'demo', '-n', b.namespace);
    expect(stderr).toBe(
      `armadactl pause: you (${a.username}) may not patch armadamanifests.armada.airshipit.org ${b.namespace}/demo`,
    );
    expect(code).toBe(1);
    expect(await signals()).toEqual([]);
    expect((await progress()).paused).toBeUndefined();
  });

  it('lets tenant B pause its own run, recorded as its ServiceAccount', async () => {
    const { code, stdout } = await armadactlAs(
      b.kubeconfig,
      'pause',
      'demo',
      '-n',
      b.namespace,
      '--reason',
      'mine',
    );
    expect(stdout).toBe(`pause: pausing at the next safe point (${workflowId})`);
    expect(code).toBe(0);
    const paused = await eventually('the run paused', async () => (await progress()).paused);
    expect(paused).toMatchObject({ by: b.username, reason: 'mine' });
  });

  it('lets a Temporal administrator steer without the check, recorded as temporal-admin:$USER', async () => {
    // Tenant A's kubeconfig would be refused: --as-temporal-admin never asks the cluster.
    expect(
      (await armadactlAs(a.kubeconfig, 'resume', 'demo', '-n', b.namespace, '--as-temporal-admin')).code,
    ).toBe(0);
    await eventually('the run resumed', async () => ((await progress()).paused ? undefined : true));
    const { code } = await armadactlAs(
      a.kubeconfig,
      'pause',
      'demo',
      '-n',
      b.namespace,
      '--as-temporal-admin',
    );
    expect(code).toBe(0);
    const paused = await eventually('the run paused again', async () => (await progress()).paused);
    expect(paused.by).toBe('temporal-admin:ops-alice');
  });
});
