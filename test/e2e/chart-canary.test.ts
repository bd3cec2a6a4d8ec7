import { WorkflowFailedError } from '@temporalio/client';
import { mkdtemp, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import path from 'node:path';
import { armadaChartSpec, type ArmadaChartSpecInput } from '../../api/chart';
import { main } from '../../cli/main';
import { rootMessage } from '../../core/failures';
import type { ManifestOutcome } from '../../core/contracts/workflows';
import { chartRun, startRun } from '../../runs/requests';
import { chartFailure } from '../helpers/chart-runs';
import { releaseRevisions, sharedWorker, uniqueName } from '../helpers/env';
import {
  deploymentImages,
  deploymentsWatch,
  installCrds,
  kubectl,
  recordChanges,
  replicasAndImageOf,
} from '../helpers/kube';

describe('ArmadaChart canary (real worker, helm, sandbox cluster)', () => {
  const namespace = uniqueName('shop');
  const crNamespace = uniqueName('shop-cr');
  const release = 'shop';
  const harness = sharedWorker();

  const spec = (
    values: Record<string, unknown>,
    canary: Partial<NonNullable<ArmadaChartSpecInput['canary']>> = {},
  ) =>
    armadaChartSpec.parse({
      release,
      namespace,
      source: { type: 'local', location: 'examples/charts/hello' },
      values: { replicaCount: 4, ...values },
      wait: { timeout: 60 },
      canary: { steps: [{ percent: 50, sleep: 2 }], ...canary },
    });
  /** The chart's run as the bridge and armadactl start it (deployRun, its plan of one). */
  const run = async (values: Record<string, unknown>, canary?: Parameters<typeof spec>[1]) => {
    const { client, taskQueue } = harness();
    const doc = {
      kind: 'ArmadaChart' as const,
      name: 'shop',
      namespace: crNamespace,
      spec: spec(values, canary),
    };
    return client.workflow.getHandle(await startRun(client, taskQueue, chartRun(doc)));
  };
  /** The chart's outcome in its run's (the run's one group, its one chart). */
  const chartOutcome = async (handle: Awaited<ReturnType<typeof run>>) =>
    ((await handle.result()) as ManifestOutcome).groups[0].outcomes[0];
  const revisions = () => releaseRevisions(release, namespace);
  const deployments = () => deploymentImages(namespace);

  beforeAll(async () => {
    await installCrds();
    await kubectl('create', 'namespace', crNamespace);
    const cr = {
      apiVersion: 'armada.airshipit.org/v1alpha1',
      kind: 'ArmadaChart',
      metadata: { name: 'shop' },
    };
    await kubectl('apply', '-n', crNamespace, '-f', await crFile({ ...cr, spec: spec({}) }));
  });
  afterAll(async () => {
    await kubectl('delete', 'namespace', namespace, crNamespace, '--wait=false');
  });

  it('installs a first release directly: nothing to step from', async () => {
    const outcome = await chartOutcome(await run({ image: { tag: '1.0.0' } }));
    expect(outcome).toMatchObject({ action: 'installed', revision: 1 });
    expect(await deployments()).toEqual({ shop: '4 ghcr.io/stefanprodan/podinfo:1.0.0' });
  });

  it('steps a change through a -canary copy, then upgrades the release and deletes the copy', async () => {
    const watched = await recordChanges([deploymentsWatch(namespace)], 1);
    const outcome = await chartOutcome(await run({ image: { tag: '2.0.0' } }));
    expect(outcome).toMatchObject({ action: 'upgraded', before: 1, revision: 2 });
    expect(await revisions()).toEqual([1, 2]);
    expect(await deployments()).toEqual({ shop: '4 ghcr.io/stefanprodan/podinfo:2.0.0' });
    // The Deployments as the API server held them, in order. 50 %: half the replicas run the new
    // revision in the copy, beside the release's own Deployment (2 and 2); 100 %: the copy serves
    // alone; then the upgrade puts the new revision in the release's Deployment, and the copy goes.
    expect(await watched.changesUntilDeleted('shop-canary', replicasAndImageOf)).toEqual([
      'shop-canary 0 ghcr.io/stefanprodan/podinfo:2.0.0',
      'shop-canary 2 ghcr.io/stefanprodan/podinfo:2.0.0',
      'shop 2 ghcr.io/stefanprodan/podinfo:1.0.0',
      'shop-canary 4 ghcr.io/stefanprodan/podinfo:2.0.0',
      'shop 0 ghcr.io/stefanprodan/podinfo:1.0.0',
      'shop 4 ghcr.io/stefanprodan/podinfo:2.0.0',
      'shop-canary deleted',
    ]);
    const cr = JSON.parse(await kubectl('get', 'act', 'shop', '-n', crNamespace, '-o', 'json'));
    expect(cr.status.progress).toMatchObject({ step: 2, steps: 2, percent: 100 });
    // The hold's deadline went with the hold (a merge patch keeps a field the writer leaves out).
    expect(cr.status.progress).not.toHaveProperty('next_step_at');
  });

  it('armadactl apply -f runs a standalone ArmadaChart as its own release run', async () => {
    process.env.ARMADA_TASK_QUEUE = harness().taskQueue;
    const file = await crFile({
      apiVersion: 'armada.airshipit.org/v1alpha1',
      kind: 'ArmadaChart',
      metadata: { name: 'solo' },
      spec: {
        release: 'solo',
        namespace: crNamespace,
        source: { type: 'local', location: 'examples/charts/hello' },
      },
    });
    const out: string[] = [];
    const code = await main(
      ['apply', '-f', file, '--wait', '-n', crNamespace],
      (l) => out.push(l),
      (l) => out.push(l),
    );
    // Between the two, the run's progress as --wait follows it (the chart answers the progress query).
    expect(out[0]).toBe(`started ArmadaChart:${crNamespace}/solo`);
    expect(out.at(-1)).toBe('solo: installed, revision 1');
    expect(out.slice(1, -1).join('\n')).toMatch(new RegExp(`solo +${crNamespace}/solo +deploying`));
    expect(code).toBe(0);
  });

  it('rolls back a canary whose pods never become Ready; the release stays at its revision', async () => {
    const handle = await run(
      { image: { tag: '3.0.0' }, nodeSelector: { 'armada-test/no-such-node': 'true' } },
      { step_timeout: '3s' },
    );
    const failure = await handle.result().then(
      () => undefined,
      (err: unknown) => err,
    );
    expect(failure).toBeInstanceOf(WorkflowFailedError);
    expect(rootMessage(failure)).toMatch(
      /canary of .*\/shop rolled back: shop canary 50 % not Ready: .*timed out after 3s/,
    );
    // The canary's CanaryRolledBack is the chart's failure in the run's outcome, its message kept.
    expect(await chartFailure(handle)).toMatchObject({
      chart: 'shop',
      error: expect.stringMatching(/canary of .*\/shop rolled back: shop canary 50 % not Ready: /),
    });
    expect(await revisions()).toEqual([1, 2]);
    expect(await deployments()).toEqual({ shop: '4 ghcr.io/stefanprodan/podinfo:2.0.0' });
  });

  // Issue 32.10: an approval step that times out, on the real stack (stubbed helm only before).
  it('an approval step that times out with on_timeout rollback restores the stable side; the release keeps its revision', async () => {
    const handle = await run(
      { image: { tag: '4.0.0' } },
      { steps: [{ percent: 50, approval: true }], approval_timeout: '2s', on_timeout: 'rollback' },
    );
    const failure = await handle.result().then(
      () => undefined,
      (err: unknown) => err,
    );
    expect(failure).toBeInstanceOf(WorkflowFailedError);
    expect(rootMessage(failure)).toMatch(/canary of .*\/shop rolled back: .*approval .*timed out/);
    expect(await revisions()).toEqual([1, 2]);
    expect(await deployments()).toEqual({ shop: '4 ghcr.io/stefanprodan/podinfo:2.0.0' });
  });

  it('an approval step that times out with on_timeout promote goes on as if approved: the release is upgraded', async () => {
    const handle = await run(
      { image: { tag: '4.0.0' } },
      { steps: [{ percent: 50, approval: true }], approval_timeout: '2s', on_timeout: 'promote' },
    );
    expect(await chartOutcome(handle)).toMatchObject({ action: 'upgraded', before: 2, revision: 3 });
    expect(await revisions()).toEqual([1, 2, 3]);
    expect(await deployments()).toEqual({ shop: '4 ghcr.io/stefanprodan/podinfo:4.0.0' });
  });
});

/** A custom resource as a temporary file, for `kubectl apply -f`. */
async function crFile(doc: object): Promise<string> {
  const file = path.join(await mkdtemp(path.join(tmpdir(), 'armada-cr-')), 'cr.json');
  await writeFile(file, JSON.stringify(doc));
  return file;
}
