import { armadaChartSpec } from '../../api/chart';
import { armadaChartGroupSpec } from '../../api/chart-group';
import { armadaManifestSpec } from '../../api/manifest';
import { deployerSpec } from '../../api/deployer';
import type { ClusterObject } from '../../cli/cluster';
import { formatUninstalled, uninstalledBy } from '../../cli/delete';
import {
  diffExitCode,
  formatDiff,
  scopeOf,
  unlistedReleases,
  type DiffReport,
  type ReleaseDiff,
} from '../../cli/diff';
import {
  age,
  endedState,
  fileRows,
  formatList,
  objectRow,
  objectState,
  runsQuery,
  type CurrentRun,
  type ListedRun,
  type ListRow,
} from '../../cli/list';
import { main } from '../../cli/main';
import { previousDeploys, retryPlace } from '../../runs/day-two';
import type { ObjectPlace } from '../../runs/targets';
import type { Progress } from '../../core/progress';
import { oneGroup } from '../helpers/progress';

const chartSpec = (release: string, more: object = {}) =>
  armadaChartSpec.parse({
    release,
    namespace: 'apps',
    source: { type: 'local', location: 'charts/web' },
    ...more,
  });

const release = (over: Partial<ReleaseDiff> = {}): ReleaseDiff => ({
  object: 'ArmadaChart default/web',
  release: 'apps/web',
  mode: 'deploy',
  action: 'unchanged',
  revision: 2,
  reason: 'revision 2 runs this chart and these values (digest aaaaaaaaaaaa)',
  objects: [],
  canary: null,
  error: null,
  ...over,
});

describe('diffExitCode: as diff(1)', () => {
  it.each<[string, ReleaseDiff[], number]>([
    ['0 when every release is unchanged', [release(), release()], 0],
    ['0 when there is nothing to diff', [], 0],
    ['1 when one would be upgraded', [release(), release({ action: 'upgrade' })], 1],
    ['1 when one would be installed or uninstalled', [release({ action: 'uninstall' })], 1],
    [
      '1 when a run would be refused: it cannot bring the release where the spec says',
      [release({ action: 'refused' })],
      1,
    ],
    [
      '2 when one could not be previewed, whatever the others',
      [release({ action: 'upgrade' }), release({ action: null, error: 'boom' })],
      2,
    ],
  ])('%s', (_, releases, code) => {
    expect(diffExitCode({ releases })).toBe(code);
  });
});

describe('formatDiff', () => {
  it('prints per release what a run would do and why, its objects, a canary, the unlisted and a count', () => {
    const report: DiffReport = {
      releases: [
        release({
          action: 'upgrade',
          reason: 'chart or values changed since revision 2 (digest aaa → bbb)',
          objects: [
            {
              object: 'ConfigMap/apps/web',
              change: 'changed',
              patch: '--- live/x\n+++ wanted/x\n@@ -1 +1 @@\n-a\n+b\n',
            },
          ],
          canary: [
            {
              step: 1,
              percent: 10,
              holdSeconds: 60,
              splits: [{ canary: 'web-canary', stable: 'web', replicas: { canary: 1, stable: 9 } }],
            },
            {
              step: 2,
              percent: 100,
              splits: [{ canary: 'web-canary', stable: 'web', replicas: { canary: 10, stable: 0 } }],
            },
          ],
        }),
        release({ object: 'ArmadaChart default/db', release: 'apps/db' }),
        release({
          object: 'ArmadaChart default/api',
          release: 'apps/api',
          action: null,
          reason: null,
          revision: null,
          error: 'helm failed',
        }),
      ],
      unlisted: [{ chart: 'old', release: 'apps/demo-old' }],
      notes: ['Deployer default/nginx: not diffed'],
    };
    expect(formatDiff(report)).toEqual([
      'ArmadaChart default/web → apps/web: upgrade (chart or values changed since revision 2 (digest aaa → bbb))',
      '--- live/x',
      '+++ wanted/x',
      '@@ -1 +1 @@',
      '-a',
      '+b',
      '  canary steps (copies of the new revision stepped up while the stable side steps down):',
      '    step 1  10 %   hold 1m  web-canary 1 / web 9',
      '    step 2  100 %           web-canary 10 / web 0',
      'ArmadaChart default/db → apps/db: unchanged (revision 2 runs this chart and these values (digest aaaaaaaaaaaa))',
      'ArmadaChart default/api → apps/api: error: helm failed',
      'release apps/demo-old (chart old): no longer listed; a run leaves it installed (helm uninstall it, or list it again)',
      'note: Deployer default/nginx: not diffed',
      '3 releases: 1 upgrade, 1 unchanged, 1 error',
    ]);
  });

  it('says a canary over a chart without Deployments upgrades at once', () => {
    const lines = formatDiff({
      releases: [release({ action: 'upgrade', canary: [{ step: 1, percent: 100, splits: [] }] })],
      unlisted: [],
      notes: [],
    });
    expect(lines).toContain('  canary: the new revision has no Deployments; the run upgrades at once');
  });
});

