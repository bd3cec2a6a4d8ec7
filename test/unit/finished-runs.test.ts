import type { ChartOutcome, GroupOutcome, ManifestOutcome } from '../../core/contracts/workflows';
import { changesToUndo, deployerOutcomeOf, finishedBefore, resumeOf } from '../../core/plan/finished-runs';

const actAs = { namespace: 'team-a', name: 'deployer' };
const chart = (name: string, action: ChartOutcome['action'], before: number | null): ChartOutcome => ({
  chart: name,
  release: `demo-${name}`,
  namespace: 'apps',
  action,
  before,
  revision: action === 'unchanged' ? before : (before ?? 0) + 1,
  actAs,
});
const group = (
  name: string,
  outcomes: ChartOutcome[],
  failed: GroupOutcome['failed'] = [],
): GroupOutcome => ({
  group: name,
  outcomes,
  failed,
  stopped: false,
});
const change = (name: string, before: number | null) => ({
  chart: name,
  release: `demo-${name}`,
  namespace: 'apps',
  before,
  actAs,
});

describe('changesToUndo (what undoing a finished run puts back)', () => {
  const groups = [
    group('first', [chart('a', 'upgraded', 2), chart('b', 'unchanged', 4)]),
    group(
      'second',
      [chart('c', 'installed', null)],
      [{ chart: 'd', error: 'wait timed out', written: change('d', 7) }],
    ),
  ];
  const manifest = (state: ManifestOutcome['state']): ManifestOutcome => ({
    manifest: 'demo',
    state,
    groups,
    rolledBack: [],
  });

  it.each(['manifestWorkflow', 'deployRun'] as const)(
    "a manifest's (%s) changes in the order it made them, a failed chart's written release included, unchanged ones left out",
    (workflowType) => {
      expect(changesToUndo({ workflowType, outcome: manifest('deployed') })).toEqual([
        change('a', 2),
        change('c', null),
        change('d', 7),
      ]);
    },
  );

  it('a run that continued from others (re-plans) undoes their changes first in the record, then its own', () => {
    const carriedChanges = [change('x', 3), change('y', null)];
    expect(
      changesToUndo({
        workflowType: 'manifestWorkflow',
        outcome: { ...manifest('deployed'), carriedChanges },
      }),
    ).toEqual([change('x', 3), change('y', null), change('a', 2), change('c', null), change('d', 7)]);
    expect(
      changesToUndo({ workflowType: 'groupWorkflow', outcome: { ...groups[0], carriedChanges } }),
    ).toEqual([change('x', 3), change('y', null), change('a', 2)]);
    const chartRun = { ...chart('a', 'unchanged', 2), carriedChanges: [change('a', 1)] };
    expect(changesToUndo({ workflowType: 'chartWorkflow', outcome: chartRun })).toEqual([change('a', 1)]);
  });

  it('nothing from a run that rolled itself back', () => {
    expect(changesToUndo({ workflowType: 'manifestWorkflow', outcome: manifest('rolled-back') })).toEqual([]);
    expect(
      changesToUndo({
        workflowType: 'groupWorkflow',
        outcome: { ...groups[0], rolledBack: ['apps/demo-a'] },
      }),
    ).toEqual([]);
  });

  it("a chart run's own change, or the release it wrote before it failed; nothing for an unchanged one", () => {
    expect(changesToUndo({ workflowType: 'chartWorkflow', outcome: chart('a', 'upgraded', 2) })).toEqual([
      change('a', 2),
    ]);
    expect(changesToUndo({ workflowType: 'chartWorkflow', outcome: change('d', 7) })).toEqual([
      change('d', 7),
    ]);
    expect(changesToUndo({ workflowType: 'chartWorkflow', outcome: chart('b', 'unchanged', 4) })).toEqual([]);
  });
});

describe('resumeOf and finishedBefore (where a retry takes up a failed run)', () => {
  const groups = [
    group('first', [chart('a', 'installed', null), chart('b', 'unchanged', 3)]),
    group('second', [chart('c', 'upgraded', 1)], [{ chart: 'd', error: 'boom' }]),
  ];

  it('the charts that finished in each group the failed run started', () => {
    const resume = resumeOf('run-1', groups, false);
    expect(resume).toEqual({ retryOf: 'run-1', finished: { first: ['a', 'b'], second: ['c'] } });
    expect(finishedBefore(resume as never, 'first', ['a', 'b'])).toBe(true);
    expect(finishedBefore(resume as never, 'second', ['c', 'd'])).toBe(false);
    expect(finishedBefore(resume as never, 'third', ['e'])).toBe(false);
    expect(finishedBefore(undefined, 'first', ['a'])).toBe(false);
  });

  it('a retry that failed again keeps what finished before it', () => {
    const earlier = { retryOf: 'run-1', finished: { first: ['a', 'b'], second: ['c'] } };
    const again = resumeOf('run-2', [group('second', [chart('d', 'installed', null)], [])], false, earlier);
    expect(again).toEqual({ retryOf: 'run-2', finished: { first: ['a', 'b'], second: ['c', 'd'] } });
  });

  it('refuses a run that rolled back what it changed', () => {
    expect(resumeOf('run-1', groups, true)).toEqual({
      refused: expect.stringContaining('run run-1 rolled back what it had changed'),
    });
  });
});

describe("deployerOutcomeOf: what a Deployer's finished run left", () => {
  const rolledOut = { result: 'promoted' as const, version: 'v2', previous: 'v1', steps: [] };
  it("reads a deployRun's plan of one (its one group's one Deployer) and an older build's deployerWorkflow alike", () => {
    const run: ManifestOutcome = {
      manifest: 'api',
      state: 'deployed',
      groups: [
        {
          group: 'api',
          outcomes: [],
          failed: [],
          stopped: false,
          deployers: [{ name: 'api', ...rolledOut }],
        },
      ],
      rolledBack: [],
    };
    expect(deployerOutcomeOf(run)).toEqual({ name: 'api', ...rolledOut });
    expect(deployerOutcomeOf(rolledOut)).toEqual(rolledOut);
  });

  it('reads nothing from a run that left nothing (cancelled, or failed before its rollout started)', () => {
    expect(deployerOutcomeOf(undefined)).toBeUndefined();
    const failedEarly: ManifestOutcome = { manifest: 'api', state: 'stopped', groups: [], rolledBack: [] };
    expect(deployerOutcomeOf(failedEarly)).toBeUndefined();
  });
});
