import { objectWorkflowId } from '../../core/plan/names';
import { releaseOwnerWorkflowId } from '../../core/plan/release-lock';
import { armadactlHere as armadactl } from '../helpers/armadactl';
import { helm, sharedWorker, uniqueName } from '../helpers/env';
import { saveHistory, savingHistories } from '../helpers/histories';
import { applyObjects, applyPolicy, armadaObject, helloChart, installCrds, kubectl } from '../helpers/kube';
import { eventually, startBridge, type ProductProcess } from '../helpers/processes';

const json = async (...args: string[]) => JSON.parse(await kubectl(...args, '-o', 'json'));

interface HelmRevision {
  revision: number;
  status: string;
  description: string;
}
const helmHistory = async (release: string, namespace: string): Promise<HelmRevision[]> =>
  JSON.parse(await helm('history', release, '-n', namespace, '-o', 'json'));

/** The messages of one object's Events with one reason (in no particular order). */
async function eventMessages(namespace: string, name: string, reason: string): Promise<string[]> {
  const list = await json(
    'get',
    'events',
    '-n',
    namespace,
    '--field-selector',
    `involvedObject.name=${name},involvedObject.kind=ArmadaChart,reason=${reason}`,
  );
  return (list.items as { message: string }[]).map((e) => e.message);
}

const image = async (namespace: string, name: string) =>
  (await json('get', 'deployment', name, '-n', namespace)).spec.template.spec.containers[0].image as string;

