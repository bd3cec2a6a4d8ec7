import { mkdtemp, writeFile } from 'node:fs/promises';
import { createServer } from 'node:net';
import { tmpdir } from 'node:os';
import path from 'node:path';
import { armadaChartSpec } from '../../api/chart';
import { applicableDocuments } from '../../cli/documents';
import type { RunRecord } from '../../cli/history';
import { main } from '../../cli/main';
import { chartRun, manifestRun, startRun, type RunRequest } from '../../runs/requests';
import { runUrl } from '../../kube/status';
import type { Terminal } from '../../cli/watch';
import { undoWorkflow } from '../../workflows';
import { approveSignal, progressQuery, replanSignal } from '../../workflows/messages';
import { uniqueName } from '../helpers/env';
import { eventually } from '../helpers/processes';
import { fakeHelm, withWorker } from './fake-helm';

/**
 * armadactl in-process: its exit code and what it printed; `onLine` sees each line as it comes,
 * `terminal` makes it write as to an interactive terminal.
 */
async function armadactl(argv: string[], onLine?: (line: string) => void, terminal?: Terminal) {
  const out: string[] = [];
  const err: string[] = [];
  const code = await main(
    argv,
    (line) => {
      out.push(line);
      onLine?.(line);
    },
    (line) => err.push(line),
    terminal,
  );
  return { code, out, err };
}

/**
 * ArmadaManifest `demo` in resource namespace `ns`, as a file `armadactl apply` reads: groups
 * platform (sequenced: a, b) then apps (parallel: c, d), releases demo-a ... demo-d in a
 * namespace of their own; started as the bridge starts it, with `specs` in its memo.
 */
async function demo(ns: string, specs: string, approvalBefore?: string): Promise<RunRequest> {
  const releases = uniqueName('apps');
  const chart = (name: string) =>
    `kind: ArmadaChart\nmetadata: {name: ${name}}\nspec: {release: ${name}, namespace: ${releases}, source: {type: local, location: x}}`;
  const approval = approvalBefore ? `, approval: {before: [${approvalBefore}]}` : '';
  const yaml = [
    `kind: ArmadaManifest\nmetadata: {name: demo}\nspec: {release_prefix: demo, chart_groups: [platform, apps]${approval}}`,
    'kind: ArmadaChartGroup\nmetadata: {name: platform}\nspec: {chart_group: [a, b], sequenced: true}',
    'kind: ArmadaChartGroup\nmetadata: {name: apps}\nspec: {chart_group: [c, d]}',
    ...['a', 'b', 'c', 'd'].map(chart),
  ]
    .map((doc) => `apiVersion: armada.airshipit.org/v1alpha1\n${doc}\n`)
    .join('---\n');
  const file = path.join(await mkdtemp(path.join(tmpdir(), 'armadactl-')), 'demo.yaml');
  await writeFile(file, yaml);
  const applicable = await applicableDocuments(file, ns);
  if (applicable.kind !== 'ArmadaManifest') throw new Error(`${file}: no manifest`);
  return manifestRun(applicable.manifest, 'deploy', specs);
}

/** Asked every 50 ms, for 20 s: what these tests wait for comes within a few workflow tasks. */
const quickly = { timeoutMs: 20_000, pauseMs: 50 };

/** The runs `armadactl history -o json` lists once it lists `count` closed ones (visibility lags a little). */
function closedRuns(argv: string[], count: number): Promise<RunRecord[]> {
  return eventually(
    `${count} closed runs of ${argv.join(' ')}`,
    async () => {
      const { out } = await armadactl(['history', ...argv, '-o', 'json']);
      const runs = JSON.parse(out.join('\n')) as RunRecord[];
      return runs.length === count && runs.every((r) => r.closeTime) ? runs : undefined;
    },
    quickly,
  );
}

const time = /^\d\d:\d\d:\d\d /;

