import {
  chartMessageAtRun,
  deployingRunsQuery,
  routeInRun,
  runObjects,
  SEARCH_VALUE_LIMIT_BYTES,
  searchedObjects,
  type ObjectRef,
  type SteeringVerb,
} from '../../core/plan/run-objects';
import type { ChartPlan, ManifestPlan } from '../../core/plan/plans';

const chart = (name: string): ChartPlan => ({
  chart: name,
  release: `demo-${name}`,
  namespace: 'apps',
  workflowId: `helm:apps/demo-${name}`,
  spec: {} as never,
});

/** Manifest demo in team-a: group platform (a, b; Deployer api), then apps (c). */
const plan: ManifestPlan = {
  manifest: 'demo',
  namespace: 'team-a',
  onFailure: 'stop',
  targetState: 'deployed',
  groups: [
    {
      name: 'platform',
      sequenced: true,
      charts: [chart('a'), chart('b')],
      deployers: [{ name: 'api', workflowId: 'Deployer:team-a/api', spec: {} as never }],
    },
    { name: 'apps', sequenced: false, charts: [chart('c')] },
  ],
};

describe('the objects a run deploys (core/plan/run-objects.ts)', () => {
  it('lists the manifest, then each group with its charts and Deployers, in the plan’s namespace', () => {
    expect(runObjects(plan)).toEqual([
      'ArmadaManifest/team-a/demo',
      'ArmadaChartGroup/team-a/platform',
      'ArmadaChart/team-a/a',
      'ArmadaChart/team-a/b',
      'Deployer/team-a/api',
      'ArmadaChartGroup/team-a/apps',
      'ArmadaChart/team-a/c',
    ]);
  });

  it('lists a chart two groups name once', () => {
    const twice = { ...plan, groups: [plan.groups[1], { ...plan.groups[1], name: 'again' }] };
    expect(runObjects(twice)).toEqual([
      'ArmadaManifest/team-a/demo',
      'ArmadaChartGroup/team-a/apps',
      'ArmadaChart/team-a/c',
      'ArmadaChartGroup/team-a/again',
    ]);
  });

  it('searches by all of them when they fit in one search attribute value', () => {
    expect(searchedObjects(plan)).toEqual([
      'ArmadaManifest/team-a/demo',
      'ArmadaChartGroup/team-a/platform',
      'Deployer/team-a/api',
      'ArmadaChartGroup/team-a/apps',
      'ArmadaChart/team-a/a',
      'ArmadaChart/team-a/b',
      'ArmadaChart/team-a/c',
    ]);
  });

  describe('a manifest too large for one search attribute value (drill 7: 300 charts in 30 groups)', () => {
    const large: ManifestPlan = {
      ...plan,
      groups: Array.from({ length: 30 }, (_, g) => ({
        name: `group-${g}`,
        sequenced: false,
        charts: Array.from({ length: 10 }, (_, c) => chart(`chart-${g}-${c}`)),
      })),
    };
    const listed = searchedObjects(large);
    const json = JSON.stringify(listed);

    it('lists what fits in Temporal’s limit, as Temporal measures it (the JSON’s bytes)', () => {
      expect(JSON.stringify(runObjects(large)).length).toBeGreaterThan(SEARCH_VALUE_LIMIT_BYTES);
      expect(Buffer.byteLength(json)).toBeLessThanOrEqual(SEARCH_VALUE_LIMIT_BYTES);
      // Nothing more would fit: the next chart in plan order would go over.
      const next = runObjects(large).find((key) => !listed.includes(key))!;
      expect(Buffer.byteLength(JSON.stringify([...listed, next]))).toBeGreaterThan(SEARCH_VALUE_LIMIT_BYTES);
    });

    it('keeps the manifest and every group, then the first charts in plan order', () => {
      expect(listed.slice(0, 31)).toEqual([
        'ArmadaManifest/team-a/demo',
        ...large.groups.map((g) => `ArmadaChartGroup/team-a/${g.name}`),
      ]);
      const charts = listed.slice(31);
      expect(charts.length).toBeGreaterThan(0);
      expect(charts).toEqual(
        runObjects(large)
          .filter((key) => key.startsWith('ArmadaChart/'))
          .slice(0, charts.length),
      );
    });
  });

  it('finds the running runs that deploy an object by their ArmadaObjects', () => {
    expect(deployingRunsQuery({ kind: 'ArmadaChart', namespace: 'team-a', name: 'web' })).toBe(
      `ArmadaObjects = 'ArmadaChart/team-a/web' AND ExecutionStatus = 'Running'`,
    );
  });

  const deployed = runObjects(plan);
  const a: ObjectRef = { kind: 'ArmadaChart', namespace: 'team-a', name: 'a' };
  it.each<[string, SteeringVerb, ObjectRef, boolean, ReturnType<typeof routeInRun>]>([
    ['approve, its canary running', 'approve', a, true, { to: 'canary' }],
    ['pause, its canary running', 'pause', a, true, { to: 'canary' }],
    ['rollback, no canary: the run that drives it', 'rollback', a, false, { to: 'run' }],
    ['resume, no canary', 'resume', a, false, { to: 'run' }],
    [
      'approve, no canary',
      'approve',
      a,
      false,
      { refused: 'ArmadaChart team-a/a has no canary running in this run: nothing to approve there' },
    ],
    [
      'promote, no canary',
      'promote',
      a,
      false,
      { refused: 'ArmadaChart team-a/a has no canary running in this run: nothing to promote there' },
    ],
    [
      'a chart of another namespace',
      'pause',
      { ...a, namespace: 'team-b' },
      true,
      { refused: 'ArmadaChart team-b/a is not deployed by this run' },
    ],
    [
      'a chart the run does not deploy',
      'approve',
      { ...a, name: 'x' },
      false,
      { refused: 'ArmadaChart team-a/x is not deployed by this run' },
    ],
    [
      'a group of the run: the run',
      'approve',
      { ...a, kind: 'ArmadaChartGroup', name: 'apps' },
      false,
      { to: 'run' },
    ],
    ['its manifest: the run', 'pause', { ...a, kind: 'ArmadaManifest', name: 'demo' }, false, { to: 'run' }],
  ])('routes a message naming a chart inside the run: %s', (_case, verb, target, canary, route) => {
    expect(routeInRun(verb, target, deployed, canary)).toEqual(route);
  });
});