describe('scopeOf: which releases a diff covers, and how', () => {
  const manifest = (target_state?: string) => ({
    kind: 'ArmadaManifest' as const,
    manifest: {
      namespace: 'default',
      manifest: {
        name: 'demo',
        spec: armadaManifestSpec.parse({ release_prefix: 'demo', chart_groups: ['apps'], target_state }),
      },
      groups: { apps: armadaChartGroupSpec.parse({ chart_group: ['web', 'api'] }) },
      charts: { web: chartSpec('web'), api: chartSpec('api') },
    },
  });

  it("a manifest's charts in plan order, prefixed, compared with its last run", () => {
    const scope = scopeOf(manifest());
    expect(scope.items.map((i) => [i.object, i.namespace, i.release, i.mode])).toEqual([
      ['ArmadaChart default/web', 'apps', 'demo-web', 'deploy'],
      ['ArmadaChart default/api', 'apps', 'demo-api', 'deploy'],
    ]);
    expect(scope.previousRun).toBe('ArmadaManifest:default/demo');
  });

  it('target_state uninstalled, or a deletion: every release uninstalled, and no last-run comparison', () => {
    expect(scopeOf(manifest('uninstalled')).items.map((i) => i.mode)).toEqual(['uninstall', 'uninstall']);
    const deleting = scopeOf(manifest(), true);
    expect(deleting.items.map((i) => i.mode)).toEqual(['uninstall', 'uninstall']);
    expect(deleting.previousRun).toBeUndefined();
  });

  it('target_state uninitialized: nothing, with a note', () => {
    expect(scopeOf(manifest('uninitialized'))).toEqual({
      items: [],
      notes: ['ArmadaManifest default/demo: target_state is uninitialized; a run does nothing'],
    });
  });

  it("a manifest's group's Deployers noted, not diffed; a lockstep set of them whose steps differ refused", () => {
    const nginx = (percent: number) =>
      deployerSpec.parse({
        type: 'canary',
        deployment: { name: 'nginx', namespace: 'web', image: 'nginx', version: '1', replicas: 2 },
        steps: [{ percent }],
      });
    const docs = (spec: object, percent: number) => {
      const { manifest: base } = manifest();
      return {
        kind: 'ArmadaManifest' as const,
        manifest: {
          ...base,
          groups: {
            apps: armadaChartGroupSpec.parse({ chart_group: ['web'], deployers: ['nginx'], ...spec }),
          },
          charts: { web: chartSpec('web', { canary: { steps: [{ percent: 50 }] } }) },
          deployers: { nginx: nginx(percent) },
        },
      };
    };
    const scope = scopeOf(docs({}, 50));
    expect(scope.items.map((i) => i.object)).toEqual(['ArmadaChart default/web']);
    expect(scope.notes).toEqual([
      'Deployer default/nginx: not diffed, it has no Helm release (armadactl status dpl/nginx)',
    ]);
    expect(() => scopeOf(docs({ canary_lockstep: true }, 20))).toThrow(
      "ArmadaChartGroup apps: canary_lockstep members' step percentages differ: web [50, 100], Deployer/nginx [20, 100]",
    );
  });

  it('standalone charts by their own release; a Deployer noted, not diffed', () => {
    const scope = scopeOf({
      kind: 'standalone',
      objects: [
        { kind: 'ArmadaChart', namespace: 'team', name: 'web', spec: chartSpec('web') },
        {
          kind: 'Deployer',
          namespace: 'team',
          name: 'nginx',
          spec: deployerSpec.parse({
            type: 'canary',
            deployment: { name: 'nginx', namespace: 'web', image: 'nginx', version: '1', replicas: 2 },
            steps: [{ percent: 50, sleep: 10 }],
          }),
        },
      ],
      charts: {},
    });
    expect(scope.items.map((i) => [i.object, i.release, i.chartObject])).toEqual([
      ['ArmadaChart team/web', 'web', { name: 'web', namespace: 'team' }],
    ]);
    expect(scope.notes).toEqual([
      'Deployer team/nginx: not diffed, it has no Helm release (armadactl status dpl/nginx)',
    ]);
  });
});

