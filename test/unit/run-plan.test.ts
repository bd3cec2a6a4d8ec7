import { chartRunOf, groupEndState, groupFailure } from '../../core/plan/run';
import type { GroupOutcome } from '../../core/contracts/workflows';
import type { ManifestPlan } from '../../core/plan/plans';

/** A plan of one group "platform" with one chart "a" (release demo-a). */
function demoPlan(): ManifestPlan {
  const chart = {
    chart: 'a',
    release: 'demo-a',
    namespace: 'apps',
    workflowId: 'helm:apps/demo-a',
    spec: {} as never,
  };
  return {
    manifest: 'demo',
    namespace: 'default',
    onFailure: 'stop',
    targetState: 'deployed',
    groups: [{ name: 'platform', sequenced: true, charts: [chart] }],
  };
}

describe('the one-workflow run (core/plan/run.ts)', () => {
  it("drives a chart of the plan as a deploy, its status in the plan's namespace", () => {
    const chart = demoPlan().groups[0].charts[0];
    expect(chartRunOf(chart, 'team-a')).toEqual({
      chart: 'a',
      release: 'demo-a',
      namespace: chart.namespace,
      spec: chart.spec,
      mode: 'deploy',
      resourceNamespace: 'team-a',
    });
  });

  it('hands a chart of a lockstep group the link its canary steps with', () => {
    const chart = demoPlan().groups[0].charts[0];
    const lockstep = { coordinator: 'ArmadaManifest:default/demo', member: 'a' };
    expect(chartRunOf(chart, 'team-a', 'deploy', lockstep)).toMatchObject({ chart: 'a', lockstep });
  });

  it.each<[string, Partial<GroupOutcome>, ReturnType<typeof groupEndState>]>([
    ['every chart done', {}, 'done'],
    ['stopped before its end', { stopped: true }, 'stopped'],
    [
      'a chart failed (even if stopped too)',
      { stopped: true, failed: [{ chart: 'a', error: 'boom' }] },
      'failed',
    ],
  ])('ends a group by its outcome: %s', (_case, more, state) => {
    expect(groupEndState({ group: 'g', outcomes: [], failed: [], stopped: false, ...more })).toBe(state);
  });

  it('says why a failed group ends the run, naming every failed chart', () => {
    const failed = [
      { chart: 'c', error: 'helm upgrade demo-c failed: boom' },
      { chart: 'd', error: 'wait timed out' },
    ];
    expect(groupFailure({ group: 'apps', outcomes: [], failed, stopped: false })).toBe(
      'group apps failed: c: helm upgrade demo-c failed: boom; d: wait timed out',
    );
  });
});
