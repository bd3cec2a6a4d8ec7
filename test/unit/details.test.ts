import { renderCanaryDetails, renderDetails } from '../../workflows/details';
import { canaryAtStep2 } from '../helpers/canary-progress';
import { PHASES, statusFor } from '../../workflows/plan/status';

describe('renderDetails', () => {
  it('renders groups and charts as a markdown table with states and revisions', () => {
    const text = renderDetails({
      phase: 'Running',
      groups: [
        {
          name: 'platform',
          sequenced: true,
          state: 'running',
          charts: [
            {
              chart: 'settings',
              release: 'demo-settings',
              namespace: 'demo',
              state: 'deployed',
              revision: 3,
            },
            {
              chart: 'backend',
              release: 'demo-backend',
              namespace: 'demo',
              state: 'failed',
              error: 'wait timed out\nmore',
            },
          ],
        },
      ],
    });
    expect(text.split('\n')).toEqual([
      '**Running**',
      '',
      '| group | chart | release | state | revision |',
      '|---|---|---|---|---|',
      '| platform (sequenced, running) | settings | demo/demo-settings | deployed | 3 |',
      '|  | backend | demo/demo-backend | failed: wait timed out |  |',
    ]);
  });
});

describe('statusFor', () => {
  // Ready, Reconciling, Stalled (kstatus)
  const READY = ['True', 'False', 'False'] as const;
  const RECONCILING = ['False', 'True', 'False'] as const;
  const STALLED = ['False', 'False', 'True'] as const;
  const cases = [
    ['a manifest run deploying its groups is reconciling', 'Running', RECONCILING],
    ['a group or chart run deploying is reconciling', 'Deploying', RECONCILING],
    ['a run uninstalling is reconciling', 'Uninstalling', RECONCILING],
    ['a manifest waiting for an approval is reconciling, not stalled', 'WaitingApproval', RECONCILING],
    ['a canary between steps is reconciling', 'Progressing', RECONCILING],
    ['a manifest rolling back is reconciling until the rollback ends', 'RollingBack', RECONCILING],
    ['a deployed object is ready and satisfied', 'Deployed', READY],
    ['an uninstalled object is ready and satisfied', 'Uninstalled', READY],
    ['a failed run leaves its object stalled', 'Failed', STALLED],
    ['a rolled-back run leaves its object stalled', 'RolledBack', STALLED],
    ['a group stopped before all its charts ran is stalled', 'Stopped', STALLED],
    ['a phase this table does not know reads as reconciling, never as ready', 'Promoting', RECONCILING],
  ] as const;

  it.each(cases)('%s (%s)', (_, phase, [ready, reconciling, stalled]) => {
    const status = statusFor(phase, 'm');
    expect(status.satisfied).toBe(ready === 'True');
    expect(status.conditions.map((c) => [c.type, c.status, c.reason, c.message])).toEqual([
      ['Ready', ready, phase, 'm'],
      ['Reconciling', reconciling, phase, 'm'],
      ['Stalled', stalled, phase, 'm'],
      // kept beside kstatus's: Progressing as Reconciling, Failed as Stalled
      ['Progressing', reconciling, phase, 'm'],
      ['Failed', stalled, phase, 'm'],
    ]);
  });

  it('has a case above for every phase it knows', () => {
    const covered = new Set<string>(cases.map((c) => c[1]));
    expect(Object.keys(PHASES).filter((phase) => !covered.has(phase))).toEqual([]);
  });

  it('shows the phase in lower case as actual_state', () => {
    expect(statusFor('RolledBack', 'm').actual_state).toBe('rolledback');
  });
});

describe('renderCanaryDetails', () => {
  const progress = canaryAtStep2;

  it('shows the phase, what the step waits for, and one row per step with its split', () => {
    expect(renderCanaryDetails(progress).split('\n')).toEqual([
      '**blog-2: Progressing**, step 2/3 at 30 % — waiting on approval',
      '',
      '| step | percent | new / old | hold | started | ready | ended |',
      '|---|---|---|---|---|---|---|',
      '| 1 | 10 % | 1 / 9 | 1m | 2026-11-22T07:38:41.000Z | 2026-11-22T07:38:42.000Z | 2026-11-22T07:39:42.000Z (held) |',
      '| ▶ 2 | 30 % | 3 / 7 | approval | 2026-11-22T07:39:42.000Z |  |  |',
      '| 3 | 100 % | 10 / 0 |  |  |  |  |',
    ]);
  });

  it('says a paused canary is paused, by whom, and how much of the hold is left', () => {
    const paused = {
      ...progress,
      paused: { by: 'ops', reason: 'metrics', since: 'x', remainingSeconds: 42 },
    };
    expect(renderCanaryDetails(paused).split('\n')[0]).toBe(
      '**blog-2: Progressing**, step 2/3 at 30 % — **paused** by ops (metrics), 42s of the hold left',
    );
  });
});