describe('unlistedReleases: what the last run deployed that the spec no longer lists', () => {
  const progress = oneGroup('Deployed', { web: 'deployed', old: 'unchanged', never: 'pending' });
  it('keeps deployed or unchanged releases no item deploys', () => {
    expect(unlistedReleases(progress, [{ namespace: 'demo', release: 'd-web' }])).toEqual([
      { chart: 'old', release: 'demo/d-old' },
    ]);
  });
});

const object = (over: Partial<ClusterObject['status']> = {}, metadata: object = {}): ClusterObject => ({
  kind: 'ArmadaManifest',
  metadata: { name: 'demo', namespace: 'default', creationTimestamp: '2026-11-22T07:00:00Z', ...metadata },
  spec: {},
  status: over,
});
const condition = (type: string, status: 'True' | 'False', reason = 'Deployed') => ({
  type,
  status,
  reason,
  message: '',
});

describe('objectState', () => {
  it.each<[string, ClusterObject, string]>([
    ['pending before any status', object(), 'pending'],
    ['ready', object({ conditions: [condition('Ready', 'True')] }), 'ready'],
    [
      'stalled',
      object({ conditions: [condition('Ready', 'False'), condition('Stalled', 'True')] }),
      'stalled',
    ],
    ['reconciling', object({ conditions: [condition('Reconciling', 'True')] }), 'reconciling'],
    [
      'invalid over what the last run said',
      object({ conditions: [condition('Ready', 'True'), condition('Invalid', 'True')] }),
      'invalid',
    ],
    [
      'deleting over everything',
      object({ conditions: [condition('Ready', 'True')] }, { deletionTimestamp: '2026-11-22T08:00:00Z' }),
      'deleting',
    ],
  ])('%s', (_, o, state) => {
    expect(objectState(o)).toBe(state);
  });
});

describe('objectRow', () => {
  const waiting: Progress = { phase: 'WaitingApproval', waitingOn: 'approve before group apps', groups: [] };
  const run = (running: boolean): CurrentRun => ({
    workflowId: 'ArmadaManifest:default/demo',
    runId: 'r1',
    type: 'manifestWorkflow',
    running,
    status: running ? 'RUNNING' : 'COMPLETED',
    memo: { mode: 'deploy' },
    startedAt: 0,
    endedAt: running ? null : '2026-11-22T07:01:00.000Z',
    progress: running ? waiting : null,
  });
  const deployed = object({ conditions: [condition('Ready', 'True', 'Deployed')] });

  it("a running run's live phase and what it waits on", () => {
    expect(objectRow(deployed, run(true))).toMatchObject({
      phase: 'WaitingApproval',
      run: { workflowId: 'ArmadaManifest:default/demo', runId: 'r1', status: 'RUNNING' },
      waitingOn: 'waiting on approve before group apps',
    });
  });

  it('a finished run: the phase the status last said, waiting on nothing', () => {
    expect(objectRow(deployed, run(false))).toMatchObject({
      phase: 'Deployed',
      waitingOn: null,
      state: 'ready',
    });
  });

  it('no run at all', () => {
    expect(objectRow(object(), null)).toMatchObject({ phase: null, run: null, state: 'pending' });
  });
});

describe('age: as kubectl shows it', () => {
  it.each([
    [42, '42s'],
    [119, '119s'],
    [192, '3m12s'],
    [600, '10m'],
    [1500, '25m'],
    [3 * 3600 + 600, '3h10m'],
    [20 * 3600, '20h'],
    [3 * 86400 + 4 * 3600, '3d4h'],
    [12 * 86400, '12d'],
  ])('%i s → %s', (seconds, shown) => {
    expect(age(seconds)).toBe(shown);
  });
});

