import { mkdir, mkdtemp, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import path from 'node:path';
import { WorkflowNotFoundError } from '@temporalio/client';
import type { KindName } from '../../api/kinds';
import { reconcile, type BridgeContext } from '../../bridge/reconcile';
import { ClaimIndex } from '../../bridge/claims';
import { claimOf, viewOf, type ObjectView } from '../../bridge/view';
import { latestRun } from '../../runs/control';
import { objectWorkflowId, releaseWorkflowId } from '../../workflows/plan/names';
import { helm, sharedWorker, uniqueName } from '../helpers/env';
import { installCrds, kubectl } from '../helpers/kube';
import { eventually, startBridge, type ProductProcess } from '../helpers/processes';

/**
 * `kubectl apply -f dir/` creates a directory's files in name order. Whatever that order, the
 * manifest's releases (`<release_prefix>-<release>`) are the only ones left in the end: a chart
 * or group the bridge ran on its own before the object listing it arrived gives up the
 * unprefixed releases its own run installed.
 */
describe('bridge: kubectl apply -f dir/ in any file order leaves only the manifest’s releases', () => {
  const harness = sharedWorker();
  const cases = {
    chartsFirst: uniqueName('order-a'),
    chartsDeployedFirst: uniqueName('order-b'),
    manifestFirst: uniqueName('order-c'),
  };
  /** Watched by no bridge: the test below reconciles it from a cache of its own. */
  const cacheLag = uniqueName('order-d');
  let bridge: ProductProcess | undefined;

  beforeAll(async () => {
    await installCrds();
    for (const namespace of [...Object.values(cases), cacheLag])
      await kubectl('create', 'namespace', namespace);
    bridge = startBridge(cases.chartsFirst, {
      ARMADA_TASK_QUEUE: harness().taskQueue,
      ARMADA_NAMESPACES: Object.values(cases).join(','),
      ARMADA_RESYNC_SECONDS: '2',
    });
  });
  afterAll(async () => {
    await bridge?.stop();
    for (const namespace of [...Object.values(cases), cacheLag])
      await kubectl('delete', 'namespace', namespace, `${namespace}-rel`, '--wait=false').catch(() => '');
  });

  /**
   * Manifest `demo` (release_prefix `p`): group `platform` [settings], then group `apps` [web],
   * one file per object in `dir`, numbered so that the kinds sort in `order`.
   */
  async function manifestDir(releases: string, order: ('chart' | 'group' | 'manifest')[]): Promise<string> {
    const dir = await mkdtemp(path.join(tmpdir(), 'armada-order-'));
    const doc = (kind: string, name: string, spec: string) =>
      `apiVersion: armada.airshipit.org/v1alpha1\nkind: ${kind}\nmetadata: {name: ${name}}\nspec: ${spec}\n`;
    const chart = (name: string, location: string) =>
      doc(
        'ArmadaChart',
        name,
        `{release: ${name}, namespace: ${releases}, source: {type: local, location: ${location}}}`,
      );
    const files: [string, string, string][] = [
      [
        'manifest',
        'demo',
        doc('ArmadaManifest', 'demo', '{release_prefix: p, chart_groups: [platform, apps]}'),
      ],
      ['group', 'platform', doc('ArmadaChartGroup', 'platform', '{chart_group: [settings]}')],
      ['group', 'apps', doc('ArmadaChartGroup', 'apps', '{chart_group: [web]}')],
      ['chart', 'settings', chart('settings', 'examples/charts/settings')],
      ['chart', 'web', chart('web', 'examples/charts/hello')],
    ];
    await mkdir(dir, { recursive: true });
    for (const [kind, name, text] of files)
      await writeFile(path.join(dir, `${order.indexOf(kind as never) + 1}-${kind}-${name}.yaml`), text);
    return dir;
  }

  /** The workflows that ran a chart or group on its own: none may still run in the end. */
  const standaloneRuns = (crs: string, releases: string) => [
    releaseWorkflowId(releases, 'settings'),
    releaseWorkflowId(releases, 'web'),
    objectWorkflowId('ArmadaChartGroup', crs, 'platform'),
    objectWorkflowId('ArmadaChartGroup', crs, 'apps'),
  ];
  const running = async (workflowId: string) => {
    try {
      return (await harness().client.workflow.getHandle(workflowId).describe()).status.name === 'RUNNING';
    } catch (err) {
      if (err instanceof WorkflowNotFoundError) return false;
      throw err;
    }
  };
  /** Every release in the namespace, whatever its state (helm 4 lists every status), as `name status`. */
  const releasesIn = async (namespace: string) =>
    (
      JSON.parse(await helm('list', '-n', namespace, '-o', 'json')) as {
        name: string;
        status: string;
      }[]
    )
      .map((r) => `${r.name} ${r.status}`)
      .sort();

  /** Waits for the end state: the manifest satisfied, its two releases alone, no standalone run left. */
  async function onlyPrefixedReleases(crs: string): Promise<void> {
    const releases = `${crs}-rel`;
    let seen: string[] = [];
    await eventually(
      `the manifest satisfied, only p-settings and p-web in ${releases}, no standalone run running`,
      async () => {
        const manifest = JSON.parse(await kubectl('get', 'amf', 'demo', '-n', crs, '-o', 'json'));
        seen = await releasesIn(releases).catch((err: Error) => [err.message]);
        const busy = [];
        for (const id of standaloneRuns(crs, releases)) if (await running(id)) busy.push(id);
        seen.push(`manifest satisfied: ${String(manifest.status?.satisfied)}`, `running: ${busy.join(', ')}`);
        return manifest.status?.satisfied === true &&
          seen.slice(0, -2).join() === 'p-settings deployed,p-web deployed' &&
          !busy.length
          ? true
          : undefined;
      },
      { process: bridge, timeoutMs: 150_000 },
    ).catch((err: Error) => {
      throw new Error(`${err.message}\nlast seen: ${seen.join('; ')}`);
    });
  }

  it('charts first (file names sort charts, then groups, then the manifest), in one apply', async () => {
    const crs = cases.chartsFirst;
    await kubectl('apply', '-n', crs, '-f', await manifestDir(`${crs}-rel`, ['chart', 'group', 'manifest']));
    await onlyPrefixedReleases(crs);
  });

  it('charts first, deployed on their own before the groups and the manifest arrive', async () => {
    const crs = cases.chartsDeployedFirst;
    const releases = `${crs}-rel`;
    const dir = await manifestDir(releases, ['chart', 'group', 'manifest']);
    await kubectl(
      'apply',
      '-n',
      crs,
      '-f',
      path.join(dir, '1-chart-settings.yaml'),
      '-f',
      path.join(dir, '1-chart-web.yaml'),
    );
    // The leak's precondition, seen: each chart installed its unprefixed release on its own.
    await eventually(
      'settings and web deployed by their standalone runs',
      async () =>
        (await releasesIn(releases)).join() === 'settings deployed,web deployed' ? true : undefined,
      { process: bridge },
    );
    await kubectl('apply', '-n', crs, '-f', dir);
    await onlyPrefixedReleases(crs);
  });

  it('manifest first (the manifest, then groups, then charts), in one apply', async () => {
    const crs = cases.manifestFirst;
    await kubectl('apply', '-n', crs, '-f', await manifestDir(`${crs}-rel`, ['manifest', 'group', 'chart']));
    await onlyPrefixedReleases(crs);
  });

  /**
   * Each kind has its own watch, so a group created after its manifest can reach the bridge's
   * cache first (the manifests' watch busy with large objects, say). Reconciled then, from a
   * cache that holds the group and its chart but not yet the manifest, the group must not run
   * on its own: the API server says a manifest lists it.
   */
  it('a group reconciled before the manifest listing it reaches the cache does not run on its own', async () => {
    const crs = cacheLag;
    const releases = `${crs}-rel`;
    await kubectl('apply', '-n', crs, '-f', await manifestDir(releases, ['manifest', 'group', 'chart']));
    const cached = new Map<KindName, ObjectView[]>();
    for (const [kind, resource] of [
      ['ArmadaChartGroup', 'acg'],
      ['ArmadaChart', 'act'],
    ] as const) {
      const { items } = JSON.parse(await kubectl('get', resource, '-n', crs, '-o', 'json'));
      cached.set(
        kind,
        items.map((obj: never) => viewOf(kind, obj)),
      );
    }
    const lines: string[] = [];
    const ctx: BridgeContext = {
      client: harness().client,
      taskQueue: harness().taskQueue,
      objects: ((kind: KindName) => ({
        get: (_namespace: string, name: string) => cached.get(kind)?.find((v) => v.name === name),
        list: () => cached.get(kind) ?? [],
      })) as BridgeContext['objects'],
      claims: ClaimIndex.of([...cached.values()].flat().map(claimOf)),
      // What grantAnyNamespace grants the namespaces of the other cases.
      policies: () => [{ name: 'cache-lag', spec: { namespaces: [crs], target_namespaces: ['*'] } }],
      tenancy: { lockdown: false },
      maybeRanAlone: new Set(),
      enqueue: (key) => lines.push(`enqueued ${key}`),
      afterRun: (workflowId) => lines.push(`following ${workflowId}`),
      startedRunning: () => false,
      log: (_level, message, fields) => lines.push(`${message} ${String(fields?.key)}`),
      metrics: { runStarted: (key) => lines.push(`started ${key}`), actionTaken: () => undefined },
    };

    // As the bridge's ServiceAccount, not the worker's this process otherwise uses.
    const worker = process.env.ARMADA_KUBECONFIG;
    process.env.ARMADA_KUBECONFIG = process.env.ARMADA_TEST_BRIDGE_KUBECONFIG;
    try {
      await reconcile(ctx, `ArmadaChartGroup/${crs}/apps`);
    } finally {
      process.env.ARMADA_KUBECONFIG = worker;
      // No bridge watches this namespace to remove the finalizer reconcile added.
      await kubectl(
        'patch',
        'acg',
        'apps',
        '-n',
        crs,
        '--type',
        'merge',
        '-p',
        '{"metadata":{"finalizers":null}}',
      );
    }

    expect(lines).toEqual([
      `not started: the API server has an object listing it that the cache lacks yet ArmadaChartGroup/${crs}/apps`,
    ]);
    expect(await latestRun(harness().client, objectWorkflowId('ArmadaChartGroup', crs, 'apps'))).toBeNull();
    expect(await latestRun(harness().client, releaseWorkflowId(releases, 'web'))).toBeNull();
  });
});