describe('armadactl watch (stubbed activities, real dev server)', () => {
  it('without a terminal prints a timestamped line per change, then the outcome, and exits 0', async () => {
    const fake = fakeHelm();
    fake.close(); // demo-a's upgrade waits until watch has shown it deploying
    const ns = uniqueName('ns');
    const { code, out } = await withWorker(fake, async (h) => {
      await startRun(h.client, h.taskQueue, await demo(ns, 'ArmadaManifest/demo@1'));
      return armadactl(['watch', 'demo', '-n', ns], (line) => {
        if (line.endsWith('group platform: running — a deploying')) fake.open();
      });
    });
    expect(out.every((line) => time.test(line))).toBe(true);
    const lines = out.map((line) => line.replace(time, ''));
    expect(lines[0]).toMatch(/^run [0-9a-f-]{36}: ArmadaManifest\/demo@1$/);
    expect(lines).toContain('group platform: running — a deploying');
    expect(lines).toContain('group apps: done — c deployed rev 1, d deployed rev 1');
    expect(lines.at(-1)).toBe(`ArmadaManifest:${ns}/demo: deployed`);
    // Only changes are printed: no line twice in a row, and each group's final line once.
    expect(lines.filter((l, i) => l === lines[i - 1])).toEqual([]);
    expect(
      lines.filter((l) => l === 'group platform: done — a deployed rev 1, b deployed rev 1'),
    ).toHaveLength(1);
    expect(code).toBe(0);
  });

  it('exits 1 with the failure when the run fails', async () => {
    const fake = fakeHelm({ failOn: 'demo-b' });
    const ns = uniqueName('ns');
    const { code, out } = await withWorker(fake, async (h) => {
      await startRun(h.client, h.taskQueue, await demo(ns, 'ArmadaManifest/demo@1'));
      return armadactl(['watch', 'demo', '-n', ns]);
    });
    expect(out.at(-1)).toMatch(
      new RegExp(`^${time.source}ArmadaManifest:${ns}/demo: failed: group platform failed: b: `),
    );
    expect(code).toBe(1);
  });

  it('on a terminal redraws the status in place, then prints the outcome below it', async () => {
    const ns = uniqueName('ns');
    const { code, out } = await withWorker(fakeHelm({ delayMs: 500 }), async (h) => {
      await startRun(h.client, h.taskQueue, await demo(ns, 'ArmadaManifest/demo@1'));
      return armadactl(['watch', 'demo', '-n', ns], undefined, { columns: 120 });
    });
    const frames = out.slice(0, -1);
    expect(frames.length).toBeGreaterThan(1);
    expect(frames[0]).not.toContain('\x1b');
    expect(frames[0].split('\n')[0]).toMatch(
      new RegExp(
        `^ArmadaManifest:${ns}/demo  run [0-9a-f-]{36}  ArmadaManifest/demo@1  \\d\\d:\\d\\d:\\d\\d UTC$`,
      ),
    );
    // Each later frame moves up over the lines of the one before (past its own escape codes).
    const body = (f: string) => (f.startsWith('\x1b[') ? f.slice(f.indexOf('\x1b[J') + 3) : f);
    frames.slice(1).forEach((f, i) => {
      expect(f.startsWith(`\x1b[${body(frames[i]).split('\n').length}A\x1b[J`)).toBe(true);
    });
    expect(body(frames.at(-1)!).split('\n')[1]).toBe('Deployed');
    expect(out.at(-1)).toBe(`ArmadaManifest:${ns}/demo: deployed`);
    expect(code).toBe(0);
  });

  it('follows a re-plan (continue-as-new) to the end of the new run', async () => {
    const fake = fakeHelm();
    const ns = uniqueName('ns');
    const first = await demo(ns, 'ArmadaManifest/demo@1', 'apps');
    const { code, out } = await withWorker(fake, async (h) => {
      await startRun(h.client, h.taskQueue, first);
      const handle = h.client.workflow.getHandle(first.workflowId);
      const lines: string[] = [];
      const watching = armadactl(['watch', 'demo', '-n', ns], (line) => lines.push(line));
      await eventually(
        'the watch shows the approval gate',
        async () => lines.some((l) => / WaitingApproval — /.test(l)) || undefined,
        quickly,
      );
      await handle.signal(replanSignal, {
        input: first.input,
        memo: { specs: 'ArmadaManifest/demo@2', mode: 'deploy' },
      });
      await eventually(
        'the new run waits at the gate',
        async () => {
          const { memo } = await handle.describe();
          const { phase } = await handle.query(progressQuery);
          return (memo?.specs === 'ArmadaManifest/demo@2' && phase === 'WaitingApproval') || undefined;
        },
        quickly,
      );
      await handle.signal(approveSignal, { by: 'bob' });
      return watching;
    });
    const runLines = out.map((l) => l.replace(time, '')).filter((l) => l.startsWith('run '));
    expect(runLines).toEqual([
      expect.stringMatching(/: ArmadaManifest\/demo@1$/),
      expect.stringMatching(/: ArmadaManifest\/demo@2$/),
    ]);
    expect(runLines[0].split(':')[0]).not.toBe(runLines[1].split(':')[0]); // two runs of one workflow ID
    expect(out.at(-1)).toMatch(/demo: deployed$/);
    expect(code).toBe(0);
  });
});

