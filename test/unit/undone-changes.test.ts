import type { UndoRun } from '../../core/contracts/workflows';
import type { ReleaseChange } from '../../core/plan/changes';
import { undidChangeOf, undoersOf, type ListedObject } from '../../core/plan/undone-changes';

/*
 * rollback --previous of a group or chart manifest `demo` lists (groups platform: a, b; apps: c):
 * which undos under the manifest's ID took back its change of the run they undid.
 */
const release = (chart: string): ReleaseChange => ({
  chart,
  release: `demo-${chart}`,
  namespace: 'apps',
  before: 1,
});
const chartA: ListedObject = { kind: 'ArmadaChart', name: 'a', manifest: 'demo', group: 'platform' };
const platform: ListedObject = { kind: 'ArmadaChartGroup', name: 'platform', manifest: 'demo' };
const undo = (kind: UndoRun['kind'], name: string, ...charts: string[]) => ({
  kind,
  name,
  changes: charts.map(release),
});

describe('undidChangeOf: the undos rollback --previous counts for a listed group or chart', () => {
  it.each([
    ['a chart: its own undo', chartA, undo('ArmadaChart', 'a', 'a'), true],
    [
      'a chart: its group’s undo that took its release back',
      chartA,
      undo('ArmadaChartGroup', 'platform', 'a', 'b'),
      true,
    ],
    [
      'a chart: its group’s undo of a run that left it as it was',
      chartA,
      undo('ArmadaChartGroup', 'platform', 'b'),
      false,
    ],
    [
      'a chart: its manifest’s undo that took its release back',
      chartA,
      undo('ArmadaManifest', 'demo', 'a', 'c'),
      true,
    ],
    [
      'a chart: its manifest’s undo of a run that left it as it was',
      chartA,
      undo('ArmadaManifest', 'demo', 'c'),
      false,
    ],
    ['a chart: another group’s undo', chartA, undo('ArmadaChartGroup', 'apps', 'c'), false],
    ['a chart: another chart’s undo', chartA, undo('ArmadaChart', 'b', 'b'), false],
    ['a group: its own undo', platform, undo('ArmadaChartGroup', 'platform', 'a', 'b'), true],
    ['a group: its manifest’s undo', platform, undo('ArmadaManifest', 'demo', 'a', 'b', 'c'), true],
    [
      'a group: one of its charts’ undo (the others kept their changes)',
      platform,
      undo('ArmadaChart', 'a', 'a'),
      false,
    ],
    ['a group: another group’s undo', platform, undo('ArmadaChartGroup', 'apps', 'c'), false],
  ])('%s', (_, object, u, counts) => {
    expect(undidChangeOf(object, u)).toBe(counts);
  });

  it('reads the undos of the object, its manifest and a chart’s group (the visibility query)', () => {
    expect(undoersOf(chartA)).toEqual([
      { kind: 'ArmadaChart', name: 'a' },
      { kind: 'ArmadaManifest', name: 'demo' },
      { kind: 'ArmadaChartGroup', name: 'platform' },
    ]);
    expect(undoersOf(platform)).toEqual([
      { kind: 'ArmadaChartGroup', name: 'platform' },
      { kind: 'ArmadaManifest', name: 'demo' },
    ]);
    // A chart of a group that stands alone: the group's run deploys it.
    expect(undoersOf({ kind: 'ArmadaChart', name: 'a', group: 'platform' })).toEqual([
      { kind: 'ArmadaChart', name: 'a' },
      { kind: 'ArmadaChartGroup', name: 'platform' },
    ]);
  });

  it('counts a standalone group’s undo for its chart when it took the chart’s change back', () => {
    const alone: ListedObject = { kind: 'ArmadaChart', name: 'a', group: 'platform' };
    expect(undidChangeOf(alone, undo('ArmadaChartGroup', 'platform', 'a'))).toBe(true);
    expect(undidChangeOf(alone, undo('ArmadaChartGroup', 'platform', 'b'))).toBe(false);
    expect(undidChangeOf(alone, undo('ArmadaChart', 'b', 'b'))).toBe(false);
  });
});