describe('formatList', () => {
  const rows: ListRow[] = [
    {
      kind: 'ArmadaManifest',
      namespace: 'default',
      name: 'demo',
      from: 'cluster',
      state: 'reconciling',
      phase: 'WaitingApproval',
      run: { workflowId: 'ArmadaManifest:default/demo', runId: 'r1', status: 'RUNNING', endedAt: null },
      since: '2026-11-22T07:00:00Z',
      waitingOn: 'waiting on approve before group apps',
    },
    {
      kind: 'ArmadaChart',
      namespace: 'default',
      name: 'site',
      from: 'file',
      state: 'ready',
      phase: 'Deployed',
      run: {
        workflowId: 'ArmadaChart:default/site',
        runId: 'r2',
        status: 'COMPLETED',
        endedAt: '2026-11-22T07:01:00Z',
      },
      since: '2026-11-22T07:00:30Z',
      waitingOn: null,
    },
    {
      kind: 'Deployer',
      namespace: 'web',
      name: 'nginx',
      from: 'file',
      state: 'reconciling',
      phase: null,
      run: null,
      since: null,
      waitingOn: null,
    },
  ];
  const now = new Date('2026-11-22T07:05:00Z');

  it('aligns short names, state, phase, run (how long ago it ended), age and what it waits on', () => {
    expect(formatList(rows, false, now)).toEqual([
      'OBJECT     FROM     STATE        PHASE            RUN               AGE    WAITING ON',
      'amf/demo   cluster  reconciling  WaitingApproval  running           5m     waiting on approve before group apps',
      'act/site   file     ready        Deployed         completed 4m ago  4m30s',
      'dpl/nginx  file     reconciling  -                -                 -',
    ]);
  });

  it('adds the namespace first for every namespace', () => {
    expect(formatList(rows, true, now)[0].split(/\s{2,}/)[0]).toBe('NAMESPACE');
    expect(formatList(rows, true, now)[3].startsWith('web ')).toBe(true);
  });
});

describe('fileRows: the objects deployed from files, from their runs', () => {
  const run = (over: Partial<ListedRun> = {}): ListedRun => ({
    kind: 'ArmadaManifest',
    namespace: 'default',
    name: 'site',
    workflowId: 'ArmadaManifest:default/site',
    runId: 'r1',
    status: 'COMPLETED',
    phase: 'Deployed',
    startedAt: '2026-11-22T07:00:00.000Z',
    endedAt: '2026-11-22T07:01:00.000Z',
    memo: { mode: 'deploy' },
    ...over,
  });
  const none = new Set<string>();
  const shown = (runs: ListedRun[], onCluster = none) =>
    fileRows(runs, onCluster).map((r) => [`${r.kind} ${r.name}`, r.state, r.phase, r.run?.runId]);

  it.each<[string, ListedRun[], ReturnType<typeof shown>]>([
    [
      'a run that ended is listed, with its last phase and when it ended',
      [run()],
      [['ArmadaManifest site', 'ready', 'Deployed', 'r1']],
    ],
    [
      'an object is listed once, by its latest run (a re-apply, a re-plan)',
      [run({ runId: 'old', startedAt: '2026-11-21T07:00:00.000Z' }), run({ runId: 'new' })],
      [['ArmadaManifest site', 'ready', 'Deployed', 'new']],
    ],
    [
      'a running run wins over one that ended, and its canary over the run that drives it',
      [
        run({ kind: 'ArmadaChart', workflowId: 'ArmadaChart:default/site', runId: 'ended' }),
        run({
          kind: 'ArmadaChart',
          workflowId: 'ArmadaChart:default/site',
          runId: 'chart',
          status: 'RUNNING',
          endedAt: null,
        }),
        run({
          kind: 'ArmadaChart',
          workflowId: 'ArmadaChart:default/site/canary',
          runId: 'canary',
          status: 'RUNNING',
          endedAt: null,
        }),
      ],
      [['ArmadaChart site', 'reconciling', 'Deployed', 'canary']],
    ],
    [
      "a canary or rollout that ended is not the object's run: it ended with it",
      [run({ kind: 'Deployer', workflowId: 'Deployer:default/site/rollout' })],
      [],
    ],
    [
      'a run that failed, or ended mid-way, reads stalled',
      [
        run({ name: 'a', workflowId: 'ArmadaManifest:default/a', status: 'FAILED', phase: 'Failed' }),
        run({ name: 'b', workflowId: 'ArmadaManifest:default/b', status: 'TERMINATED', phase: 'Running' }),
      ],
      [
        ['ArmadaManifest a', 'stalled', 'Failed', 'r1'],
        ['ArmadaManifest b', 'stalled', 'Running', 'r1'],
      ],
    ],
    [
      'an object whose latest run uninstalled it is not listed, as helm list leaves it out',
      [run({ runId: 'deploy', startedAt: '2026-11-21T07:00:00.000Z' }), run({ phase: 'Uninstalled' })],
      [],
    ],
    [
      'an object whose latest run the bridge started (its memo names specs) has left the cluster',
      [run({ memo: { mode: 'uninstall', specs: 'ArmadaManifest/site@2' } })],
      [],
    ],
  ])('%s', (_, runs, rows) => {
    expect(shown(runs)).toEqual(rows);
  });

  it('leaves out an object on the cluster: it has its own row', () => {
    expect(shown([run()], new Set(['ArmadaManifest default/site']))).toEqual([]);
  });

  it('asks visibility for running runs and those that ended since, in the namespace', () => {
    expect(runsQuery('apps', '2026-10-23T07:00:00.000Z')).toBe(
      "ArmadaKind IN ('ArmadaManifest', 'ArmadaChartGroup', 'ArmadaChart', 'Deployer') AND ArmadaNamespace = 'apps' AND (ExecutionStatus = 'Running' OR CloseTime >= '2026-10-23T07:00:00.000Z')",
    );
  });
});

