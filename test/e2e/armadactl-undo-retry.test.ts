import type { Server } from 'node:http';
import { copyFile, mkdir, mkdtemp, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import path from 'node:path';
import { stringify } from 'yaml';
import { GROUP, VERSION } from '../../api/common';
import { objectWorkflowId } from '../../core/plan/names';
import { releaseSteps } from '../helpers/release-steps';
import { armadactlHere as armadactl } from '../helpers/armadactl';
import { serveFiles } from '../helpers/chart-servers';
import { helm, sharedWorker, uniqueName } from '../helpers/env';
import { applyObjects, installCrds, kubectl, whoAmI } from '../helpers/kube';
import { eventually, startBridge, type ProductProcess } from '../helpers/processes';

const settingsChart = path.resolve(__dirname, '../../examples/charts/settings');

/**
 * Day two on the real stack (issue 19, items 1 and 2): `armadactl rollback --previous | --to-run`
 * undoes a finished manifest run as a run of its own, and `armadactl retry` takes up a failed one
 * at the chart that failed. Manifests are applied from files (armadactl apply) onto the shared
 * worker; charts are examples/charts/settings (one ConfigMap), one of them a .tgz that the test's
 * server does not have yet on the first run.
 */
describe('armadactl rollback --previous/--to-run and retry (real worker, helm, sandbox cluster)', () => {
  const harness = sharedWorker();
  const objects = uniqueName('day2-cr');
  const releases = uniqueName('day2-rel');
  let work = '';
  let www = '';
  let server: Server | undefined;
  let chartUrl = '';

  const doc = (kind: string, name: string, spec: object) => ({
    apiVersion: `${GROUP}/${VERSION}`,
    kind,
    metadata: { name },
    spec,
  });
  const settings = (name: string, value: string, source?: object) =>
    doc('ArmadaChart', name, {
      release: name,
      namespace: releases,
      source: source ?? { type: 'local', location: 'examples/charts/settings' },
      values: { settings: { value } },
      wait: { timeout: 60, resources: [] },
    });
  /** Writes a manifest file: `groups` in order, each sequenced, of the charts given. */
  const manifestFile = async (name: string, groups: Record<string, object[]>) => {
    const docs = [
      doc('ArmadaManifest', name, { release_prefix: name, chart_groups: Object.keys(groups) }),
      ...Object.entries(groups).flatMap(([group, charts]) => [
        doc('ArmadaChartGroup', group, {
          sequenced: true,
          chart_group: charts.map((c) => (c as { metadata: { name: string } }).metadata.name),
        }),
        ...charts,
      ]),
    ];
    const file = path.join(work, `${name}-${Date.now()}.yaml`);
    await writeFile(file, docs.map((d) => stringify(d)).join('---\n'));
    return file;
  };
  const apply = (file: string) => armadactl('apply', '-f', file, '--wait', '-n', objects);
  const history = async (release: string) =>
    (
      JSON.parse(await helm('history', release, '-n', releases, '-o', 'json')) as {
        revision: number;
        status: string;
        description: string;
      }[]
    ).map(
      (h) =>
        `${h.revision} ${h.status} ${h.description.startsWith('armada-digest') ? 'deploy' : h.description}`,
    );
  const value = async (release: string) =>
    JSON.parse(await helm('get', 'values', release, '-n', releases, '-o', 'json')).settings.value as string;
  /** The releases (named `prefix`…) in the releases' namespace, sorted. */
  const releaseList = async (prefix = '') =>
    (JSON.parse(await helm('list', '-n', releases, '-o', 'json')) as { name: string }[])
      .map((r) => r.name)
      .filter((r) => r.startsWith(prefix))
      .sort();

  beforeAll(async () => {
    work = await mkdtemp(path.join(tmpdir(), 'armada-day2-'));
    www = path.join(work, 'www');
    await mkdir(www);
    await helm('package', settingsChart, '--destination', path.join(work, 'packaged'));
    ({ server, url: chartUrl } = await serveFiles(www));
    await installCrds();
    await kubectl('create', 'namespace', objects);
    process.env.ARMADA_TASK_QUEUE = harness().taskQueue;
  });
  afterAll(async () => {
    server?.close();
    await kubectl('delete', 'namespace', objects, releases, '--ignore-not-found', '--wait=false');
  });

  it('rollback --previous puts every release of the last deploy back to its revision before it, as a run of its own; --to-run the first one uninstalls what it installed', async () => {
    const charts = (v: string) => ({ web: [settings('x', v), settings('y', v)] });
    expect((await apply(await manifestFile('undo', charts('a')))).code).toBe(0);
    expect((await apply(await manifestFile('undo', charts('b')))).code).toBe(0);
    expect(await value('undo-x')).toBe('b');
    const runs = async () => {
      const found: string[] = [];
      for await (const r of harness().client.workflow.list({
        query: `WorkflowId = '${objectWorkflowId('ArmadaManifest', objects, 'undo')}'`,
      }))
        found.push(r.runId);
      return found.reverse(); // oldest first
    };
    const [firstRun] = await runs();

    const undone = await armadactl('rollback', 'undo', '-n', objects, '--previous', '--as-temporal-admin');
    expect(undone).toMatchObject({ code: 0 });
    expect(undone.printed).toContain('put back: ' + `${releases}/undo-y, ${releases}/undo-x`);
    for (const release of ['undo-x', 'undo-y']) {
      expect(await value(release)).toBe('a');
      expect(await history(release)).toEqual([
        '1 superseded deploy',
        '2 superseded deploy',
        '3 deployed Rollback to 1',
      ]);
    }
    // The undo is a run of its own under the manifest's ID, and the manifest reads RolledBack.
    const all = await runs();
    expect(all).toHaveLength(3);
    const undo = await harness()
      .client.workflow.getHandle(objectWorkflowId('ArmadaManifest', objects, 'undo'))
      .describe();
    expect(undo.type).toBe('undoWorkflow');

    // Undoing the first run goes back to before it: it installed both releases.
    const toFirst = await armadactl(
      'rollback',
      'undo',
      '-n',
      objects,
      '--to-run',
      firstRun,
      '--as-temporal-admin',
    );
    expect(toFirst).toMatchObject({ code: 0 });
    expect(await releaseList()).toEqual([]);

    // An undo is not itself undone: it is no deploy.
    const refused = await armadactl(
      'rollback',
      'undo',
      '-n',
      objects,
      '--to-run',
      all[2],
      '--as-temporal-admin',
    );
    expect(refused.code).toBe(1);
    expect(refused.printed).toContain(
      `run ${all[2]} of undo (undoWorkflow, completed) is not a finished deploy`,
    );
  });

  it('rollback --previous walks back one deploy at a time (v3, then v2, then v1), for a manifest and for a chart applied from a file, named though not on the cluster', async () => {
    // Issue 32.5: a second --previous undid the same deploy again; a chart applied with
    // armadactl had no way back by name ("its custom resource is not on the cluster").
    const chartFile = async (v: string) => {
      const file = path.join(work, `walk-chart-${v}.yaml`);
      await writeFile(file, stringify(settings('walk-solo', v)));
      return file;
    };
    for (const v of ['v1', 'v2', 'v3']) {
      expect((await apply(await manifestFile('walk', { web: [settings('x', v)] }))).code).toBe(0);
      expect((await apply(await chartFile(v))).code).toBe(0);
    }
    expect([await value('walk-x'), await value('walk-solo')]).toEqual(['v3', 'v3']);
    for (const [target, release] of [
      ['walk', 'walk-x'],
      ['act/walk-solo', 'walk-solo'],
    ]) {
      const back = () => armadactl('rollback', target, '-n', objects, '--previous');
      expect(await back()).toMatchObject({ code: 0 });
      expect(await value(release)).toBe('v2');
      expect(await back()).toMatchObject({ code: 0 });
      expect(await value(release)).toBe('v1');
    }
  });

  it('retry takes up a failed manifest at the chart that failed: the charts before it keep their revisions and are not run again, the later groups deploy', async () => {
    const tgz = { type: 'tar', location: `${chartUrl}/settings-0.1.0.tgz` };
    const file = await manifestFile('retry', {
      first: [settings('a', '1'), settings('b', '1')],
      second: [settings('c', '1', tgz)],
      third: [settings('d', '1')],
    });
    const failed = await apply(file);
    expect(failed.code).toBe(1);
    expect(failed.printed).toContain('retry-c');
    expect(await releaseList('retry-')).toEqual(['retry-a', 'retry-b']);
    // Which releases a run of the manifest took steps on (its activities name them: releaseSteps).
    const manifestId = objectWorkflowId('ArmadaManifest', objects, 'retry');
    const stepsIn = async (runId: string) => {
      const { events } = await harness().client.workflow.getHandle(manifestId, runId).fetchHistory();
      return ['a', 'b', 'c', 'd'].filter((c) => releaseSteps(events ?? [], `retry-${c}`));
    };
    const failedRun = (await harness().client.workflow.getHandle(manifestId).describe()).runId;
    expect(await stepsIn(failedRun)).toEqual(['a', 'b', 'c']);

    // What failed is fixed outside the spec: the chart server now has the chart.
    await copyFile(path.join(work, 'packaged', 'settings-0.1.0.tgz'), path.join(www, 'settings-0.1.0.tgz'));
    const retried = await armadactl('retry', 'retry', '-n', objects, '--as-temporal-admin');
    expect(retried).toMatchObject({ code: 0 });
    expect(await releaseList('retry-')).toEqual(['retry-a', 'retry-b', 'retry-c', 'retry-d']);
    for (const release of ['retry-a', 'retry-b', 'retry-c', 'retry-d'])
      expect(await history(release)).toEqual(['1 deployed deploy']);
    // a and b were not run again: the retry's run took no step on their releases.
    const retryRun = (await harness().client.workflow.getHandle(manifestId).describe()).runId;
    expect(retryRun).not.toBe(failedRun);
    expect(await stepsIn(retryRun)).toEqual(['c', 'd']);

    // Nothing failed last: nothing to retry.
    const again = await armadactl('retry', 'retry', '-n', objects, '--as-temporal-admin');
    expect(again.code).toBe(1);
    expect(again.printed).toContain('is completed without a failure: nothing to retry');
  });

  describe('as annotations on the cluster (bridge process)', () => {
    const crs = uniqueName('day2-dpl');
    let bridge: ProductProcess;
    const deployer = (version: string) => ({
      apiVersion: `${GROUP}/${VERSION}`,
      kind: 'Deployer',
      metadata: { name: 'web' },
      spec: {
        type: 'canary',
        deployment: {
          name: 'web',
          namespace: crs,
          image: 'nginx',
          version,
          labels: { app: 'web' },
          replicas: 2,
        },
        steps: [{ percent: 50, sleep: 1 }],
      },
    });
    const deployments = async () =>
      (
        JSON.parse(await kubectl('get', 'deployments', '-n', crs, '-o', 'json')) as {
          items: { metadata: { name: string }; spec: { replicas: number } }[];
        }
      ).items
        .map((d) => `${d.metadata.name}×${d.spec.replicas}`)
        .sort();
    const deployed = (version: string, phase = 'Completed') =>
      eventually(
        `web at ${version}, ${phase}`,
        async () => {
          const status = JSON.parse(await kubectl('get', 'dpl', 'web', '-n', crs, '-o', 'json')).status;
          return status?.phase === phase &&
            status.current_version === version &&
            (await deployments()).join() === `web-${version}×2`
            ? true
            : undefined;
        },
        { process: bridge },
      );

    beforeAll(async () => {
      await kubectl('create', 'namespace', crs);
      bridge = startBridge(crs, { ARMADA_TASK_QUEUE: harness().taskQueue });
    });
    afterAll(async () => {
      await bridge?.stop();
      await kubectl('delete', 'namespace', crs, '--wait=false');
    });

    it('retry of a group a manifest lists takes up the manifest from that group: the later group deploys and the manifest ends Deployed', async () => {
      // Issue 32.4: the retry ran the group alone under the manifest's child ID; the later group never deployed.
      const missing = { type: 'tar', location: `${chartUrl}/rt-later.tgz` };
      const docs = [
        doc('ArmadaManifest', 'rt', { release_prefix: 'rt', chart_groups: ['rt-first', 'rt-second'] }),
        doc('ArmadaChartGroup', 'rt-first', { sequenced: true, chart_group: ['rt-p'] }),
        doc('ArmadaChartGroup', 'rt-second', { sequenced: true, chart_group: ['rt-q'] }),
        settings('rt-p', '1', missing),
        settings('rt-q', '1'),
      ];
      await applyObjects(crs, docs);
      const state = async () =>
        JSON.parse(await kubectl('get', 'amf', 'rt', '-n', crs, '-o', 'json')).status?.actual_state as string;
      // The run writes `failed` just before it ends; retry takes up an ended run only.
      const run = harness().client.workflow.getHandle(objectWorkflowId('ArmadaManifest', crs, 'rt'));
      await eventually(
        'manifest rt failed and its run ended',
        async () =>
          (await state()) === 'failed' && (await run.describe()).status.name !== 'RUNNING' ? true : undefined,
        { process: bridge },
      );
      await copyFile(path.join(work, 'packaged', 'settings-0.1.0.tgz'), path.join(www, 'rt-later.tgz'));
      const retried = await armadactl('retry', 'acg/rt-first', '-n', crs);
      expect(retried.printed).toContain(`ArmadaManifest ${crs}/rt: retry of run`);
      expect(retried.printed).toContain('(asked on acg/rt-first)');
      expect(retried).toMatchObject({ code: 0 });
      expect(await value('rt-rt-q')).toBe('1');
      await eventually(
        'manifest rt deployed',
        async () => ((await state()) === 'deployed' ? true : undefined),
        {
          process: bridge,
        },
      );
    });

    it('armada.airshipit.org/action=undo with now=true puts a Deployer back on the version its last rollout replaced, at once; the bridge records who asked', async () => {
      await applyObjects(crs, [deployer('1')]);
      await deployed('1');
      await applyObjects(crs, [deployer('2')]);
      await deployed('2');
      await kubectl(
        'annotate',
        'dpl/web',
        '-n',
        crs,
        'armada.airshipit.org/action=undo',
        'armada.airshipit.org/now=true',
      );
      // Not at its spec (version 2) now: RolledBack, as every undo ends, until it is applied again.
      await deployed('1', 'RolledBack');
      const events = await kubectl(
        'get',
        'events',
        '-n',
        crs,
        '--field-selector',
        'reason=Action',
        '-o',
        'json',
      );
      const messages = (JSON.parse(events) as { items: { message: string }[] }).items.map((e) => e.message);
      expect(messages.join('\n')).toMatch(
        new RegExp(`${await whoAmI()} asked to undo: started Deployer .*back to version 1 at once`),
      );
      const annotations = JSON.parse(await kubectl('get', 'dpl', 'web', '-n', crs, '-o', 'json')).metadata
        .annotations;
      expect(annotations?.['armada.airshipit.org/action']).toBeUndefined();
      expect(annotations?.['armada.airshipit.org/now']).toBeUndefined();
    });
  });
});
