import type { DeployerSpec } from '../../api/deployer';
import type { ArmadaChartSpec } from '../../api/chart';
import { listedChanges, type RunPlan } from '../../core/plan/finished-runs';
import type { Change, DeployerChange, ReleaseChange } from '../../core/plan/changes';
import type { DeployerPlan } from '../../core/plan/plans';

/*
 * An undo of a group or chart a manifest lists reads the manifest's deployRun runs (no group or
 * chart child): listedChanges keeps the changes that are that object's own.
 */
const release = (chart: string): ReleaseChange => ({
  chart,
  release: `demo-${chart}`,
  namespace: 'apps',
  before: 1,
});
const deployerPlan = (name: string): DeployerPlan => ({
  name,
  workflowId: `Deployer:ops/${name}`,
  spec: {} as DeployerSpec,
});
const deployer = (name: string): DeployerChange => ({
  deployer: deployerPlan(name),
  namespace: 'ops',
  previous: 'v1',
});
const chartPlan = (chart: string) => ({
  chart,
  release: `demo-${chart}`,
  namespace: 'apps',
  workflowId: `helm:apps/demo-${chart}`,
  spec: {} as ArmadaChartSpec,
});
const plan: RunPlan = {
  namespace: 'ops',
  groups: [
    { name: 'platform', sequenced: true, charts: [chartPlan('a'), chartPlan('b')] },
    { name: 'apps', sequenced: false, charts: [chartPlan('c')], deployers: [deployerPlan('web')] },
  ],
};
const changes: Change[] = [release('a'), release('b'), release('c'), deployer('web')];

describe("listedChanges: a listed object's own changes of its manifest's run", () => {
  it.each([
    ['a chart: its release', { kind: 'ArmadaChart', name: 'b' }, [release('b')]],
    ['a group: its charts', { kind: 'ArmadaChartGroup', name: 'platform' }, [release('a'), release('b')]],
    [
      'a group: its charts and Deployers',
      { kind: 'ArmadaChartGroup', name: 'apps' },
      [release('c'), deployer('web')],
    ],
    ['a group the plan does not hold: nothing', { kind: 'ArmadaChartGroup', name: 'gone' }, []],
  ])('%s', (_, object, expected) => {
    expect(listedChanges(object, changes, plan)).toEqual(expected);
  });

  it('a group without its run’s plan: nothing (its charts are unknown)', () => {
    expect(listedChanges({ kind: 'ArmadaChartGroup', name: 'platform' }, changes, undefined)).toEqual([]);
  });
});