describe('armadactl history and status --output json (stubbed activities, real dev server)', () => {
  it('lists an object’s runs newest first with outcome, duration and specs; --limit; json', async () => {
    const ns = uniqueName('ns');
    await withWorker(fakeHelm(), async (h) => {
      for (const specs of ['ArmadaManifest/demo@1', 'ArmadaManifest/demo@2']) {
        const id = await startRun(h.client, h.taskQueue, await demo(ns, specs));
        await h.client.workflow.getHandle(id).result();
      }
      const runs = await closedRuns(['demo', '-n', ns], 2);
      expect(runs.map((r) => [r.specs, r.status, r.phase, r.outcome])).toEqual([
        ['ArmadaManifest/demo@2', 'COMPLETED', 'Deployed', 'deployed'],
        ['ArmadaManifest/demo@1', 'COMPLETED', 'Deployed', 'deployed'],
      ]);
      expect(runs[0].startTime > runs[1].startTime).toBe(true);
      expect(Object.keys(runs[0])).toEqual([
        'workflowId',
        'runId',
        'type',
        'status',
        'phase',
        'outcome',
        'startTime',
        'closeTime',
        'durationSeconds',
        'specs',
        'mode',
        'approvals',
      ]);
      expect(runs[0]).toMatchObject({
        workflowId: `ArmadaManifest:${ns}/demo`,
        type: 'deployRun',
        mode: 'deploy',
      });

      // A chart and a group the manifest lists have no run of their own: their history is the
      // manifest's runs that deployed them (ArmadaObjects).
      for (const listed of ['act/c', 'acg/platform'])
        expect((await closedRuns([listed, '-n', ns], 2)).map((r) => r.runId)).toEqual(
          runs.map((r) => r.runId),
        );

      const text = await armadactl(['history', 'demo', '-n', ns]);
      expect(text.out).toHaveLength(3);
      expect(text.out[0]).toMatch(/^started \(UTC\) +outcome +duration +run +specs$/);
      expect(text.out[1]).toMatch(
        new RegExp(
          `^\\d{4}-\\d\\d-\\d\\d \\d\\d:\\d\\d:\\d\\d  deployed +[\\d.]+s +${runs[0].runId}  ArmadaManifest/demo@2$`,
        ),
      );
      expect(text.out[2]).toContain('ArmadaManifest/demo@1');
      const limited = await armadactl(['history', 'demo', '-n', ns, '--limit', '1']);
      expect(limited.out.slice(1)).toEqual([text.out[1]]);

      const status = await armadactl(['status', 'demo', '-n', ns, '-o', 'json']);
      const url = runUrl('default', `ArmadaManifest:${ns}/demo`, runs[0].runId);
      expect(JSON.parse(status.out.join('\n'))).toMatchObject({
        workflowId: `ArmadaManifest:${ns}/demo`,
        runId: runs[0].runId,
        status: 'COMPLETED',
        specs: 'ArmadaManifest/demo@2',
        url,
        progress: {
          phase: 'Deployed',
          groups: [
            { name: 'platform', state: 'done' },
            { name: 'apps', state: 'done' },
          ],
        },
      });
      expect(status.code).toBe(0);
      // As text, the run as `armadactl get` shows it (issue 36): IDs, status, specs, UI link.
      const shown = await armadactl(['status', 'demo', '-n', ns]);
      expect(shown.out.slice(0, 4)).toEqual([
        `run ArmadaManifest:${ns}/demo ${runs[0].runId}: completed`,
        '  specs ArmadaManifest/demo@2',
        `  ${url}`,
        '  Deployed',
      ]);
    });
  });

  it('status of an object whose last run undid a deploy shows what that run put back', async () => {
    const ns = uniqueName('ns');
    const fake = fakeHelm();
    const [kept, installed] = [uniqueName('a'), uniqueName('b')];
    fake.releases.set(kept, { revision: 2, status: 'deployed', digest: 'new', lastDeployedRevision: 2 });
    fake.releases.set(installed, { revision: 1, status: 'deployed', digest: 'new', lastDeployedRevision: 1 });
    await withWorker(fake, async (h) => {
      const workflowId = `ArmadaManifest:${ns}/demo`;
      await h.client.workflow.execute(undoWorkflow, {
        taskQueue: h.taskQueue,
        workflowId,
        args: [
          {
            kind: 'ArmadaManifest',
            namespace: ns,
            name: 'demo',
            undoes: { workflowId, runId: 'earlier' },
            changes: [
              { chart: 'a', release: kept, namespace: 'apps', before: 1 },
              { chart: 'b', release: installed, namespace: 'apps', before: null },
            ],
          },
        ],
      });
      const status = await armadactl(['status', 'demo', '-n', ns, '-o', 'json']);
      expect(status.err).toEqual([]);
      expect(JSON.parse(status.out.join('\n')).progress).toMatchObject({
        phase: 'RolledBack',
        groups: [
          {
            name: 'undo of run earlier',
            state: 'done',
            charts: [
              { chart: 'b', release: installed, namespace: 'apps', state: 'uninstalled' },
              { chart: 'a', release: kept, namespace: 'apps', state: 'rolled-back' },
            ],
          },
        ],
      });
      const text = await armadactl(['status', 'demo', '-n', ns]);
      expect(text.out.join('\n')).toContain('undo of run earlier');
      expect(text.code).toBe(0);
      // The undo holds the manifest's ID, the lock of every release it owns: it writes them
      // itself, with no child run per release.
      const events = (await h.client.workflow.getHandle(workflowId).fetchHistory()).events ?? [];
      expect(events.filter((e) => e.startChildWorkflowExecutionInitiatedEventAttributes)).toEqual([]);
      expect(
        events.filter((e) => e.activityTaskScheduledEventAttributes?.activityType?.name?.startsWith('helm')),
      ).toHaveLength(2);
    });
  });

  it('finds an ArmadaChart’s standalone runs under its own workflow', async () => {
    const ns = uniqueName('ns');
    const release = uniqueName('web');
    await withWorker(fakeHelm(), async (h) => {
      const spec = armadaChartSpec.parse({
        release,
        namespace: ns,
        source: { type: 'local', location: 'x' },
      });
      const id = await startRun(
        h.client,
        h.taskQueue,
        chartRun({ kind: 'ArmadaChart', name: 'web', namespace: ns, spec }, 'deploy', 'ArmadaChart/web@1'),
      );
      await h.client.workflow.getHandle(id).result();
      const [run] = await closedRuns(['act/web', '-n', ns], 1);
      expect(run).toMatchObject({
        workflowId: `ArmadaChart:${ns}/web`,
        type: 'deployRun',
        outcome: 'deployed',
        specs: 'ArmadaChart/web@1',
      });
    });
  });
});