describe('bridge: drift of a managed release (bridge process, real worker, helm, sandbox)', () => {
  const crs = uniqueName('drift');
  const releases = uniqueName('drift-rel');
  const harness = sharedWorker();
  /** The release lock of a standalone chart's release `name`: its own run's workflow ID. */
  const standaloneLock = (name: string) => releaseOwnerWorkflowId({ namespace: crs, name });

  /** The types of the runs of `name` under `workflowId` (visibility: a run is listed a moment after it starts). */
  const runTypesUnder = async (workflowId: string, name: string) => {
    const types: string[] = [];
    const query = `WorkflowId = '${workflowId}' AND ArmadaName = '${name}' AND ArmadaNamespace = '${crs}'`;
    for await (const run of harness().client.workflow.list({ query })) types.push(run.type);
    return types.sort();
  };

  /**
   * The helm refusals of a second write met on a release ("another operation
   * (install/upgrade/rollback) is in progress", "release: already exists"): a run's activity fails
   * and retries. Every attempt of every run of chart `name` (deploys and repairs) is read.
   */
  const collisionsOf = async (name: string) => {
    const collisions: string[] = [];
    const runs = harness().client.workflow.list({
      query: `ArmadaKind = 'ArmadaChart' AND ArmadaNamespace = '${crs}' AND ArmadaName = '${name}'`,
    });
    for await (const run of runs) {
      const { events } = await harness().client.workflow.getHandle(run.workflowId, run.runId).fetchHistory();
      for (const e of events ?? []) {
        // A retried attempt's failure is kept as the next attempt's lastFailure.
        const failure =
          e.activityTaskFailedEventAttributes?.failure ?? e.activityTaskStartedEventAttributes?.lastFailure;
        const message = failure?.message ?? '';
        if (/another operation|already exists/.test(message)) collisions.push(`${run.type}: ${message}`);
      }
    }
    return collisions;
  };

  /** Every repair of `release` re-applied the revision just before it, never an older one. */
  const expectRollbacksToTheRevisionBefore = async (release: string) => {
    const rollbacks = (await helmHistory(release, releases)).filter((h) =>
      h.description.startsWith('Rollback to '),
    );
    for (const h of rollbacks)
      expect(`${h.revision}: ${h.description}`).toBe(`${h.revision}: Rollback to ${h.revision - 1}`);
  };

  /** The `message` value the Deployment of hello chart `release` runs with. */
  const deployedMessage = async (release: string) => {
    const env = (await json('get', 'deployment', release, '-n', releases)).spec.template.spec.containers[0]
      .env as { name: string; value: string }[];
    return env.find((e) => e.name === 'PODINFO_UI_MESSAGE')?.value;
  };

  /** Hello chart `name` whose Deployment runs with `message`. */
  const messageChart = (name: string, message: string) =>
    helloChart(name, releases, { values: { replicaCount: 1, message } });

  /** Waits until chart `name` is at its spec, nothing runs under `lock` and `release` runs `message`. */
  const settledAt = (name: string, release: string, lock: string, message: string) =>
    eventually(
      `${name} settled at ${message}`,
      async () => {
        const act = await json('get', 'act', name, '-n', crs);
        if (!act.status?.satisfied || act.status.observedGeneration !== act.metadata.generation)
          return undefined;
        if ((await harness().client.workflow.getHandle(lock).describe()).status.name === 'RUNNING')
          return undefined;
        return (await deployedMessage(release).catch(() => undefined)) === message ? true : undefined;
      },
      { process: bridge, timeoutMs: 60_000 },
    );

  /**
   * The race drill (issue 32.3: a repair beside the release's lock could read revision N, let the
   * deploy write N+1, then roll back to N): `rounds` times, the Deployment of chart `name` is
   * deleted as its spec changes (message m1, m2, …). Then no two helm writes met on the release
   * (helm refuses the second, the run's activity fails and retries: collisionsOf), no repair
   * re-applied an older revision, and the release is at the last spec.
   */
  const raceDrill = async (name: string, release: string, lock: string, rounds: number) => {
    for (let i = 1; i <= rounds; i++) {
      await Promise.all([
        kubectl('delete', 'deployment', release, '-n', releases, '--wait=false'),
        applyObjects(crs, [messageChart(name, `m${i}`)]),
      ]);
      await settledAt(name, release, lock, `m${i}`);
    }
    expect(await collisionsOf(name)).toEqual([]);
    await expectRollbacksToTheRevisionBefore(release);
    const last = `m${rounds}`;
    expect(JSON.parse(await helm('get', 'values', release, '-n', releases, '-o', 'json')).message).toBe(last);
    expect(await deployedMessage(release)).toBe(last);
  };
  /** The ArmadaPolicy that lets the charts of `crs` take over a release helm installed. */
  const adoption = `adopt-${crs}`;
  let bridge: ProductProcess;

  /** An ArmadaChart of the example hello chart; its Deployment and Service are named `name`. */
  const applyChart = (name: string, drift?: string) =>
    applyObjects(crs, [helloChart(name, releases, drift ? { drift } : {})]);

  const satisfied = (name: string) =>
    eventually(
      `${name} satisfied`,
      async () => ((await json('get', 'act', name, '-n', crs)).status?.satisfied ? true : undefined),
      { process: bridge },
    );

  beforeAll(async () => {
    await installCrds();
    await kubectl('create', 'namespace', crs);
    bridge = startBridge(crs, {
      ARMADA_TASK_QUEUE: harness().taskQueue,
      ARMADA_DRIFT_NAMESPACES: releases,
      // A manifest's run starts as soon as its spec changes (the race drill of a manifest's chart).
      ARMADA_SETTLE_SECONDS: '0',
    });
    await applyChart('fixed');
    await applyChart('reported', 'report');
    await satisfied('fixed');
    await satisfied('reported');
  });
  afterAll(async () => {
    await bridge?.stop();
    await kubectl('delete', 'armadapolicy', adoption, '--ignore-not-found');
    await kubectl('delete', 'namespace', releases, '--wait=false').catch(() => '');
    await kubectl('delete', 'namespace', crs, '--wait=false');
  });

  it('a deleted Deployment comes back at the same revision, with DriftDetected and DriftRepaired Events', async () => {
    const before = await image(releases, 'fixed');
    const deletedAt = Date.now();
    await kubectl('delete', 'deployment', 'fixed', '-n', releases, '--wait=true');
    await eventually('the Deployment back', () => image(releases, 'fixed'), {
      process: bridge,
      timeoutMs: 30_000,
    });
    const backAfterMs = Date.now() - deletedAt;
    expect(backAfterMs).toBeLessThan(30_000);
    expect(await image(releases, 'fixed')).toBe(before);
    // helm rollback creates the Deployment before it marks its revision deployed: the Event
    // comes after both.
    const detected = await eventually('the DriftRepaired Event', async () => {
      const repaired = await eventMessages(crs, 'fixed', 'DriftRepaired');
      return repaired.length ? eventMessages(crs, 'fixed', 'DriftDetected') : undefined;
    });
    const history = await helmHistory('fixed', releases);
    expect(history.map((h) => [h.revision, h.status, h.description])).toEqual([
      [1, 'superseded', expect.stringMatching(/^armada-digest=/)],
      [2, 'deployed', 'Rollback to 1'],
    ]);
    expect(detected).toEqual([
      `Deployment fixed deleted (release ${releases}/fixed, revision 1); re-applying revision 1`,
    ]);
    expect(await eventMessages(crs, 'fixed', 'DriftRepaired')).toEqual([
      `re-applied revision 1 of ${releases}/fixed as revision 2`,
    ]);
    // The repair ran under the release's lock: the workflow ID of the chart's own runs.
    expect(await runTypesUnder(standaloneLock('fixed'), 'fixed')).toEqual(['deployRun', 'driftWorkflow']);
    if (savingHistories) await saveHistory(standaloneLock('fixed'), undefined, 'drift--repair');
  });

  it('an image edited with kubectl set image is put back, and nothing else is touched', async () => {
    const before = await image(releases, 'fixed');
    await kubectl('set', 'image', 'deployment/fixed', '-n', releases, '*=registry.local/hello:evil');
    await eventually(
      'the image put back',
      async () => ((await image(releases, 'fixed')) === before ? true : undefined),
      { process: bridge, timeoutMs: 30_000 },
    );
    await eventually('the second DriftRepaired Event', async () =>
      (await eventMessages(crs, 'fixed', 'DriftRepaired')).length === 2 ? true : undefined,
    );
    const history = await helmHistory('fixed', releases);
    expect(history.at(-1)).toMatchObject({ revision: 3, status: 'deployed', description: 'Rollback to 2' });
    const detected = await eventMessages(crs, 'fixed', 'DriftDetected');
    expect(detected).toContain(
      `Deployment fixed edited by kubectl-set (release ${releases}/fixed, revision 2); re-applying revision 2`,
    );
    // `kubectl scale` writes through the scale subresource, and `kubectl annotate` and `label`
    // of the Service (a kind without a generation) change metadata alone: none is drift.
    // Deleting the Service next is; its repair is the only one that follows, and names the
    // Service alone.
    await kubectl('annotate', 'service', 'fixed', '-n', releases, 'team=x');
    await kubectl('label', 'service', 'fixed', '-n', releases, 'team=x');
    await kubectl('scale', 'deployment/fixed', '-n', releases, '--replicas=2');
    await kubectl('delete', 'service', 'fixed', '-n', releases, '--wait=true');
    await eventually('the Service back', () => kubectl('get', 'service', 'fixed', '-n', releases), {
      process: bridge,
      timeoutMs: 30_000,
    });
    const repaired = await eventually('the third DriftRepaired Event', async () => {
      const found = await eventMessages(crs, 'fixed', 'DriftRepaired');
      return found.length === 3 ? found : undefined;
    });
    expect(repaired).toContain(`re-applied revision 3 of ${releases}/fixed as revision 4`);
    expect(await eventMessages(crs, 'fixed', 'DriftDetected')).toContain(
      `Service fixed deleted (release ${releases}/fixed, revision 3); re-applying revision 3`,
    );
    expect((await helmHistory('fixed', releases)).map((h) => h.revision)).toEqual([1, 2, 3, 4]);
    expect((await eventMessages(crs, 'fixed', 'DriftDetected')).join('\n')).not.toMatch(
      /kubectl-(annotate|label)/,
    );
    // The other release was never touched.
    expect((await helmHistory('reported', releases)).map((h) => h.revision)).toEqual([1]);
  });

  it('race drill: a Deployment deleted as its spec changes, 20 times; no repair re-applies a revision older than the one before it, and the release ends at the spec', async () => {
    // Issue 32.3: a repair beside the release's lock could read revision N, let the deploy write
    // N+1, then roll back to N: the cluster ran old content under a Deployed chart.
    await applyObjects(crs, [messageChart('raced', 'm0')]);
    await settledAt('raced', 'raced', standaloneLock('raced'), 'm0');
    await raceDrill('raced', 'raced', standaloneLock('raced'), 20);
  });

  it('a manifest’s chart: its repair runs under the manifest’s workflow ID (the release’s owner), and a Deployment deleted as the chart’s spec changes, 5 times, leaves no collision, no older revision re-applied, and the release at the spec; its undos run under the manifest’s ID too', async () => {
    // Issue 35, decision 7: the release lock is the owner's run. A repair under the manifest's
    // ID excludes the manifest's run (its charts run as its children), and a deploy asked while
    // a repair holds the ID starts when the repair ends.
    const manifestId = objectWorkflowId('ArmadaManifest', crs, 'site');
    const release = 'site-shop'; // the manifest's release_prefix before the chart's release
    const site = [
      messageChart('shop', 'm0'),
      armadaObject('ArmadaChartGroup', 'storefront', { chart_group: ['shop'] }),
      armadaObject('ArmadaManifest', 'site', { release_prefix: 'site', chart_groups: ['storefront'] }),
    ];
    await applyObjects(crs, site);
    await settledAt('shop', release, manifestId, 'm0');
    expect(
      releaseOwnerWorkflowId({ namespace: crs, name: 'shop', manifest: 'site', group: 'storefront' }),
    ).toBe(manifestId);

    await kubectl('delete', 'deployment', release, '-n', releases, '--wait=true');
    await eventually(
      'the DriftRepaired Event',
      async () => ((await eventMessages(crs, 'shop', 'DriftRepaired')).length ? true : undefined),
      { process: bridge, timeoutMs: 30_000 },
    );
    expect(await eventMessages(crs, 'shop', 'DriftRepaired')).toEqual([
      `re-applied revision 1 of ${releases}/${release} as revision 2`,
    ]);
    // The repair ran under the manifest's ID, none under the release's chart workflow ID; the
    // bridge took it for no new spec (it copied the manifest's memo): one manifest run, one repair.
    await eventually('the repair listed under the manifest', async () =>
      (await runTypesUnder(manifestId, 'shop')).includes('driftWorkflow') ? true : undefined,
    );
    expect(await runTypesUnder(manifestId, 'shop')).toEqual(['driftWorkflow']);
    const manifestRuns = async () => {
      const types: string[] = [];
      for await (const run of harness().client.workflow.list({ query: `WorkflowId = '${manifestId}'` }))
        types.push(run.type);
      return types.sort();
    };
    expect(await manifestRuns()).toEqual(['deployRun', 'driftWorkflow']);
    const drifts = harness().client.workflow.list({
      query: `WorkflowType = 'driftWorkflow' AND ArmadaName = 'shop' AND ArmadaNamespace = '${crs}'`,
    });
    for await (const run of drifts) expect(run.workflowId).toBe(manifestId);

    await raceDrill('shop', release, manifestId, 5);
    // Every change of the chart's spec had its manifest run: none was lost to a repair holding the ID.
    expect((await manifestRuns()).filter((t) => t === 'deployRun').length).toBeGreaterThanOrEqual(6);

    // An undo of the chart's group and one of the chart take the same lock: they run under the
    // manifest's ID. The chart's --previous finds its group's undo there (it put the chart's
    // release back) and goes one deploy further back.
    process.env.ARMADA_TASK_QUEUE = harness().taskQueue;
    const undo = (target: string) => armadactl('rollback', target, '-n', crs, '--previous');
    const first = await undo('acg/storefront');
    expect(first).toMatchObject({ code: 0 });
    expect(first.printed).toContain(`(workflow ${manifestId})`);
    expect(await deployedMessage(release)).toBe('m4');
    expect(await undo('act/shop')).toMatchObject({ code: 0 });
    expect(await deployedMessage(release)).toBe('m3');
    expect((await harness().client.workflow.getHandle(manifestId).describe()).type).toBe('undoWorkflow');
  });

  it('a release helm installed before its ArmadaChart: once the chart takes it over, its objects are watched (the bridge dropped them as another release’s)', async () => {
    // The bridge keeps Helm objects of the releases its charts deploy only; this release's were
    // dropped as they arrived, and the deploy that takes it over rewrites none of them.
    await helm('install', 'adopted', 'examples/charts/hello', '-n', releases, '--set', 'replicaCount=1');
    await applyPolicy(adoption, { namespaces: [crs], allow_adoption: true });
    await applyObjects(crs, [helloChart('adopted', releases, { drift: 'report', adopt: true })]);
    await satisfied('adopted');
    await kubectl('delete', 'deployment', 'adopted', '-n', releases, '--wait=true');
    const messages = await eventually(
      'the DriftDetected Event',
      async () => {
        const found = await eventMessages(crs, 'adopted', 'DriftDetected');
        return found.length ? found : undefined;
      },
      { process: bridge, timeoutMs: 30_000 },
    );
    expect(messages).toEqual([
      expect.stringMatching(
        /^Deployment adopted deleted \(release .*\/adopted, revision 2\); not repaired \(drift: report\)$/,
      ),
    ]);
  });

  it('with drift: report, a deleted Deployment stays deleted and a Warning Event says so', async () => {
    await kubectl('delete', 'deployment', 'reported', '-n', releases, '--wait=true');
    const messages = await eventually(
      'the DriftDetected Event',
      async () => {
        const found = await eventMessages(crs, 'reported', 'DriftDetected');
        return found.length ? found : undefined;
      },
      { process: bridge, timeoutMs: 30_000 },
    );
    expect(messages).toEqual([
      `Deployment reported deleted (release ${releases}/reported, revision 1); not repaired (drift: report)`,
    ]);
    const run = harness().client.workflow.getHandle(standaloneLock('reported'));
    expect(await run.result()).toMatchObject({ result: 'reported', revision: 1 });
    expect(await kubectl('get', 'deployment', '-n', releases, '-o', 'name')).not.toContain('reported');
    expect((await helmHistory('reported', releases)).map((h) => h.revision)).toEqual([1]);
  });
});
