import { renderDetails } from '../../workflows/details';
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
