import { mkdir, mkdtemp, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import path from 'node:path';
import { WorkflowNotFoundError } from '@temporalio/client';
import { reconcile } from '../../bridge/reconcile';
import { leftoverRetryDelayMs } from '../../bridge/leftover-retries';
import { LEFTOVER_UNINSTALL_FAILED } from '../../bridge/standalone';
import { viewOf, type ObjectView } from '../../bridge/view';
import { serviceAccountUser } from '../../kube/client';
import { latestRun } from '../../runs/control';
import { objectWorkflowId, releaseWorkflowId } from '../../core/plan/names';
import { helm, sharedWorker, uniqueName } from '../helpers/env';
import {
  applyObjects,
  armadaObject,
  dropFinalizers,
  grantedRole,
  installCrds,
  kubectl,
  settingsChart,
} from '../helpers/kube';
import { asBridge, cachedContext } from '../helpers/bridge-context';
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
    uninstallFails: uniqueName('order-e'),
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

  /** The workflows that ran a chart or group on its own (a group's charts as children): none may still run in the end. */
  const standaloneRuns = (crs: string, releases: string) => [
    objectWorkflowId('ArmadaChart', crs, 'settings'),
    objectWorkflowId('ArmadaChart', crs, 'web'),
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
   * The release a chart installed on its own cannot be uninstalled (its ServiceAccount lost its
   * rights where the release is): the uninstall runs again after a backoff, never in a tight
   * loop (on the code before, every ~150 ms), the manifest's status says why and when, and once
   * the rights are back the leftover goes and the manifest deploys.
   */
  it('a leftover whose uninstall fails is retried with a backoff, named in the manifest’s status, and cleared once the cause is gone', async () => {
    const crs = cases.uninstallFails;
    const releases = `${crs}-rel`;
    const workflowId = objectWorkflowId('ArmadaChart', crs, 'web');
    const owner = { namespace: crs, name: 'owner' };
    const canList = () =>
      kubectl('auth', 'can-i', 'list', 'secrets', '-n', releases, '--as', serviceAccountUser(owner)).then(
        (out) => out.trim(),
        (err: { stdout?: string }) => err.stdout?.trim() ?? String(err),
      );
    const grant = grantedRole('owner', owner, [{ apiGroups: [''], resources: ['*'], verbs: ['*'] }]);
    // A run acting as a ServiceAccount creates no namespace.
    await kubectl('create', 'namespace', releases);
    await applyObjects(crs, [{ apiVersion: 'v1', kind: 'ServiceAccount', metadata: { name: 'owner' } }]);
    await applyObjects(releases, grant);
    await eventually('the grant to reach the authorizer', async () =>
      (await canList()) === 'yes' ? true : undefined,
    );
    await applyObjects(crs, [settingsChart('web', releases, { a: '1' }, { service_account_name: 'owner' })]);
    await eventually(
      'web deployed by its standalone run',
      async () => ((await releasesIn(releases)).join() === 'web deployed' ? true : undefined),
      { process: bridge },
    );

    // The cause: `owner` may no longer read the release's Secrets, so its uninstall is refused.
    await kubectl('delete', 'rolebinding', 'owner', '-n', releases);
    await eventually('the revocation to reach the authorizer', async () =>
      (await canList()) === 'no' ? true : undefined,
    );
    await applyObjects(crs, [
      armadaObject('ArmadaChartGroup', 'apps', { chart_group: ['web'] }),
      armadaObject('ArmadaManifest', 'demo', { release_prefix: 'p', chart_groups: ['apps'] }),
    ]);

    /** The uninstall runs of the leftover, oldest first. */
    const uninstalls = async () => {
      const runs = [];
      for await (const info of harness().client.workflow.list({ query: `WorkflowId = '${workflowId}'` }))
        if ((info.memo as { mode?: string } | undefined)?.mode === 'uninstall') runs.push(info);
      return runs.sort((a, b) => a.startTime.getTime() - b.startTime.getTime());
    };
    // Four failures in a row take at least 1 + 2 + 4 s of waits between them.
    const failed = await eventually(
      'four failed uninstall runs',
      async () => {
        const runs = await uninstalls();
        return runs.filter((r) => r.status.name === 'FAILED').length >= 4 ? runs : undefined;
      },
      { process: bridge, timeoutMs: 60_000 },
    );
    // Each run starts no sooner than the backoff after the failure before it ended.
    const waits = failed
      .slice(1)
      .map((run, i) => ({
        after: i + 1,
        waitedMs: run.startTime.getTime() - failed[i].closeTime!.getTime(),
      }))
      .filter(({ after }) => after < 4);
    expect(
      waits.map(({ after, waitedMs }) => waitedMs >= leftoverRetryDelayMs(after) || { after, waitedMs }),
    ).toEqual([true, true, true]);
    // And so, in the 10 s after the first failure, at most 3 more runs (1 + 2 + 4 s ≤ 10 s < 1 + 2 + 4 + 8 s).
    const firstEnded = failed[0].closeTime!.getTime();
    expect(
      failed.filter((r) => r.startTime.getTime() > firstEnded && r.startTime.getTime() <= firstEnded + 10_000)
        .length,
    ).toBeLessThanOrEqual(3);

    const manifest = JSON.parse(await kubectl('get', 'amf', 'demo', '-n', crs, '-o', 'json'));
    const ready = manifest.status.conditions.find((c: { type: string }) => c.type === 'Ready');
    expect(ready).toMatchObject({ status: 'False', reason: LEFTOVER_UNINSTALL_FAILED });
    expect(ready.message).toContain(
      `the uninstall of release ${releases}/web, which ArmadaChart web installed on its own, failed (${workflowId}, run `,
    );
    expect(ready.message).toMatch(/forbidden/i);
    expect(ready.message).toMatch(/; tried again at \d{4}-\d\d-\d\dT/);
    expect(manifest.status.reason).toBe(ready.message);
    const events = JSON.parse(
      await kubectl(
        'get',
        'events',
        '-n',
        crs,
        '--field-selector',
        `involvedObject.name=demo,reason=${LEFTOVER_UNINSTALL_FAILED}`,
        '-o',
        'json',
      ),
    ).items as { type: string; message: string }[];
    expect(events.length).toBeGreaterThan(0);
    expect(events.every((e) => e.type === 'Warning' && e.message.includes(`${releases}/web`))).toBe(true);

    // The cause removed: the next retry clears the leftover and the manifest deploys.
    await applyObjects(releases, grant);
    await eventually(
      'the manifest satisfied, p-web alone in the namespace',
      async () => {
        const status = JSON.parse(await kubectl('get', 'amf', 'demo', '-n', crs, '-o', 'json')).status;
        return status?.satisfied === true && (await releasesIn(releases)).join() === 'p-web deployed'
          ? true
          : undefined;
      },
      { process: bridge, timeoutMs: 150_000 },
    );
    expect((await uninstalls()).at(-1)?.status.name).toBe('COMPLETED');
  }, 240_000);

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
    const cached: ObjectView[] = [];
    for (const [kind, resource] of [
      ['ArmadaChartGroup', 'acg'],
      ['ArmadaChart', 'act'],
    ] as const) {
      const { items } = JSON.parse(await kubectl('get', resource, '-n', crs, '-o', 'json'));
      cached.push(...items.map((obj: never) => viewOf(kind, obj)));
    }
    const lines: string[] = [];
    const ctx = cachedContext(harness(), cached, {
      lines,
      // What grantAnyNamespace grants the namespaces of the other cases.
      policies: [{ name: 'cache-lag', spec: { namespaces: [crs], target_namespaces: ['*'] } }],
    });

    try {
      await asBridge(() => reconcile(ctx, `ArmadaChartGroup/${crs}/apps`));
    } finally {
      // No bridge watches this namespace to remove the finalizer reconcile added.
      await dropFinalizers('acg/apps', crs);
    }

    expect(lines).toEqual([
      `not started: the API server has an object listing it that the cache lacks yet ArmadaChartGroup/${crs}/apps`,
    ]);
    expect(await latestRun(harness().client, objectWorkflowId('ArmadaChartGroup', crs, 'apps'))).toBeNull();
    expect(await latestRun(harness().client, objectWorkflowId('ArmadaChart', crs, 'web'))).toBeNull();
    expect(await latestRun(harness().client, releaseWorkflowId(releases, 'web'))).toBeNull();
  });
});