describe("endedState: an ended run in list's words", () => {
  it.each([
    ['Deployed', 'COMPLETED', 'ready'],
    ['RolledBack', 'COMPLETED', 'stalled'],
    ['Failed', 'FAILED', 'stalled'],
    ['WaitingApproval', 'TERMINATED', 'stalled'],
    [null, 'COMPLETED', 'ready'],
    [null, 'TIMED_OUT', 'stalled'],
  ])('phase %s, run %s: %s', (phase, status, state) => {
    expect(endedState(phase, status)).toBe(state);
  });
});

describe('uninstalledBy: what an uninstall run removed, from its outcome', () => {
  const chart = (release: string, before: number | null) => ({
    chart: release,
    release,
    namespace: 'apps',
    action: 'uninstalled',
    before,
    revision: null,
  });
  it.each<[string, unknown, unknown]>([
    ['a chart', chart('web', 2), [{ release: 'apps/web', revision: 2 }]],
    [
      'a group',
      { group: 'g', outcomes: [chart('web', 2), chart('db', null)], failed: [], stopped: false },
      [
        { release: 'apps/web', revision: 2 },
        { release: 'apps/db', revision: null },
      ],
    ],
    [
      'a manifest, group by group',
      {
        manifest: 'm',
        state: 'uninstalled',
        rolledBack: [],
        groups: [
          { group: 'b', outcomes: [chart('b', 1)], failed: [], stopped: false },
          { group: 'a', outcomes: [chart('a', 4)], failed: [], stopped: false },
        ],
      },
      [
        { release: 'apps/b', revision: 1 },
        { release: 'apps/a', revision: 4 },
      ],
    ],
    [
      'a Deployer (an older build’s deployerWorkflow)',
      { result: 'uninstalled', version: '', steps: [] },
      [{ deployer: 'team/nginx' }],
    ],
    [
      'a Deployer (deployRun over its plan of one)',
      {
        manifest: 'nginx',
        state: 'uninstalled',
        rolledBack: [],
        groups: [
          {
            group: 'nginx',
            outcomes: [],
            failed: [],
            stopped: false,
            deployers: [{ name: 'nginx', result: 'uninstalled', version: '', steps: [] }],
          },
        ],
      },
      [{ deployer: 'team/nginx' }],
    ],
    ['a deploy', { ...chart('web', 1), action: 'upgraded' }, []],
  ])('%s', (_, outcome, uninstalled) => {
    expect(uninstalledBy(outcome, 'team/nginx')).toEqual(uninstalled);
  });

  it('says each, and that there was nothing', () => {
    expect(
      formatUninstalled([
        { release: 'apps/web', revision: 2 },
        { release: 'apps/db', revision: null },
        { deployer: 'team/nginx' },
      ]),
    ).toEqual([
      'uninstalled release apps/web (was revision 2)',
      'release apps/db: was not installed',
      'deleted the Deployments of Deployer team/nginx',
    ]);
    expect(formatUninstalled([])).toEqual(['nothing was installed to uninstall']);
  });
});

