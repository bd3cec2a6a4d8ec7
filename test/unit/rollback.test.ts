import { deployerSpec } from '../../api/deployer';
import type { GroupOutcome } from '../../core/contracts/workflows';
import type { DeployerPlan, GroupPlan } from '../../core/plan/plans';
import { changesToUndo } from '../../core/plan/finished-runs';
import {
  changedName,
  changesOf,
  compensations,
  deployerChangesOf,
  undoes,
  undoneName,
} from '../../core/plan/rollback';
import type { Change } from '../../core/plan/changes';

const spec = deployerSpec.parse({
  type: 'canary',
  deployment: { name: 'app', namespace: 'apps', image: 'registry.test/app', version: 'v2', replicas: 3 },
  steps: [{ percent: 25 }, { percent: 100 }],
  analysis: { url: 'http://analysis.test/app', interval: '1m' },
});
const plan = (name: string): DeployerPlan => ({ name, workflowId: `Deployer:team/${name}`, spec });
const release = (name: string, before: number | null): Change => ({
  chart: name,
  release: name,
  namespace: 'apps',
  before,
});

describe('compensations with Deployers', () => {
  it('undoes charts and Deployers newest first: a later group before an earlier one', () => {
    // Group A: chart a, Deployer web promoted v1 → v2; group B: chart b installed, Deployer api first deployed.
    const changes: Change[] = [
      release('a', 4),
      { deployer: plan('web'), namespace: 'team', previous: 'v1' },
      release('b', null),
      { deployer: plan('api'), namespace: 'team', previous: null },
    ];
    const steps = compensations(changes);
    expect(steps.map(undoneName)).toEqual([
      'Deployer/team/api removed',
      'apps/b',
      'Deployer/team/web → v1',
      'apps/a',
    ]);
    expect(steps.map((s) => s.action)).toEqual([
      'remove-deployer',
      'uninstall',
      'revert-deployer',
      'rollback',
    ]);
  });

  it('a Deployer goes back at once: its previous version in one 100 % step, unjudged and unheld', () => {
    const [step] = compensations([{ deployer: plan('web'), namespace: 'team', previous: 'v1' }]);
    expect(step).toMatchObject({ action: 'revert-deployer', version: 'v1', namespace: 'team' });
    const back = (step as { deployer: DeployerPlan }).deployer;
    expect(back.workflowId).toBe('Deployer:team/web');
    expect(back.spec.deployment).toEqual({ ...spec.deployment, version: 'v1' });
    expect(back.spec.steps).toEqual([{ percent: 100 }]);
    expect(back.spec.analysis).toBeUndefined();
  });

  it("a Deployer's undo marks its own progress row, a release's undo the release's", () => {
    const [removed, rolledBack] = compensations([
      release('a', 2),
      { deployer: plan('web'), namespace: 'team', previous: null },
    ]);
    const row = { chart: 'Deployer/web', release: 'app-v2', namespace: 'apps' };
    expect(undoes(removed, row)).toBe(true);
    expect(undoes(rolledBack, row)).toBe(false);
    expect(undoes(rolledBack, { chart: 'a', release: 'a', namespace: 'apps' })).toBe(true);
  });
});

describe('deployerChangesOf', () => {
  const group: GroupPlan = {
    name: 'g',
    sequenced: true,
    charts: [],
    deployers: ['web', 'api', 'same', 'held'].map(plan),
  };
  const outcome: GroupOutcome = {
    group: 'g',
    outcomes: [],
    failed: [],
    stopped: false,
    deployers: [
      { name: 'web', result: 'promoted', version: 'v2', previous: 'v1', steps: [] },
      { name: 'api', result: 'deployed', version: 'v2', created: true, steps: [] },
      // Found already at its version: the run created nothing, so its undo removes nothing.
      { name: 'same', result: 'deployed', version: 'v2', steps: [] },
      { name: 'held', result: 'rolled-back', version: 'v1', previous: 'v1', steps: [] },
    ],
  };

  it('records what the run promoted or created, in the order they finished; nothing it rolled back or found', () => {
    expect(deployerChangesOf(outcome, group, 'team')).toEqual([
      { deployer: plan('web'), namespace: 'team', previous: 'v1' },
      { deployer: plan('api'), namespace: 'team', previous: null },
    ]);
  });

  it("leaves the releases' record as it was", () => {
    expect(changesOf(outcome)).toEqual([]);
  });
});

describe('changesToUndo of a finished run with Deployers (armadactl rollback --to-run | --previous)', () => {
  const group = (name: string, deployers: string[]): GroupPlan => ({
    name,
    sequenced: true,
    charts: [],
    deployers: deployers.map(plan),
  });
  const outcome = (name: string, chart: string, deployer: string): GroupOutcome => ({
    group: name,
    outcomes: [
      {
        chart,
        release: chart,
        namespace: 'apps',
        action: 'upgraded',
        before: 1,
        revision: 2,
      } as GroupOutcome['outcomes'][number],
    ],
    failed: [],
    stopped: false,
    deployers: [{ name: deployer, result: 'promoted', version: 'v2', previous: 'v1', steps: [] }],
  });
  const run = {
    workflowType: 'manifestWorkflow' as const,
    outcome: {
      manifest: 'm',
      state: 'deployed' as const,
      groups: [outcome('ga', 'a', 'web'), outcome('gb', 'b', 'api')],
      rolledBack: [],
    },
  };

  it("with the run's plan: each group's releases, then its Deployers, group after group", () => {
    const plan = { namespace: 'team', groups: [group('ga', ['web']), group('gb', ['api'])] };
    expect(changesToUndo(run, plan).map(changedName)).toEqual(['a', 'Deployer/web', 'b', 'Deployer/api']);
  });

  it('without it, the releases only', () => {
    expect(changesToUndo(run).map(changedName)).toEqual(['a', 'b']);
  });
});
