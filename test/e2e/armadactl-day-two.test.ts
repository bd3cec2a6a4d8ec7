import { mkdtemp, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import path from 'node:path';
import { GROUP, VERSION } from '../../api/common';
import type { DiffReport } from '../../cli/diff';
import type { ListRow, ObjectReport } from '../../cli/list';
import { canaryProgressQuery } from '../../workflows/messages';
import { canaryWorkflowId, objectWorkflowId } from '../../core/plan/names';
import { armadactlAs, tenant } from '../helpers/armadactl';
import { helm, sharedWorker, uniqueName } from '../helpers/env';
import { applyObjects, helloChart, installCrds, kubectl, settingsChart } from '../helpers/kube';
import { eventually, startBridge, type ProductProcess } from '../helpers/processes';

/** The sandbox's administrator, as a person with full rights runs armadactl. */
const admin = (...args: string[]) => armadactlAs(process.env.KUBECONFIG!, ...args);

/** A file of documents, as a person keeps them. */
async function documentsFile(dir: string, name: string, docs: object[]): Promise<string> {
  const file = path.join(dir, name);
  await writeFile(file, docs.map((d) => JSON.stringify(d)).join('\n---\n'));
  return file;
}

/** An ArmadaChart of the credentials fixture chart: a ConfigMap of `settings` and a Secret of `credentials`. */
const credentialsChart = (
  name: string,
  releases: string,
  settings: Record<string, string>,
  credentials: Record<string, string>,
) =>
  settingsChart(name, releases, settings, {
    source: { type: 'local', location: 'test/fixtures/charts/credentials' },
    values: { settings, credentials },
  });

const revisions = async (release: string, namespace: string) =>
  (JSON.parse(await helm('history', release, '-n', namespace, '-o', 'json')) as unknown[]).length;

describe('armadactl day two: diff, list, get, cancel, delete (sandbox cluster, Temporal dev server, bridge)', () => {
  const harness = sharedWorker();
  const crs = uniqueName('day-two');
  const releases = uniqueName('day-two-rel');
  let dir: string;
  let bridge: ProductProcess | undefined;

  beforeAll(async () => {
    dir = await mkdtemp(path.join(tmpdir(), 'armadactl-day-two-'));
    await installCrds();
    await kubectl('create', 'namespace', crs);
    // armadactl's child processes start runs on this suite's worker.
    process.env.ARMADA_TASK_QUEUE = harness().taskQueue;
    bridge = startBridge(crs, { ARMADA_TASK_QUEUE: harness().taskQueue });
  });

  afterAll(async () => {
    await bridge?.stop();
    await kubectl('delete', 'namespace', crs, releases, '--wait=false').catch(() => '');
  });

  describe('diff against a live release', () => {
    const applied = { logLevel: 'info' };
    const secrets = { password: 's3cret-one', user: 'admin-user' };
    let v1: string;
    let v2: string;

    beforeAll(async () => {
      v1 = await documentsFile(dir, 'v1.yaml', [credentialsChart('creds', releases, applied, secrets)]);
      v2 = await documentsFile(dir, 'v2.yaml', [
        credentialsChart('creds', releases, { logLevel: 'debug' }, { ...secrets, password: 's3cret-two' }),
      ]);
      const deployed = await admin('apply', '-f', v1, '-n', crs, '--wait');
      expect(deployed).toMatchObject({ code: 0 });
      expect(deployed.stdout).toContain('creds: installed, revision 1');
    });

    it('lists what apply deployed from the file after its run ended, as helm list does', async () => {
      // Issue 36.5: list showed an object from a file only while its run was running.
      const { code, stdout } = await admin('list', '-n', crs, '-o', 'json');
      expect(code).toBe(0);
      const { rows } = JSON.parse(stdout) as { rows: ListRow[] };
      expect(rows.filter((r) => r.name === 'creds')).toEqual([
        {
          kind: 'ArmadaChart',
          namespace: crs,
          name: 'creds',
          from: 'file',
          state: 'ready',
          phase: 'Deployed',
          run: {
            workflowId: objectWorkflowId('ArmadaChart', crs, 'creds'),
            runId: expect.any(String),
            status: 'COMPLETED',
            endedAt: expect.any(String),
          },
          since: expect.any(String),
          waitingOn: null,
        },
      ]);
      expect((await admin('list', '-n', crs)).stdout).toMatch(
        /^act\/creds +file +ready +Deployed +completed \d+\S* ago +\d+\S*$/m,
      );
    });

    it('says unchanged, exit 0, for the file that was applied: the digest a run compares', async () => {
      const { code, stdout } = await admin('diff', '-f', v1, '-n', crs);
      expect(stdout.split('\n')).toEqual([
        expect.stringMatching(
          new RegExp(
            `^ArmadaChart ${crs}/creds → ${releases}/creds: unchanged \\(revision 1 runs this chart and these values`,
          ),
        ),
        '1 release: 1 unchanged',
      ]);
      expect(code).toBe(0);
    });

    it('shows an upgrade as unified diffs, Secret values masked, exit 1, and writes nothing', async () => {
      const { code, stdout } = await admin('diff', '-f', v2, '-n', crs);
      expect(code).toBe(1);
      const lines = stdout.split('\n');
      expect(lines[0]).toMatch(
        new RegExp(
          `^ArmadaChart ${crs}/creds → ${releases}/creds: upgrade \\(chart or values changed since revision 1`,
        ),
      );
      expect(lines).toEqual(
        expect.arrayContaining([
          `--- live/ConfigMap/${releases}/creds`,
          `+++ wanted/ConfigMap/${releases}/creds`,
          '-  logLevel: info',
          '+  logLevel: debug',
          `--- live/Secret/${releases}/creds`,
          '-  password: "***"',
          '+  password: "*** (changed)"',
          '   user: "***"',
        ]),
      );
      expect(stdout).not.toMatch(/s3cret|admin-user/);
      expect(lines.at(-1)).toBe('1 release: 1 upgrade');
      expect(await revisions('creds', releases)).toBe(1);
    });

    it('gives the same as JSON with -o json', async () => {
      const { code, stdout } = await admin('diff', '-f', v2, '-n', crs, '-o', 'json');
      expect(code).toBe(1);
      expect(stdout).not.toMatch(/s3cret|admin-user/);
      const report = JSON.parse(stdout) as DiffReport;
      expect(report.releases).toEqual([
        expect.objectContaining({
          object: `ArmadaChart ${crs}/creds`,
          release: `${releases}/creds`,
          mode: 'deploy',
          action: 'upgrade',
          revision: 1,
          error: null,
        }),
      ]);
      expect(report.releases[0].objects.map((o) => [o.object, o.change])).toEqual([
        [`ConfigMap/${releases}/creds`, 'changed'],
        [`Secret/${releases}/creds`, 'changed'],
      ]);
    });

    it('compares the rendered manifests where the digest key is not readable, and says so', async () => {
      // A caller without the worker's key: no ARMADA_DIGEST_KEY_FILE, no default key file.
      const saved = { file: process.env.ARMADA_DIGEST_KEY_FILE, state: process.env.XDG_STATE_HOME };
      delete process.env.ARMADA_DIGEST_KEY_FILE;
      process.env.XDG_STATE_HOME = await mkdtemp(path.join(tmpdir(), 'no-digest-key-'));
      try {
        const same = await admin('diff', '-f', v1, '-n', crs);
        expect(same.stdout.split('\n')[0]).toBe(
          `ArmadaChart ${crs}/creds → ${releases}/creds: unchanged (revision 1 runs the manifest this chart and these values render; the digest key is not readable here (ARMADA_DIGEST_KEY_FILE), so the manifests were compared, and a change of values that renders no manifest (a hook's) is not seen)`,
        );
        expect(same.code).toBe(0);
        const changed = await admin('diff', '-f', v2, '-n', crs);
        expect(changed.stdout.split('\n')[0]).toBe(
          `ArmadaChart ${crs}/creds → ${releases}/creds: upgrade (the manifest differs from revision 1's; the digest key is not readable here (ARMADA_DIGEST_KEY_FILE), so the manifests were compared)`,
        );
        expect(changed.stdout).not.toMatch(/s3cret|admin-user/);
        expect(changed.code).toBe(1);
      } finally {
        for (const [name, value] of [
          ['ARMADA_DIGEST_KEY_FILE', saved.file],
          ['XDG_STATE_HOME', saved.state],
        ] as const)
          if (value === undefined) delete process.env[name];
          else process.env[name] = value;
      }
    });

    it('previews target_state uninstalled as the removal of every object of the release', async () => {
      const file = await documentsFile(
        dir,
        'gone.yaml',
        [credentialsChart('creds', releases, applied, secrets)].map((c) => ({
          ...c,
          spec: { ...c.spec, target_state: 'uninstalled' },
        })),
      );
      const { code, stdout } = await admin('diff', '-f', file, '-n', crs, '-o', 'json');
      expect(code).toBe(1);
      const [release] = (JSON.parse(stdout) as DiffReport).releases;
      expect(release).toMatchObject({ mode: 'uninstall', action: 'uninstall', revision: 1 });
      expect(release.objects.map((o) => o.change)).toEqual(['removed', 'removed']);
      expect(stdout).not.toMatch(/s3cret|admin-user/);
    });

    it('reports the releases a manifest no longer lists as left installed, from its last run', async () => {
      const manifest = (charts: string[]) => [
        {
          apiVersion: `${GROUP}/${VERSION}`,
          kind: 'ArmadaManifest',
          metadata: { name: 'trim' },
          spec: { release_prefix: 'trim', chart_groups: ['trim-apps'] },
        },
        {
          apiVersion: `${GROUP}/${VERSION}`,
          kind: 'ArmadaChartGroup',
          metadata: { name: 'trim-apps' },
          spec: { chart_group: charts },
        },
        ...charts.map((c) => settingsChart(c, releases, { chart: c })),
      ];
      const both = await documentsFile(dir, 'trim-both.yaml', manifest(['keep', 'drop']));
      expect((await admin('apply', '-f', both, '-n', crs, '--wait')).code).toBe(0);
      const one = await documentsFile(dir, 'trim-one.yaml', manifest(['keep']));
      const { code, stdout } = await admin('diff', '-f', one, '-n', crs);
      expect(stdout.split('\n')).toEqual([
        expect.stringMatching(new RegExp(`^ArmadaChart ${crs}/keep → ${releases}/trim-keep: unchanged `)),
        `release ${releases}/trim-drop (chart drop): no longer listed; a run leaves it installed (helm uninstall it, or list it again)`,
        '1 release: 1 unchanged',
      ]);
      // Nothing a run would change: the release it leaves alone is not a change.
      expect(code).toBe(0);
    });

    it('previews an install into a namespace that does not exist yet, and creates nothing', async () => {
      const elsewhere = uniqueName('day-two-none');
      const file = await documentsFile(dir, 'new.yaml', [credentialsChart('fresh', elsewhere, applied, {})]);
      const { code, stdout } = await admin('diff', '-f', file, '-n', crs, '-o', 'json');
      const [release] = (JSON.parse(stdout) as DiffReport).releases;
      expect(release).toMatchObject({ action: 'install', revision: null, reason: 'no release yet' });
      expect(release.objects.map((o) => o.change)).toEqual(['added', 'added']);
      expect(code).toBe(1);
      await expect(kubectl('get', 'namespace', elsewhere)).rejects.toThrow(/NotFound/);
    });

    it("shows a canary upgrade's steps and each step's split over the live Deployment", async () => {
      const canary = {
        steps: [
          { percent: 25, sleep: '1h' },
          { percent: 50, approval: true },
        ],
      };
      const hello = (tag: string) =>
        helloChart('shop', releases, { canary, values: { replicaCount: 4, image: { tag } } });
      const installed = await documentsFile(dir, 'shop-1.yaml', [hello('1.0.0')]);
      expect((await admin('apply', '-f', installed, '-n', crs, '--wait')).code).toBe(0);
      const next = await documentsFile(dir, 'shop-2.yaml', [hello('1.1.0')]);
      const { code, stdout } = await admin('diff', '-f', next, '-n', crs);
      expect(code).toBe(1);
      const lines = stdout.split('\n');
      expect(lines).toEqual(
        expect.arrayContaining([
          '-          image: ghcr.io/stefanprodan/podinfo:1.0.0',
          '+          image: ghcr.io/stefanprodan/podinfo:1.1.0',
        ]),
      );
      const steps = lines.filter((l) => l.trimStart().startsWith('step '));
      expect(steps.map((l) => l.trim().split(/\s{2,}/))).toEqual([
        ['step 1', '25 %', 'hold 1h', 'shop-canary 1 / shop 3'],
        ['step 2', '50 %', 'approval', 'shop-canary 2 / shop 2'],
        ['step 3', '100 %', 'shop-canary 4 / shop 0'],
      ]);
    });
  });

  describe('list, get and cancel of a manifest waiting at its approval gate', () => {
    const manifest = 'gated';
    const group = 'gated-apps';
    const chart = 'gated-web';
    const workflowId = () => objectWorkflowId('ArmadaManifest', crs, manifest);
    const gatedManifest = (name: string, groupName: string, chartName: string) => [
      {
        apiVersion: `${GROUP}/${VERSION}`,
        kind: 'ArmadaManifest',
        metadata: { name },
        spec: { release_prefix: name, chart_groups: [groupName], approval: { before: [groupName] } },
      },
      {
        apiVersion: `${GROUP}/${VERSION}`,
        kind: 'ArmadaChartGroup',
        metadata: { name: groupName },
        spec: { chart_group: [chartName] },
      },
      settingsChart(chartName, releases, { color: 'blue' }),
    ];

    beforeAll(async () => {
      // The same, run from a file: armadactl apply, no object on the cluster.
      const filed = await documentsFile(dir, 'filed.yaml', gatedManifest('filed', 'filed-apps', 'filed-web'));
      expect((await admin('apply', '-f', filed, '-n', crs)).code).toBe(0);
      await applyObjects(crs, gatedManifest(manifest, group, chart));
      await eventually(
        'the manifest waiting for its approval',
        async () => {
          const amf = JSON.parse(await kubectl('get', 'amf', manifest, '-n', crs, '-o', 'json'));
          const ready = (amf.status?.conditions ?? []).find((c: { type: string }) => c.type === 'Ready');
          return ready?.reason === 'WaitingApproval' ? true : undefined;
        },
        { process: bridge },
      );
    });

    afterAll(async () => {
      await harness()
        .client.workflow.getHandle(objectWorkflowId('ArmadaManifest', crs, 'filed'))
        .terminate('test over')
        .catch(() => undefined);
    });

    it('lists the objects with state, phase, run, age and what the run waits on', async () => {
      const { code, stdout } = await admin('list', '-n', crs, '-o', 'json');
      expect(code).toBe(0);
      const { rows } = JSON.parse(stdout) as { rows: ListRow[] };
      const row = (kind: string, name: string) => rows.find((r) => r.kind === kind && r.name === name);
      expect(row('ArmadaManifest', manifest)).toEqual({
        kind: 'ArmadaManifest',
        namespace: crs,
        name: manifest,
        from: 'cluster',
        state: 'reconciling',
        phase: 'WaitingApproval',
        run: { workflowId: workflowId(), runId: expect.any(String), status: 'RUNNING', endedAt: null },
        since: expect.any(String),
        waitingOn: `waiting on approve before group ${group}`,
      });
      // A chart is shown with the run that drives it: its manifest's.
      expect(row('ArmadaChart', chart)).toMatchObject({
        run: { workflowId: workflowId(), status: 'RUNNING' },
        waitingOn: `waiting on approve before group ${group}`,
      });
      // A run from a file has no object on the cluster: it is listed by its run.
      expect(row('ArmadaManifest', 'filed')).toMatchObject({
        from: 'file',
        state: 'reconciling',
        phase: 'WaitingApproval',
        run: { workflowId: objectWorkflowId('ArmadaManifest', crs, 'filed'), status: 'RUNNING' },
        waitingOn: 'waiting on approve before group filed-apps',
      });

      const text = await admin('list', '-n', crs);
      const header = text.stdout.split('\n')[0];
      expect(header.split(/\s{2,}/)).toEqual([
        'OBJECT',
        'FROM',
        'STATE',
        'PHASE',
        'RUN',
        'AGE',
        'WAITING ON',
      ]);
      expect(text.stdout).toMatch(
        new RegExp(
          `amf/${manifest}\\s+cluster\\s+reconciling\\s+WaitingApproval\\s+running\\s+\\d+[smh]\\S*\\s+waiting on approve before group ${group}`,
        ),
      );

      const everywhere = JSON.parse((await admin('list', '-A', '-o', 'json')).stdout) as { rows: ListRow[] };
      expect(everywhere.rows).toEqual(
        expect.arrayContaining([expect.objectContaining({ namespace: crs, name: manifest })]),
      );
    });

    it('gets one object with its status and its current run: run ID, status, UI link, current details', async () => {
      const { code, stdout } = await admin('get', `amf/${manifest}`, '-n', crs);
      expect(code).toBe(0);
      const runId = (await harness().client.workflow.getHandle(workflowId()).describe()).runId;
      expect(stdout.split('\n')).toEqual(
        expect.arrayContaining([
          `ArmadaManifest ${crs}/${manifest}: reconciling (waitingapproval)`,
          `run ${workflowId()} ${runId}: running`,
          `  http://localhost:8233/namespaces/default/workflows/${encodeURIComponent(workflowId())}/${runId}/history`,
          expect.stringMatching(new RegExp(`^ {4}gate "before group ${group}" waits for approval since `)),
        ]),
      );
      expect(stdout).toMatch(/ {2}Ready False \(WaitingApproval\)/);
      const report = JSON.parse(
        (await admin('get', `amf/${manifest}`, '-n', crs, '-o', 'json')).stdout,
      ) as ObjectReport;
      expect(report.run).toMatchObject({ workflowId: workflowId(), runId, status: 'RUNNING' });
      expect(report.run?.progress).toMatchObject({
        phase: 'WaitingApproval',
        gate: { name: `before group ${group}` },
      });
      expect(report.object?.metadata.name).toBe(manifest);
    });

    it("diffs an object on the cluster as the bridge runs it: its manifest's releases, prefixed", async () => {
      const { code, stdout } = await admin('diff', manifest, '-n', crs, '-o', 'json');
      expect((JSON.parse(stdout) as DiffReport).releases).toEqual([
        expect.objectContaining({
          object: `ArmadaChart ${crs}/${chart}`,
          release: `${releases}/${manifest}-${chart}`,
          action: 'install',
        }),
      ]);
      expect(code).toBe(1);
      // A chart of the manifest alone: the same release, as part of the manifest's run.
      const one = JSON.parse(
        (await admin('diff', `act/${chart}`, '-n', crs, '-o', 'json')).stdout,
      ) as DiffReport;
      expect(one.releases.map((r) => r.release)).toEqual([`${releases}/${manifest}-${chart}`]);
    });

    it('refuses to cancel a group its manifest runs, naming the run to cancel', async () => {
      const { code, stderr } = await admin('cancel', `acg/${group}`, '-n', crs);
      expect(stderr).toContain(
        `is deployed by the run of amf/${manifest}: cancel that (armadactl cancel amf/${manifest})`,
      );
      expect(code).toBe(1);
      expect((await harness().client.workflow.getHandle(workflowId()).describe()).status.name).toBe(
        'RUNNING',
      );
    });

    it('cancels the run cleanly, recording who asked and why in its history', async () => {
      const whoami = JSON.parse(await kubectl('auth', 'whoami', '-o', 'json'));
      const { code, stdout } = await admin(
        'cancel',
        `amf/${manifest}`,
        '-n',
        crs,
        '--reason',
        'wrong window',
      );
      // Through the cluster: the bridge's answer, naming the user the API server authenticated.
      expect(stdout).toBe(
        `${whoami.status.userInfo.username} asked to cancel (wrong window): cancelling: running Helm calls finish, nothing new starts, then the run ends cancelled (${workflowId()})`,
      );
      expect(code).toBe(0);
      const handle = harness().client.workflow.getHandle(workflowId());
      await eventually('the run cancelled', async () =>
        (await handle.describe()).status.name === 'CANCELLED' ? true : undefined,
      );
      const requested = ((await handle.fetchHistory()).events ?? []).find(
        (e) => e.workflowExecutionCancelRequestedEventAttributes,
      )?.workflowExecutionCancelRequestedEventAttributes;
      expect(requested).toMatchObject({ identity: whoami.status.userInfo.username, cause: 'wrong window' });
    });
  });

  describe('delete', () => {
    it('refuses someone who may patch but not delete the object, and deletes nothing', async () => {
      const team = await tenant('day-two-team', dir);
      await applyObjects(team.namespace, [settingsChart('kept', releases, { a: 'b' })]);
      const { code, stderr } = await armadactlAs(team.kubeconfig, 'delete', 'act/kept', '-n', team.namespace);
      expect(stderr).toBe(
        `armadactl delete: you (${team.username}) may not delete armadacharts.armada.airshipit.org ${team.namespace}/kept`,
      );
      expect(code).toBe(1);
      expect(await kubectl('get', 'act', 'kept', '-n', team.namespace, '-o', 'name')).toContain('kept');
      await kubectl('delete', 'namespace', team.namespace, '--wait=false');
    });

    it('uninstalls through the bridge and, with --wait, says what it uninstalled once the object is gone', async () => {
      await applyObjects(crs, [settingsChart('solo', releases, { color: 'green' })]);
      const run = harness().client.workflow.getHandle(objectWorkflowId('ArmadaChart', crs, 'solo'));
      await eventually(
        'the chart deployed',
        async () => (await run.describe()).status.name === 'COMPLETED' || undefined,
        {
          process: bridge,
        },
      );
      expect(await revisions('solo', releases)).toBe(1);
      const unchanged = await admin('diff', 'act/solo', '-n', crs);
      expect(unchanged.stdout).toMatch(new RegExp(`^ArmadaChart ${crs}/solo → ${releases}/solo: unchanged `));
      expect(unchanged.code).toBe(0);
      const { code, stdout } = await admin('delete', 'act/solo', '-n', crs, '--wait');
      expect(stdout.split('\n')).toEqual([
        expect.stringMatching(
          new RegExp(
            `^deleted ArmadaChart ${crs}/solo as .+: the bridge uninstalls it, then removes its finalizer$`,
          ),
        ),
        `uninstalled release ${releases}/solo (was revision 1)`,
      ]);
      expect(code).toBe(0);
      await expect(helm('status', 'solo', '-n', releases)).rejects.toThrow(/not found/);
      await expect(kubectl('get', 'act', 'solo', '-n', crs)).rejects.toThrow(/NotFound/);
    });

    it('deletes an object whose deploy is running: the bridge cancels it first, recorded as armada-bridge', async () => {
      const stepper = (tag: string) =>
        helloChart('stepper', releases, {
          canary: { steps: [{ percent: 50, approval: true }] },
          values: { replicaCount: 2, image: { tag } },
        });
      const deploy = harness().client.workflow.getHandle(objectWorkflowId('ArmadaChart', crs, 'stepper'));
      await applyObjects(crs, [stepper('1.0.0')]);
      await eventually(
        'the first install',
        async () => (await deploy.describe()).status.name === 'COMPLETED' || undefined,
        {
          process: bridge,
        },
      );
      // The upgrade's canary waits for an approval that never comes: a deploy still running.
      await applyObjects(crs, [stepper('1.1.0')]);
      const canary = harness().client.workflow.getHandle(canaryWorkflowId(crs, 'stepper'));
      await eventually(
        'the canary waiting for approval',
        async () => ((await canary.query(canaryProgressQuery)).waitingOn === 'approval' ? true : undefined),
        { process: bridge },
      );
      const { runId } = await deploy.describe();
      const { code, stdout } = await admin('delete', 'act/stepper', '-n', crs, '--wait');
      expect(stdout.split('\n').slice(1)).toEqual([
        `uninstalled release ${releases}/stepper (was revision 1)`,
      ]);
      expect(code).toBe(0);
      const cancelled = (
        (await harness().client.workflow.getHandle(deploy.workflowId, runId).fetchHistory()).events ?? []
      )
        .map((e) => e.workflowExecutionCancelRequestedEventAttributes)
        .find(Boolean);
      expect(cancelled).toMatchObject({
        identity: 'armada-bridge',
        cause: `ArmadaChart ${crs}/stepper is being deleted`,
      });
      await expect(helm('status', 'stepper', '-n', releases)).rejects.toThrow(/not found/);
    });

    it('refuses a chart its manifest lists: it is uninstalled with the manifest', async () => {
      const { code, stderr } = await admin('delete', 'act/gated-web', '-n', crs);
      expect(stderr).toContain(`ArmadaChart ${crs}/gated-web is listed by amf/gated`);
      expect(code).toBe(1);
      expect(await kubectl('get', 'act', 'gated-web', '-n', crs, '-o', 'name')).toContain('gated-web');
    });
  });
});