/** A port nothing listens on: the OS hands out a free one, and it is closed again at once. */
function closedPort(): Promise<number> {
  return new Promise((resolve, reject) => {
    const server = createServer();
    server.once('error', reject);
    server.listen(0, '127.0.0.1', () => {
      const { port } = server.address() as { port: number };
      server.close(() => resolve(port));
    });
  });
}

describe('armadactl errors that say what to do (real dev server)', () => {
  const ns = uniqueName('ns');

  it.each([
    [['watch', 'acg/platform'], 'no run of ArmadaChartGroup:NS/platform; start one with `armadactl apply`'],
    [['history', 'demo'], 'no run of ArmadaManifest:NS/demo; start one with `armadactl apply`'],
    [['history', 'act/web'], 'no run of ArmadaChart:NS/web; start one with `armadactl apply`'],
    [['status', 'dpl/nginx'], 'no run of Deployer:NS/nginx; start one with `armadactl apply`'],
    // A run from files is steered by a Temporal administrator, straight to Temporal.
    [['pause', 'demo', '--as-temporal-admin'], 'nothing to pause: ArmadaManifest:NS/demo has never run'],
  ])('%j of an object that never ran: %s', async (argv, message) => {
    const { code, err } = await armadactl([...argv, '-n', ns]);
    expect(err).toEqual([`armadactl ${argv[0]}: ${message.replace('NS', ns)}`]);
    expect(code).toBe(1);
  });

  it('history --output json of an object that never ran is an empty list', async () => {
    const { code, out } = await armadactl(['history', 'demo', '-n', ns, '-o', 'json']);
    expect(out).toEqual(['[]']);
    expect(code).toBe(0);
  });

  it('a control command on a run that has ended says there is nothing to steer (a run from files: a Temporal administrator steers it)', async () => {
    const ns = uniqueName('ns');
    await withWorker(fakeHelm(), async (h) => {
      const id = await startRun(h.client, h.taskQueue, await demo(ns, 'ArmadaManifest/demo@1'));
      await h.client.workflow.getHandle(id).result();
    });
    const { code, err } = await armadactl(['rollback', 'demo', '-n', ns, '--as-temporal-admin']);
    expect(err).toEqual([`armadactl rollback: nothing to rollback: ArmadaManifest:${ns}/demo is completed`]);
    expect(code).toBe(1);
  });

  describe('with TEMPORAL_ADDRESS on a closed port', () => {
    const address = process.env.TEMPORAL_ADDRESS;
    afterEach(() => {
      process.env.TEMPORAL_ADDRESS = address;
    });

    it.each([['status'], ['watch'], ['history'], ['pause']])(
      '%s says where it looked and how to start Temporal, at once',
      async (command) => {
        const port = await closedPort();
        process.env.TEMPORAL_ADDRESS = `127.0.0.1:${port}`;
        const started = Date.now();
        // pause goes to Temporal itself only as a Temporal administrator's (else through the cluster).
        const admin = command === 'pause' ? ['--as-temporal-admin'] : [];
        const { code, err } = await armadactl([command, 'demo', ...admin]);
        expect(err).toEqual([
          `armadactl ${command}: cannot reach Temporal at 127.0.0.1:${port} (connection refused: nothing listens there); start it with \`npm start\` or set TEMPORAL_ADDRESS`,
        ]);
        expect(code).toBe(1);
        // At once: well under the 5 s connect timeout it would otherwise wait out (2 s was tight
        // for a loaded machine).
        expect(Date.now() - started).toBeLessThan(4000);
      },
    );
  });
});