describe('the day-two verbs on the command line', () => {
  async function run(...argv: string[]) {
    const out: string[] = [];
    const err: string[] = [];
    const code = await main(
      argv,
      (l) => out.push(l),
      (l) => err.push(l),
    );
    return { code, out, err };
  }

  it.each(['diff', 'list', 'get', 'cancel', 'delete'])(
    '%s --help prints its usage and exits 0',
    async (verb) => {
      const { code, out } = await run(verb, '--help');
      expect(out[0]).toMatch(new RegExp(`^armadactl ${verb} `));
      expect(code).toBe(0);
    },
  );

  it('lists them in the usage', async () => {
    const { out } = await run('--help');
    for (const verb of ['diff', 'list', 'get', 'cancel', 'delete'])
      expect(out[0]).toContain(`  armadactl ${verb} `);
  });

  it.each([
    [['diff'], 'name a file with -f, or one object'],
    [['diff', '-f', 'x.yaml', 'amf/demo'], 'name a file with -f, or one object'],
    [['diff', 'amf/demo', '--manifest', 'demo'], '--manifest picks a manifest of a file'],
    [['list', '-o', 'yaml'], '--output must be json or text'],
    [['get'], 'name one run'],
    [['delete', 'act/web', '--timeout', 'soon'], '--timeout must be a number of seconds'],
  ])('%j is a usage error: exit 2', async (argv, said) => {
    const { code, err } = await run(...argv);
    expect(err[0]).toContain(said);
    expect(code).toBe(2);
  });

  it('diff exits 2, as diff(1) on trouble, when the file is not valid', async () => {
    const { code, err } = await run('diff', '-f', '/nonexistent/file.yaml');
    expect(err[0]).toContain('/nonexistent/file.yaml');
    expect(code).toBe(2);
  });
});

describe('previousDeploys (what rollback --previous may undo, newest first)', () => {
  const run = (runId: string, type: string, status = 'COMPLETED', undoes?: string) => ({
    runId,
    type,
    status,
    undoes,
  });
  const walk = async (runs: ReturnType<typeof run>[]) => {
    const found: string[] = [];
    for await (const r of previousDeploys(runs, async (r) => r.undoes)) found.push(r.runId);
    return found;
  };

  it('skips deploys a completed undo took back, and the undos themselves, so each --previous goes one further back', async () => {
    // Newest first: undo of d3, then d3, d2, d1 (a Deployer's undo is a deployerWorkflow naming the run it undid).
    expect(
      await walk([
        run('u1', 'deployerWorkflow', 'COMPLETED', 'd3'),
        run('d3', 'deployerWorkflow'),
        run('d2', 'deployerWorkflow'),
        run('d1', 'deployerWorkflow'),
      ]),
    ).toEqual(['d2', 'd1']);
    expect(
      await walk([
        run('u2', 'undoWorkflow', 'COMPLETED', 'd2'),
        run('u1', 'undoWorkflow', 'COMPLETED', 'd3'),
        run('d3', 'manifestWorkflow'),
        run('d2', 'manifestWorkflow', 'FAILED'),
        run('d1', 'manifestWorkflow'),
      ]),
    ).toEqual(['d1']);
  });

  it('a failed undo took nothing back; a run that continued as new or still runs is no candidate', async () => {
    expect(
      await walk([
        run('r', 'manifestWorkflow', 'RUNNING'),
        run('u1', 'undoWorkflow', 'FAILED', 'd2'),
        run('d2', 'manifestWorkflow'),
        run('c1', 'manifestWorkflow', 'CONTINUED_AS_NEW'),
      ]),
    ).toEqual(['d2']);
  });
});

describe('retryPlace (whose failed run a retry takes up)', () => {
  const at = (kind: ObjectPlace['kind'], more: Partial<ObjectPlace> = {}): ObjectPlace => ({
    kind,
    namespace: 'ns',
    name: 'x',
    ...more,
  });

  it('a group or chart a manifest lists: the manifest; a chart of a standalone group: the group', () => {
    expect(retryPlace(at('ArmadaChartGroup', { manifest: 'site' }))).toEqual(
      at('ArmadaManifest', { name: 'site' }),
    );
    expect(retryPlace(at('ArmadaChart', { group: 'apps', manifest: 'site' }))).toEqual(
      at('ArmadaManifest', { name: 'site' }),
    );
    expect(retryPlace(at('ArmadaChart', { group: 'apps' }))).toEqual(
      at('ArmadaChartGroup', { name: 'apps' }),
    );
  });

  it('what nothing lists, a manifest and a Deployer: its own run', () => {
    for (const place of [at('ArmadaChart'), at('ArmadaChartGroup'), at('ArmadaManifest'), at('Deployer')])
      expect(retryPlace(place)).toBe(place);
  });
});
