import { mkdtemp, readFile, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import path from 'node:path';
import { CLOCK_SKEW_MS } from '../../core/bridge/decide-run';
import { canaryProgressQuery } from '../../workflows/messages';
import { deployerRolloutWorkflowId, objectWorkflowId } from '../../core/plan/names';
import { releaseSteps } from '../helpers/release-steps';
import { helm, sharedWorker, uniqueName } from '../helpers/env';
import { dropFinalizers, installCrds, kubectl, whoAmI } from '../helpers/kube';
import { eventually as sharedEventually, startBridge, type ProductProcess } from '../helpers/processes';

const repo = path.resolve(__dirname, '../..');

/** The example manifest with its releases moved to `releases` and prefixed by `prefix`. */
async function manifestFile(
  releases: string,
  prefix: string,
  extra: [string, string][] = [],
): Promise<string> {
  let text = (await readFile(path.join(repo, 'examples/sequenced-manifest.yaml'), 'utf8'))
    .replaceAll('namespace: demo', `namespace: ${releases}`)
    .replace('release_prefix: demo', `release_prefix: ${prefix}`);
  for (const [from, to] of extra) text = text.replace(from, to);
  return tempFile('manifest.yaml', text);
}

async function tempFile(name: string, text: string): Promise<string> {
  const file = path.join(await mkdtemp(path.join(tmpdir(), 'armada-bridge-')), name);
  await writeFile(file, text);
  return file;
}

/** The bridge process; what it printed is shown when a wait times out. */
let bridge: ProductProcess | undefined;
const SETTLE_SECONDS = 3;

/**
 * The shared `eventually`, watching the bridge: a wait ends at once should the bridge exit, and
 * shows its last lines. It reads `bridge` at each call, as beforeAll starts it after this is made.
 */
const eventually = <T>(
  what: string,
  check: () => Promise<T | undefined>,
  opts: { timeoutMs?: number } = {},
) => sharedEventually(what, check, { process: bridge, ...opts });

const json = async (...args: string[]) => JSON.parse(await kubectl(...args, '-o', 'json'));
/** The Events of one object with one reason, as `kubectl get events` prints them. */
const eventsOf = (namespace: string, name: string, reason: string) =>
  kubectl(
    'get',
    'events',
    '-n',
    namespace,
    '--field-selector',
    `involvedObject.name=${name},reason=${reason}`,
  );

describe('bridge: kubectl apply drives the workflows (bridge process, real worker, sandbox)', () => {
  const crs = uniqueName('bridge');
  const releases = uniqueName('bridge-rel');
  const harness = sharedWorker();
  /** Who the API server says annotates in these tests: the Events and the runs name them. */
  let admin: string;
  beforeAll(async () => {
    await installCrds();
    await kubectl('create', 'namespace', crs);
    admin = await whoAmI();
    runBridge();
  });
  /** The bridge on the test's namespace (started again by the test that stops it). */
  const runBridge = () =>
    (bridge = startBridge(crs, {
      ARMADA_TASK_QUEUE: harness().taskQueue,
      ARMADA_RESYNC_SECONDS: '2',
      // Above the default 1 s: the settle test's two writes are 300 ms and a `kubectl` process
      // apart, which a loaded machine can stretch.
      ARMADA_SETTLE_SECONDS: String(SETTLE_SECONDS),
    }));
  afterAll(async () => {
    await bridge?.stop();
    await kubectl('delete', 'namespace', releases, '--wait=false').catch(() => '');
    await kubectl('delete', 'namespace', crs, '--wait=false');
  });

  /** The message of an object's Invalid condition while it is True. */
  const invalidMessage = async (resource: string, name: string): Promise<string | undefined> => {
    const object = await json('get', resource, name, '-n', crs);
    return object.status?.conditions?.find(
      (c: { type: string; status: string }) => c.type === 'Invalid' && c.status === 'True',
    )?.message;
  };

  /** A chart of the hello example, release `<name>` in the releases' namespace, with canary steps. */
  const canaryChartDoc = (name: string, steps: string) => `---
apiVersion: armada.airshipit.org/v1alpha1
kind: ArmadaChart
metadata: {name: ${name}}
spec:
  release: ${name}
  namespace: ${releases}
  source: {type: local, location: examples/charts/hello}
  canary: {steps: ${steps}}
`;

  /** A Deployer of Deployment `<name>-1.0.0` in the releases' namespace, with the given steps. */
  const deployerDoc = (name: string, steps: string) => `---
apiVersion: armada.airshipit.org/v1alpha1
kind: Deployer
metadata: {name: ${name}}
spec:
  type: canary
  deployment: {name: ${name}, namespace: ${releases}, image: nginx, version: 1.0.0, replicas: 2}
  steps: ${steps}
`;

  const runsOf = async (workflowId: string) => {
    const runs = [];
    for await (const run of harness().client.workflow.list({ query: `WorkflowId = '${workflowId}'` }))
      runs.push(run);
    return runs;
  };

  it('kubectl apply of a manifest deploys every release and every CR becomes satisfied', async () => {
    const file = await manifestFile(releases, 'b');
    await kubectl('apply', '-n', crs, '-f', file);
    const charts = await eventually('every ArmadaChart satisfied', async () => {
      const list = await json('get', 'act', '-n', crs);
      const items = list.items as {
        metadata: { name: string; finalizers?: string[] };
        status?: { satisfied?: boolean };
      }[];
      return items.length === 4 && items.every((c) => c.status?.satisfied) ? items : undefined;
    });
    expect(charts.every((c) => c.metadata.finalizers?.includes('armada.airshipit.org/finalizer'))).toBe(true);
    const manifest = await eventually('the manifest satisfied', async () => {
      const m = await json('get', 'amf', 'demo', '-n', crs);
      return m.status?.satisfied ? m : undefined;
    });
    expect(manifest.status.observedGeneration).toBe(manifest.metadata.generation);
    // The last group's final status is written alongside the manifest's own (workflows/manifest.ts
    // end()), so it may land a moment after the manifest reads satisfied.
    const groups = await eventually('both groups satisfied', async () => {
      const items = (await json('get', 'acg', '-n', crs)).items as {
        status?: { satisfied?: boolean; reason?: string };
      }[];
      return items.every((g) => g.status?.satisfied) ? items : undefined;
    });
    expect(groups.map((g) => [g.status?.satisfied, g.status?.reason])).toEqual([
      [true, '2/2 charts deployed'],
      [true, '2/2 charts deployed'],
    ]);
    const list = JSON.parse(await helm('list', '-n', releases, '-o', 'json')) as {
      name: string;
      status: string;
    }[];
    expect(list.map((r) => `${r.name} ${r.status}`).sort()).toEqual([
      'b-admin deployed',
      'b-backend deployed',
      'b-settings deployed',
      'b-web deployed',
    ]);
    expect(await runsOf(objectWorkflowId('ArmadaManifest', crs, 'demo'))).toHaveLength(1);

    // What the run wrote into the custom resources: state, conditions, revision, run link, events.
    const web = await json('get', 'act', 'web', '-n', crs);
    expect(web.status).toMatchObject({
      actual_state: 'deployed',
      satisfied: true,
      observedGeneration: web.metadata.generation,
      helm: { revision: 1 },
    });
    // A manifest's chart links to the run that deploys it, the manifest's (it has no run of its own).
    expect(web.status.workflow.url).toMatch(
      new RegExp(`^http://localhost:8233/namespaces/default/workflows/ArmadaManifest%3A${crs}%2Fdemo/`),
    );
    const ready = web.status.conditions.find((c: { type: string }) => c.type === 'Ready');
    expect(ready).toMatchObject({
      status: 'True',
      reason: 'Deployed',
      observedGeneration: web.metadata.generation,
    });
    expect(manifest.status).toMatchObject({ actual_state: 'deployed', progress: { ready: 2, total: 2 } });
    const events = (await json('get', 'events', '-n', crs)).items as {
      involvedObject: { kind: string };
      reason: string;
    }[];
    const reasons = events.filter((e) => e.involvedObject.kind === 'ArmadaManifest').map((e) => e.reason);
    expect(reasons).toEqual(expect.arrayContaining(['Running', 'Deployed']));
    const columns = (await kubectl('get', 'act', '-n', crs)).split('\n').find((l) => l.startsWith('web '));
    expect(columns?.split(/\s{2,}/).slice(1, 4)).toEqual(['deployed', 'deployed', 'true']);
  });

  it('re-applying the same file starts nothing; changing a chart value runs the manifest again', async () => {
    const file = await manifestFile(releases, 'b');
    await kubectl('apply', '-n', crs, '-f', file);
    const manifestId = objectWorkflowId('ArmadaManifest', crs, 'demo');
    // A check that nothing happens: let two resync periods (2 s each) pass over every object.
    await new Promise((resolve) => setTimeout(resolve, 4500));
    expect(await runsOf(manifestId)).toHaveLength(1);

    await kubectl(
      'patch',
      'act',
      'web',
      '-n',
      crs,
      '--type',
      'merge',
      '-p',
      '{"spec":{"values":{"replicaCount":5}}}',
    );
    await eventually('a second manifest run', async () =>
      (await runsOf(manifestId)).length === 2 ? true : undefined,
    );
    await eventually('b-web at revision 2', async () => {
      const status = JSON.parse(await helm('status', 'b-web', '-n', releases, '-o', 'json'));
      return status.version === 2 && status.info.status === 'deployed' ? true : undefined;
    });
    const settings = JSON.parse(await helm('status', 'b-settings', '-n', releases, '-o', 'json'));
    expect(settings.version).toBe(1); // unchanged charts get no new revision
  });

  it('changes written a moment apart (as kubectl apply writes a List) start one run with all of them', async () => {
    const manifestId = objectWorkflowId('ArmadaManifest', crs, 'demo');
    // The last test's run may still be going (its charts after b-web): a change then re-plans it at
    // once, without the settle, and each of the two changes would start a run of its own.
    const before = await eventually('the last manifest run to end', async () => {
      const runs = await runsOf(manifestId);
      return runs.every((r) => r.status.name !== 'RUNNING') ? runs.length : undefined;
    });
    const patch = (chart: string, values: object) =>
      kubectl(
        'patch',
        'act',
        chart,
        '-n',
        crs,
        '--type',
        'merge',
        '-p',
        JSON.stringify({ spec: { values } }),
      );
    await patch('web', { replicaCount: 6 });
    // Well within the bridge's settle window: the manifest has not started its run yet.
    await new Promise((resolve) => setTimeout(resolve, 300));
    await patch('backend', { replicaCount: 3 });
    const generation = async (chart: string) =>
      (await json('get', 'act', chart, '-n', crs)).metadata.generation as number;
    const wanted = [
      `ArmadaChart/backend@${await generation('backend')}`,
      `ArmadaChart/web@${await generation('web')}`,
    ];
    const run = await eventually('the manifest run with both changes', async () =>
      (await runsOf(manifestId)).find((r) => wanted.every((spec) => String(r.memo?.specs).includes(spec))),
    );
    await harness().client.workflow.getHandle(manifestId, run.runId).result();
    // One run: it started with both specs, so no re-plan made it start over as another.
    expect((await runsOf(manifestId)).map((r) => r.memo?.specs)).toHaveLength(before + 1);
    for (const [release, revision] of [
      ['b-web', 3],
      ['b-backend', 2],
    ] as const)
      expect(JSON.parse(await helm('status', release, '-n', releases, '-o', 'json')).version).toBe(revision);
  });

  it('an object the validator refuses gets condition Invalid naming the field, and no workflow', async () => {
    const file = await tempFile(
      'bad.yaml',
      `apiVersion: armada.airshipit.org/v1alpha1
kind: ArmadaChart
metadata: {name: bad}
spec:
  release: bad
  namespace: ${releases}
  source: {type: local, location: examples/charts/hello}
  canary:
    steps: [{percent: 50, sleep: 1}]
    on_timeout: promote
`,
    );
    await kubectl('apply', '-n', crs, '-f', file);
    const invalid = await eventually('condition Invalid', async () => {
      const chart = await json('get', 'act', 'bad', '-n', crs);
      return chart.status?.conditions?.find(
        (c: { type: string; status: string }) => c.type === 'Invalid' && c.status === 'True',
      );
    });
    expect(invalid.message).toMatch(
      /^spec\.canary\.on_timeout: on_timeout needs at least one step with approval/,
    );
    expect(await runsOf(objectWorkflowId('ArmadaChart', crs, 'bad'))).toHaveLength(0);
    const events = await eventsOf(crs, 'bad', 'InvalidSpec');
    expect(events).toContain('on_timeout needs at least one step with approval');
  });

  it("a lockstep group whose members' steps differ (charts and a Deployer) is Invalid naming each; its Deployer gets no run of its own", async () => {
    const file = await tempFile(
      'lockstep.yaml',
      `apiVersion: armada.airshipit.org/v1alpha1
kind: ArmadaChartGroup
metadata: {name: lockstep-shop}
spec: {chart_group: [ls-web, ls-api], deployers: [ls-worker], canary_lockstep: true}
${canaryChartDoc('ls-web', '[{percent: 10}, {percent: 50}]')}${canaryChartDoc('ls-api', '[{percent: 20}]')}${deployerDoc('ls-worker', '[{percent: 30}]')}`,
    );
    await kubectl('apply', '-n', crs, '-f', file);
    const lockstepProblem =
      "ArmadaChartGroup lockstep-shop: canary_lockstep members' step percentages differ: ls-web [10, 50, 100], ls-api [20, 100], Deployer/ls-worker [30, 100] (see docs/reference/resources.md)";
    try {
      // Until the bridge has seen the charts too, the group is Invalid for naming charts it cannot find.
      await eventually('condition Invalid on the group for its lockstep set', async () =>
        (await invalidMessage('acg', 'lockstep-shop')) === lockstepProblem ? true : undefined,
      );
      // The Deployer's own reconcile has run (it carries the finalizer) and deferred to its group.
      await eventually('the Deployer reconciled', async () => {
        const d = await json('get', 'dpl', 'ls-worker', '-n', crs);
        return d.metadata.finalizers?.includes('armada.airshipit.org/finalizer') ? true : undefined;
      });
      expect(await runsOf(objectWorkflowId('ArmadaChartGroup', crs, 'lockstep-shop'))).toHaveLength(0);
      expect(await runsOf(objectWorkflowId('Deployer', crs, 'ls-worker'))).toHaveLength(0);
    } finally {
      // Gone again, so the namespace holds only the manifest's objects when it is deleted below.
      await kubectl('delete', '-n', crs, '-f', file, '--wait=false');
      await eventually('the lockstep objects gone', async () => {
        const left = (await json('get', 'acg,act,dpl', '-n', crs)).items as { metadata: { name: string } }[];
        return left.some((o) => ['lockstep-shop', 'ls-web', 'ls-api', 'ls-worker'].includes(o.metadata.name))
          ? undefined
          : true;
      });
    }
  });

  it('a group rolls out the Deployer it lists in its own run; once the group goes, the Deployer runs on its own and keeps its Deployment', async () => {
    const groupFile = await tempFile(
      'deployer-group.yaml',
      `apiVersion: armada.airshipit.org/v1alpha1
kind: ArmadaChartGroup
metadata: {name: dg}
spec: {chart_group: [dg-settings], deployers: [dg-nginx]}
`,
    );
    const membersFile = await tempFile(
      'deployer-group-members.yaml',
      `apiVersion: armada.airshipit.org/v1alpha1
kind: ArmadaChart
metadata: {name: dg-settings}
spec:
  release: dg-settings
  namespace: ${releases}
  source: {type: local, location: examples/charts/settings}
${deployerDoc('dg-nginx', '[{percent: 50, sleep: 1}]')}`,
    );
    const groupRun = objectWorkflowId('ArmadaChartGroup', crs, 'dg');
    const deployerRuns = () => runsOf(objectWorkflowId('Deployer', crs, 'dg-nginx'));
    const deployment = () =>
      json('get', 'deploy', 'dg-nginx-1.0.0', '-n', releases).then((d) => d.spec.replicas as number);
    await kubectl('apply', '-n', crs, '-f', groupFile);
    await kubectl('apply', '-n', crs, '-f', membersFile);
    try {
      const group = await eventually('the group satisfied', async () => {
        const g = await json('get', 'acg', 'dg', '-n', crs);
        return g.status?.satisfied ? g : undefined;
      });
      expect(group.status.reason).toBe('1/1 charts deployed, 1/1 Deployers rolled out');
      const byGroup = await deployerRuns();
      expect(byGroup.length).toBeGreaterThan(0);
      for (const run of byGroup) expect(run.parentExecution?.workflowId).toBe(groupRun);
      const deployed = await json('get', 'dpl', 'dg-nginx', '-n', crs);
      expect(deployed.status).toMatchObject({ phase: 'Completed', current_version: '1.0.0' });
      expect(await deployment()).toBe(2);

      // The group goes (its uninstall leaves Deployers): the Deployer's own reconcile takes it over.
      await kubectl('delete', '-n', crs, '-f', groupFile, '--wait=false');
      const own = await eventually('a run of the Deployer on its own', async () => {
        const runs = (await deployerRuns()).filter((r) => r.parentExecution === undefined);
        return runs.some((r) => r.status.name === 'COMPLETED') ? runs : undefined;
      });
      expect(own.map((r) => r.memo?.specs)).toContain(`Deployer/dg-nginx@${deployed.metadata.generation}`);
      expect(await deployment()).toBe(2);
    } finally {
      await kubectl('delete', '-n', crs, '-f', membersFile, '--wait=false');
      await kubectl('delete', '-n', crs, '-f', groupFile, '--wait=false', '--ignore-not-found');
      await eventually("the objects and the Deployer's Deployment gone", async () => {
        const left = (await json('get', 'acg,act,dpl', '-n', crs)).items as { metadata: { name: string } }[];
        const deployments = (await json('get', 'deploy', '-n', releases)).items as {
          metadata: { name: string };
        }[];
        return left.some((o) => o.metadata.name.startsWith('dg')) ||
          deployments.some((d) => d.metadata.name.startsWith('dg-nginx'))
          ? undefined
          : true;
      });
    }
  });

  it('a Deployer the cluster lost without an uninstall (a rebuilt cluster) is rolled out again when created anew with the same spec', async () => {
    const file = await tempFile('lost-deployer.yaml', deployerDoc('lost', '[{percent: 50, sleep: 1}]'));
    const deployment = () => json('get', 'deploy', 'lost-1.0.0', '-n', releases);
    const completed = () =>
      eventually('the Deployer rolled out', async () => {
        const d = await json('get', 'dpl', 'lost', '-n', crs);
        return d.status?.phase === 'Completed' && (await deployment()).spec.replicas === 2 ? d : undefined;
      });
    await kubectl('apply', '-n', crs, '-f', file);
    try {
      const first = await completed();
      // Created anew later than its clocks' margin after this run began, as a rebuilt cluster's
      // objects are (minutes later): a creation timestamp is whole seconds.
      const [firstRun] = await runsOf(objectWorkflowId('Deployer', crs, 'lost'));
      const later = firstRun.startTime.getTime() + CLOCK_SKEW_MS + 1500 - Date.now();
      if (later > 0) await new Promise((resolve) => setTimeout(resolve, later));
      // Gone as in a cluster rebuilt while the bridge was down: the Deployer with no finalizer
      // left (so no uninstall run), and its Deployment.
      await bridge!.stop();
      await dropFinalizers('dpl/lost', crs);
      await kubectl('delete', 'dpl', 'lost', '-n', crs);
      await kubectl('delete', 'deploy', 'lost-1.0.0', '-n', releases);
      runBridge();
      // The same spec again: generation 1 again, so the same specs as the run that ended.
      await kubectl('apply', '-n', crs, '-f', file);
      const second = await completed();
      expect(second.metadata.uid).not.toBe(first.metadata.uid);
      expect(second.metadata.generation).toBe(first.metadata.generation);
      const runs = await runsOf(objectWorkflowId('Deployer', crs, 'lost'));
      expect(runs.map((r) => r.memo?.specs)).toEqual([`Deployer/lost@1`, `Deployer/lost@1`]);
    } finally {
      await kubectl('delete', '-n', crs, '-f', file, '--wait=false', '--ignore-not-found');
    }
  });

  it('annotations pause and resume a running Deployer canary, then are removed', async () => {
    const deployer = await tempFile(
      'deployer.yaml',
      (await readFile(path.join(repo, 'examples/deployer.yaml'), 'utf8'))
        .replace('namespace: web', `namespace: ${releases}`)
        .replace(/sleep: \d+/g, 'sleep: 30'),
    );
    await kubectl('apply', '-n', crs, '-f', deployer);
    await eventually('podinfo-6.9.2 deployed', async () => {
      const d = await json('get', 'dpl', 'podinfo', '-n', crs);
      return d.status?.phase === 'Completed' ? true : undefined;
    });
    await kubectl(
      'patch',
      'dpl',
      'podinfo',
      '-n',
      crs,
      '--type',
      'merge',
      '-p',
      '{"spec":{"deployment":{"version":"1.26.0"}}}',
    );
    // Its canary steps in its rollout, its run's child (deployerRun's plan of one).
    const handle = harness().client.workflow.getHandle(deployerRolloutWorkflowId(crs, 'podinfo'));
    await eventually('the canary holding', async () => {
      const p = await handle.query(canaryProgressQuery);
      return p.waitingOn === 'hold' && p.history[0]?.startedAt ? true : undefined;
    });
    await kubectl(
      'annotate',
      'dpl',
      'podinfo',
      '-n',
      crs,
      'armada.airshipit.org/action=pause',
      'armada.airshipit.org/reason=look',
    );
    const paused = await eventually('paused', async () => {
      const p = await handle.query(canaryProgressQuery);
      return p.paused ? p : undefined;
    });
    expect(paused.paused).toMatchObject({ reason: 'look', by: admin });
    await eventually('the annotation removed', async () => {
      const d = await json('get', 'dpl', 'podinfo', '-n', crs);
      return d.metadata.annotations?.['armada.airshipit.org/action'] === undefined ? true : undefined;
    });
    const events = await eventsOf(crs, 'podinfo', 'Action');
    expect(events).toContain(`${admin} asked to pause (look): pausing at the next safe point (Deployer:`);
    await kubectl('annotate', 'dpl', 'podinfo', '-n', crs, 'armada.airshipit.org/action=resume');
    await eventually('resumed', async () =>
      (await handle.query(canaryProgressQuery)).paused ? undefined : true,
    );
    await kubectl('annotate', 'dpl', 'podinfo', '-n', crs, 'armada.airshipit.org/action=promote');
    await eventually('promoted', async () => {
      const d = await json('get', 'dpl', 'podinfo', '-n', crs);
      return d.status?.phase === 'Completed' && d.status?.current_version === '1.26.0' ? true : undefined;
    });
  });

  it('a spec change while a Deployer canary holds rolls it back and rolls out the newest version', async () => {
    const patch = (spec: object) =>
      kubectl('patch', 'dpl', 'podinfo', '-n', crs, '--type', 'merge', '-p', JSON.stringify({ spec }));
    await patch({ deployment: { version: '1.27.0' } });
    // Its canary steps in its rollout, its run's child (deployerRun's plan of one).
    const handle = harness().client.workflow.getHandle(deployerRolloutWorkflowId(crs, 'podinfo'));
    await eventually('the 1.27.0 canary holding', async () => {
      const p = await handle.query(canaryProgressQuery);
      return p.target.endsWith('podinfo-1.27.0') && p.waitingOn === 'hold' ? true : undefined;
    });
    // The status speaks for the generation the run deploys, not for a newer one it has not seen.
    const holding = await json('get', 'dpl', 'podinfo', '-n', crs);
    expect(holding.status.observedGeneration).toBe(holding.metadata.generation);
    await patch({ deployment: { version: '1.28.0' }, steps: [{ percent: 50, sleep: 1 }, { percent: 100 }] });
    const done = await eventually('1.28.0 serving, the older versions gone', async () => {
      const d = await json('get', 'dpl', 'podinfo', '-n', crs);
      const names = ((await json('get', 'deploy', '-n', releases)).items as { metadata: { name: string } }[])
        .map((i) => i.metadata.name)
        .filter((n) => n.startsWith('podinfo-'));
      return d.status?.current_version === '1.28.0' && names.join() === 'podinfo-1.28.0' ? d : undefined;
    });
    expect(done.status.observedGeneration).toBe(done.metadata.generation);
    // At 100 %, no deadline of an earlier hold is left behind in the status.
    expect(done.status.progress).toMatchObject({ percentage: 100 });
    expect(done.status.progress).not.toHaveProperty('wait');
    // One run per generation, and the 1.28.0 one is the 1.27.0 run started over (not a run the
    // bridge started after it ended). Earlier versions' runs may have started over too.
    const runs = (await runsOf(objectWorkflowId('Deployer', crs, 'podinfo'))).map(
      (r) => `${r.memo?.specs} ${r.status.name}`,
    );
    expect(runs.filter((r) => r.startsWith(`Deployer/podinfo@${holding.metadata.generation} `))).toEqual([
      `Deployer/podinfo@${holding.metadata.generation} CONTINUED_AS_NEW`,
    ]);
    expect(runs.filter((r) => r.startsWith(`Deployer/podinfo@${done.metadata.generation} `))).toHaveLength(1);
    expect(bridge!.output()).toContain('"message":"re-plan sent"');
  });

  it('a group no manifest lists runs on its own; deleting it uninstalls its charts', async () => {
    const charts = ['one', 'two']
      .map(
        (name) => `---
apiVersion: armada.airshipit.org/v1alpha1
kind: ArmadaChart
metadata: {name: solo-${name}}
spec:
  release: solo-${name}
  namespace: ${releases}
  source: {type: local, location: examples/charts/settings}
  values: {settings: {logLevel: ${name}}}
`,
      )
      .join('');
    const file = await tempFile(
      'group.yaml',
      `apiVersion: armada.airshipit.org/v1alpha1
kind: ArmadaChartGroup
metadata: {name: solo}
spec:
  sequenced: true
  chart_group: [solo-one, solo-two]
${charts}`,
    );
    await kubectl('apply', '-n', crs, '-f', file);
    const group = await eventually('the group satisfied', async () => {
      const g = await json('get', 'acg', 'solo', '-n', crs);
      return g.status?.satisfied ? g : undefined;
    });
    expect(group.status.reason).toBe('2/2 charts deployed');
    expect(await runsOf(objectWorkflowId('ArmadaChartGroup', crs, 'solo'))).toHaveLength(1);
    const list = JSON.parse(await helm('list', '-n', releases, '-o', 'json')) as { name: string }[];
    expect(
      list
        .map((r) => r.name)
        .filter((n) => n.startsWith('solo-'))
        .sort(),
    ).toEqual(['solo-one', 'solo-two']);
    await kubectl('delete', '-n', crs, '--wait=false', '-f', file);
    await eventually('the releases uninstalled and the objects gone', async () => {
      const left = JSON.parse(await helm('list', '-n', releases, '-o', 'json')) as { name: string }[];
      const objects = (await json('get', 'acg,act', '-n', crs)).items as { metadata: { name: string } }[];
      return !left.some((r) => r.name.startsWith('solo-')) &&
        !objects.some((o) => o.metadata.name.startsWith('solo'))
        ? true
        : undefined;
    });
  });

  it('kubectl delete of the manifest file uninstalls its releases, then the objects go', async () => {
    await kubectl('delete', '-n', crs, '--wait=false', '-f', await manifestFile(releases, 'b'));
    await eventually(
      'every release uninstalled and every manifest object gone',
      async () => {
        const list = JSON.parse(await helm('list', '-n', releases, '-o', 'json')) as { name: string }[];
        const left = (await json('get', 'amf,acg,act', '-n', crs)).items as { metadata: { name: string } }[];
        const ours = left.filter((o) => o.metadata.name !== 'bad');
        return list.filter((r) => r.name.startsWith('b-')).length === 0 && ours.length === 0
          ? true
          : undefined;
      },
      { timeoutMs: 180_000 },
    );
    // The uninstall ran the groups in reverse (apps, then platform) and the sequenced platform
    // group last chart first: in the manifest's uninstall run, each chart's steps (its activities,
    // releaseSteps) started after those of the one before it ended.
    const manifestId = objectWorkflowId('ArmadaManifest', crs, 'demo');
    let uninstallRun: string | undefined;
    for await (const run of harness().client.workflow.list({ query: `WorkflowId = '${manifestId}'` }))
      if ((run.memo as { mode?: string } | undefined)?.mode === 'uninstall') uninstallRun = run.runId;
    expect(uninstallRun).toBeDefined();
    const { events } = await harness().client.workflow.getHandle(manifestId, uninstallRun).fetchHistory();
    const uninstalls = new Map<string, { start: number; close: number }>();
    for (const chart of ['admin', 'backend', 'settings', 'web']) {
      const steps = releaseSteps(events ?? [], `b-${chart}`);
      if (steps?.types.includes('helmUninstall'))
        uninstalls.set(chart, { start: steps.started, close: steps.closed });
    }
    expect([...uninstalls.keys()].sort()).toEqual(['admin', 'backend', 'settings', 'web']);
    const at = (chart: string) => uninstalls.get(chart)!;
    expect(at('backend').start).toBeGreaterThanOrEqual(Math.max(at('web').close, at('admin').close));
    expect(at('settings').start).toBeGreaterThanOrEqual(at('backend').close);
  });

  it('annotations steer a manifest through its chart and groups, and roll it back', async () => {
    const gated = await manifestFile(releases, 'g', [
      ['  on_failure: rollback', '  on_failure: rollback\n  approval:\n    before: [apps]'],
    ]);
    await kubectl('apply', '-n', crs, '-f', gated);
    await eventually('the run waiting at the gate', async () => {
      const m = await json('get', 'amf', 'demo', '-n', crs);
      return m.status?.actual_state === 'waitingapproval' ? true : undefined;
    });
    const deployedFirst = JSON.parse(await helm('list', '-n', releases, '-o', 'json')) as { name: string }[];
    expect(deployedFirst.map((r) => r.name).sort()).toEqual(['g-backend', 'g-settings']);

    // A chart the manifest lists (its release is g-web, not web) is steered through the manifest:
    // named as the message's target, without a canary, it pauses the manifest's run as a whole.
    await kubectl('annotate', 'act', 'web', '-n', crs, 'armada.airshipit.org/action=pause');
    const paused = await eventually('the manifest paused, in its status', async () => {
      const m = await json('get', 'amf', 'demo', '-n', crs);
      return m.status?.paused ? m : undefined;
    });
    expect(paused.status.paused.by).toBe(admin);
    expect(paused.status.conditions).toContainEqual(
      expect.objectContaining({ type: 'Paused', status: 'True' }),
    );
    expect(await eventsOf(crs, 'web', 'Action')).toContain(
      `${admin} asked to pause: pausing at the next safe point; ArmadaChart ${crs}/web has no canary running: ArmadaManifest:${crs}/demo takes the pause as a whole, for every chart it deploys (ArmadaManifest:${crs}/demo)`,
    );
    await kubectl('annotate', 'act', 'web', '-n', crs, 'armada.airshipit.org/action=resume');
    await eventually('the pause cleared', async () => {
      const m = await json('get', 'amf', 'demo', '-n', crs);
      return m.status?.paused === undefined &&
        m.status?.conditions?.some(
          (c: { type: string; status: string }) => c.type === 'Paused' && c.status === 'False',
        )
        ? true
        : undefined;
    });
    // A group's approve passes the manifest's gate before that group, and no other.
    await kubectl('annotate', 'acg', 'platform', '-n', crs, 'armada.airshipit.org/action=approve');
    expect(
      await eventually('the refusal as an Event', async () => {
        const events = await eventsOf(crs, 'platform', 'Action');
        return events.includes('refused') ? events : undefined;
      }),
    ).toContain('the gate waiting is "before group apps", not "before group platform"');
    expect((await json('get', 'amf', 'demo', '-n', crs)).status.actual_state).toBe('waitingapproval');

    await kubectl('annotate', 'amf', 'demo', '-n', crs, 'armada.airshipit.org/action=rollback');
    await eventually('the manifest rolled back, its releases gone', async () => {
      const m = await json('get', 'amf', 'demo', '-n', crs);
      const list = JSON.parse(await helm('list', '-n', releases, '-o', 'json')) as { name: string }[];
      return m.status?.actual_state === 'rolledback' && !list.some((r) => r.name.startsWith('g-'))
        ? true
        : undefined;
    });
    const events = await eventsOf(crs, 'demo', 'Action');
    expect(events).toContain(`${admin} asked to rollback: rolling back`);
  });
});
