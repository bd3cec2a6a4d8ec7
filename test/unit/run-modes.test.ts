import {
  chartsToRun,
  deployersToRun,
  gatedBefore,
  groupsInOrder,
  startsOver,
} from '../../core/plan/run-modes';
import { groupChanges, markUndone } from '../../core/plan/rollback';
import type { ChartPlan, GroupPlan, ManifestPlan } from '../../core/plan/plans';
import type { GroupOutcome } from '../../core/contracts/workflows';
import type { GroupProgress } from '../../core/progress';

const chart = (name: string): ChartPlan => ({
  chart: name,
  release: `demo-${name}`,
  namespace: 'apps',
  workflowId: `helm:apps/demo-${name}`,
  spec: {} as never,
});
const group = (name: string, charts: string[], more: Partial<GroupPlan> = {}): GroupPlan => ({
  name,
  sequenced: true,
  charts: charts.map(chart),
  ...more,
});
/** "platform" (sequenced: a, b, c), then "apps" (parallel: d, e) behind a gate. */
const plan: ManifestPlan = {
  manifest: 'demo',
  namespace: 'default',
  onFailure: 'stop',
  targetState: 'deployed',
  groups: [
    group('platform', ['a', 'b', 'c']),
    group('apps', ['d', 'e'], { sequenced: false, approval: { onTimeout: 'stop' } as GroupPlan['approval'] }),
  ],
};
const [platform, apps] = plan.groups;
const names = (charts: ChartPlan[]) => charts.map((c) => c.chart);

describe('the run’s modes (core/plan/run-modes.ts)', () => {
  it('takes the groups in order to deploy, in reverse to uninstall', () => {
    expect(groupsInOrder(plan, 'deploy').map((g) => g.name)).toEqual(['platform', 'apps']);
    expect(groupsInOrder(plan, 'uninstall').map((g) => g.name)).toEqual(['apps', 'platform']);
    expect(plan.groups.map((g) => g.name)).toEqual(['platform', 'apps']); // the plan stays as it was
  });

  it.each<[string, GroupPlan, 'deploy' | 'uninstall', string[] | undefined, string[]]>([
    ['a sequenced group deploys in order', platform, 'deploy', undefined, ['a', 'b', 'c']],
    ['a sequenced group uninstalls last chart first', platform, 'uninstall', undefined, ['c', 'b', 'a']],
    ['a parallel group uninstalls as listed (all at once)', apps, 'uninstall', undefined, ['d', 'e']],
    ['a retry leaves what its failed run finished', platform, 'deploy', ['a'], ['b', 'c']],
    ['a retry of an uninstall, reversed', platform, 'uninstall', ['c'], ['b', 'a']],
    ['a retry of a finished group runs none', platform, 'deploy', ['a', 'b', 'c'], []],
  ])('%s', (_, g, mode, finished, expected) => {
    expect(names(chartsToRun(g, mode, finished))).toEqual(expected);
  });

  it('rolls out the Deployers a retry has not finished, and none to uninstall', () => {
    const deployer = (name: string) => ({ name, workflowId: `Deployer:default/${name}`, spec: {} as never });
    const withDeployers = group('edge', ['a'], { deployers: [deployer('api'), deployer('web')] });
    const rolledOut = (mode: 'deploy' | 'uninstall', finished?: string[]) =>
      deployersToRun(withDeployers, mode, finished).map((d) => d.name);
    expect(rolledOut('deploy')).toEqual(['api', 'web']);
    expect(rolledOut('deploy', ['a', 'Deployer/api'])).toEqual(['web']);
    expect(rolledOut('uninstall')).toEqual([]);
    expect(deployersToRun(platform, 'deploy')).toEqual([]);
  });

  it("uninstalls a Deployer's plan of one: its own Deployer (standalone) removes its Deployments", () => {
    const own = {
      name: 'api',
      workflowId: 'Deployer:default/api/rollout',
      spec: {} as never,
      standalone: true as const,
    };
    const plan = group('api', [], { deployers: [own] });
    expect(deployersToRun(plan, 'uninstall')).toEqual([own]);
  });

  it.each<[string, GroupPlan, 'deploy' | 'uninstall', Record<string, string[]> | undefined, boolean]>([
    ['a gated group, deploying', apps, 'deploy', undefined, true],
    ['a group without a gate', platform, 'deploy', undefined, false],
    ['a gated group, uninstalling', apps, 'uninstall', undefined, false],
    [
      'a retry that takes up the group (its failed run passed the gate)',
      apps,
      'deploy',
      { apps: ['d'] },
      false,
    ],
    ['a retry that reaches the group anew', apps, 'deploy', { platform: ['a'] }, true],
  ])('passes the gate before %s: %s', (_, g, mode, finished, expected) => {
    expect(gatedBefore(g, mode, finished && { retryOf: 'r1', finished })).toBe(expected);
  });

  it.each([
    [{ replanned: true, failed: false, rollbackRequested: false, cancelled: false }, true],
    [{ replanned: false, failed: false, rollbackRequested: false, cancelled: false }, false],
    [{ replanned: true, failed: true, rollbackRequested: false, cancelled: false }, false],
    [{ replanned: true, failed: false, rollbackRequested: true, cancelled: false }, false],
    [{ replanned: true, failed: false, rollbackRequested: false, cancelled: true }, false],
  ])('starts over on %j: %s', (facts, expected) => {
    expect(startsOver(facts)).toBe(expected);
  });
});

describe('the saga’s record and its rows (core/plan/rollback.ts)', () => {
  const outcome: GroupOutcome = {
    group: 'platform',
    outcomes: [
      { chart: 'a', release: 'demo-a', namespace: 'apps', action: 'upgraded', before: 4, revision: 5 },
      { chart: 'b', release: 'demo-b', namespace: 'apps', action: 'unchanged', before: 1, revision: 1 },
    ] as GroupOutcome['outcomes'],
    failed: [
      {
        chart: 'c',
        error: 'boom',
        written: { chart: 'c', release: 'demo-c', namespace: 'apps', before: null },
      },
    ],
    stopped: false,
  };

  it('records what a group changed in order: charts installed or upgraded, then one written before it failed', () => {
    expect(groupChanges(outcome, platform, 'default')).toEqual([
      { chart: 'a', release: 'demo-a', namespace: 'apps', before: 4 },
      { chart: 'c', release: 'demo-c', namespace: 'apps', before: null },
    ]);
  });

  it('shows the row of the release a step put back: rolled back, or uninstalled if the run installed it', () => {
    const rows: GroupProgress[] = [
      {
        name: 'platform',
        sequenced: true,
        state: 'failed',
        charts: ['a', 'b', 'c'].map((c) => ({
          chart: c,
          release: `demo-${c}`,
          namespace: 'apps',
          state: 'deployed',
        })),
      },
    ];
    markUndone(rows, { action: 'rollback', release: 'demo-a', namespace: 'apps', revision: 4 });
    markUndone(rows, { action: 'uninstall', release: 'demo-c', namespace: 'apps' });
    markUndone(rows, { action: 'uninstall', release: 'demo-b', namespace: 'elsewhere' });
    expect(rows[0].charts.map((c) => c.state)).toEqual(['rolled-back', 'deployed', 'uninstalled']);
  });
});
