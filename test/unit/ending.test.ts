import type { ChartOutcome } from '../../core/contracts/workflows';
import {
  chartOutcomeStatus,
  chartRollback,
  chartState,
  groupEnding,
  manifestEnding,
  type GroupFacts,
  type ManifestFacts,
} from '../../core/plan/ending';

describe('manifestEnding (does a manifest run roll back, and how does it end)', () => {
  const facts = (more: Partial<ManifestFacts>): ManifestFacts => ({
    uninstall: false,
    onFailure: 'stop',
    failed: false,
    rollbackRequested: false,
    cancelled: false,
    complete: true,
    ...more,
  });

  it.each<[string, Partial<ManifestFacts>, ReturnType<typeof manifestEnding>]>([
    ['every group deployed', {}, { rollBack: false, state: 'deployed', phase: 'Deployed' }],
    [
      'every group uninstalled',
      { uninstall: true },
      { rollBack: false, state: 'uninstalled', phase: 'Uninstalled' },
    ],
    [
      'a failed group with on_failure stop leaves what deployed',
      { failed: true, complete: false },
      { rollBack: false, state: 'stopped', phase: 'Failed' },
    ],
    [
      'a failed group with on_failure rollback undoes the run, and still reads Failed',
      { failed: true, complete: false, onFailure: 'rollback' },
      { rollBack: true, state: 'rolled-back', phase: 'Failed' },
    ],
    [
      'a rollback signal undoes the run whatever on_failure says',
      { rollbackRequested: true, complete: false },
      { rollBack: true, state: 'rolled-back', phase: 'RolledBack' },
    ],
    [
      'a rollback signal after the last group still undoes the run',
      { rollbackRequested: true },
      { rollBack: true, state: 'rolled-back', phase: 'RolledBack' },
    ],
    [
      'an approval timing out into stop stops, even with on_failure rollback',
      { failed: true, complete: false, timedOutInto: 'stop', onFailure: 'rollback' },
      { rollBack: false, state: 'stopped', phase: 'Failed' },
    ],
    [
      'an approval timing out into rollback rolls back, even with on_failure stop',
      { failed: true, complete: false, timedOutInto: 'rollback' },
      { rollBack: true, state: 'rolled-back', phase: 'Failed' },
    ],
    [
      'a cancellation with on_failure rollback undoes the run',
      { cancelled: true, complete: false, onFailure: 'rollback' },
      { rollBack: true, state: 'rolled-back', phase: 'RolledBack' },
    ],
    [
      'a cancellation with on_failure stop stops short: Stopped, not Deployed',
      { cancelled: true, complete: false },
      { rollBack: false, state: 'stopped', phase: 'Stopped' },
    ],
    [
      'a cancellation that came after every group ran leaves the run deployed',
      { cancelled: true },
      { rollBack: false, state: 'deployed', phase: 'Deployed' },
    ],
    [
      'an uninstall never rolls back, even when asked to',
      { uninstall: true, rollbackRequested: true, complete: false },
      { rollBack: false, state: 'stopped', phase: 'Stopped' },
    ],
    [
      'a failed uninstall with on_failure rollback is not undone',
      { uninstall: true, failed: true, complete: false, onFailure: 'rollback' },
      { rollBack: false, state: 'stopped', phase: 'Failed' },
    ],
  ])('%s', (_name, more, ending) => {
    expect(manifestEnding(facts(more))).toEqual(ending);
  });
});

describe('groupEnding (a group run: its own rollback, and how it ends)', () => {
  const facts = (more: Partial<GroupFacts>): GroupFacts => ({
    uninstall: false,
    standalone: true,
    rollbackRequested: false,
    failed: false,
    stopped: false,
    ...more,
  });

  it.each<[string, Partial<GroupFacts>, ReturnType<typeof groupEnding>]>([
    ['every chart deployed', {}, { rollBack: false, state: 'done', phase: 'Deployed' }],
    [
      'every chart uninstalled',
      { uninstall: true },
      { rollBack: false, state: 'done', phase: 'Uninstalled' },
    ],
    ['a chart failed', { failed: true }, { rollBack: false, state: 'failed', phase: 'Failed' }],
    [
      'stopped before all its charts ran',
      { stopped: true },
      { rollBack: false, state: 'stopped', phase: 'Stopped' },
    ],
    [
      'a standalone group asked to roll back undoes its changes',
      { rollbackRequested: true, stopped: true },
      { rollBack: true, state: 'stopped', phase: 'RolledBack' },
    ],
    [
      "a manifest's group leaves the rollback to the manifest",
      { rollbackRequested: true, stopped: true, standalone: false },
      { rollBack: false, state: 'stopped', phase: 'Stopped' },
    ],
    [
      'a standalone group that failed and was asked to roll back undoes its changes',
      { rollbackRequested: true, failed: true },
      { rollBack: true, state: 'stopped', phase: 'RolledBack' },
    ],
    [
      'an uninstalling group is not rolled back',
      { rollbackRequested: true, uninstall: true, stopped: true },
      { rollBack: false, state: 'stopped', phase: 'Stopped' },
    ],
  ])('%s', (_name, more, ending) => {
    expect(groupEnding(facts(more))).toEqual(ending);
  });
});

describe('a chart run ending', () => {
  const outcome = (
    action: ChartOutcome['action'],
    before: number | null,
    revision: number | null,
  ): ChartOutcome => ({
    chart: 'web',
    release: 'demo-web',
    namespace: 'apps',
    action,
    before,
    revision,
  });

  it.each<[ChartOutcome['action'], boolean, boolean]>([
    ['installed', true, true],
    ['upgraded', true, true],
    ['unchanged', true, false],
    ['skipped', true, false],
    ['uninstalled', true, false],
    ['upgraded', false, false],
  ])('a standalone chart that %s, rollback asked: %s → rolls back: %s', (action, asked, rollsBack) => {
    expect(chartRollback(outcome(action, 2, 3), asked).length > 0).toBe(rollsBack);
  });

  it('a chart run that continued from others (re-plans) undoes their writes too, oldest first in the record', () => {
    const earlier = { chart: 'web', release: 'demo-web', namespace: 'apps', before: 1 };
    expect(chartRollback(outcome('upgraded', 2, 3), true, [earlier])).toEqual([
      earlier,
      { chart: 'web', release: 'demo-web', namespace: 'apps', before: 2 },
    ]);
    // Its own run found the release as wanted: the earlier write is still undone.
    expect(chartRollback(outcome('unchanged', 2, 2), true, [earlier])).toEqual([earlier]);
    expect(chartRollback(outcome('upgraded', 2, 3), false, [earlier])).toEqual([]);
  });

  it.each<[ChartOutcome['action'], string, string]>([
    ['installed', 'Deployed', 'deployed'],
    ['upgraded', 'Deployed', 'deployed'],
    ['unchanged', 'Deployed', 'unchanged'],
    ['skipped', 'Deployed', 'skipped'],
    ['uninstalled', 'Uninstalled', 'uninstalled'],
    ['rolled-back', 'RolledBack', 'rolled-back'],
  ])('%s reads %s in status and %s in progress', (action, phase, state) => {
    const o = outcome(action, 2, 3);
    expect(chartOutcomeStatus(o)).toEqual({
      phase,
      message: `apps/demo-web ${action}`,
      helm: { revision: 3, previous_revision: 2 },
    });
    expect(chartState(o)).toBe(state);
  });
});
