import { renderCanaryDetails, renderDetails } from '../../workflows/details';
import { canaryAtStep2 } from '../helpers/canary-progress';
import { statusFor } from '../../workflows/plan/status';

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
  it.each([
    ['Deployed', 'deployed', true, ['True', 'False', 'False']],
    ['Running', 'running', false, ['False', 'True', 'False']],
    ['Failed', 'failed', false, ['False', 'False', 'True']],
    ['RolledBack', 'rolledback', false, ['False', 'False', 'True']],
    ['Uninstalled', 'uninstalled', true, ['True', 'False', 'False']],
  ])('phase %s is %s, satisfied %s, Ready/Progressing/Failed %j', (phase, state, satisfied, conditions) => {
    const status = statusFor(phase, 'm');
    expect(status.actual_state).toBe(state);
    expect(status.satisfied).toBe(satisfied);
    expect(status.conditions.map((c) => [c.type, c.status])).toEqual(
      ['Ready', 'Progressing', 'Failed'].map((t, i) => [t, conditions[i]]),
    );
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
