import {
  deployingRunsQuery,
  routeInRun,
  runObjects,
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