describe('chartMessageAtRun: a pause, resume or rollback naming a manifest’s chart that its run takes', () => {
  const web: ObjectRef = { kind: 'ArmadaChart', namespace: 'ns', name: 'web' };
  const run = 'ArmadaManifest:ns/demo';
  const canary = { workflowId: 'ArmadaChart:ns/web/canary', running: false };
  it.each<[string, Parameters<typeof chartMessageAtRun>, ReturnType<typeof chartMessageAtRun>]>([
    [
      'no canary: the run takes it as a whole',
      ['pause', web, run, ['web', 'db'], canary],
      {
        note: 'ArmadaChart ns/web has no canary running: ArmadaManifest:ns/demo takes the pause as a whole, for every chart it deploys',
      },
    ],
    [
      'its canary running: passed on to it',
      ['rollback', web, run, ['web'], { ...canary, running: true }],
      { note: 'passed on to the canary of ArmadaChart ns/web (ArmadaChart:ns/web/canary)' },
    ],
    [
      'a chart the run’s plan does not hold: refused before it is sent',
      ['resume', web, run, ['db'], canary],
      {
        refused:
          'ArmadaChart ns/web is not in the plan of the run ArmadaManifest:ns/demo (its charts: db): that run started before the chart was listed; steer it by the object it runs, or wait for the run that deploys the chart',
      },
    ],
    [
      'the plan unknown (no progress): not checked',
      ['pause', web, run, undefined, canary],
      {
        note: 'ArmadaChart ns/web has no canary running: ArmadaManifest:ns/demo takes the pause as a whole, for every chart it deploys',
      },
    ],
  ])('%s', (_case, args, landing) => {
    expect(chartMessageAtRun(...args)).toEqual(landing);
  });
});
