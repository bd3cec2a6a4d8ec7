import { renderDetails } from '../../workflows/details';
import type { AnyProgress, Progress } from '../../core/progress';
import { literal, logOf, markdownOf, progressView, textOf, waitingOf } from '../../core/plan/progress-view';
import { canaryAtStep2 } from '../helpers/canary-progress';
import { oneGroup } from '../helpers/progress';
import { formatProgress } from '../../runs/progress';
import { STATES } from '../../api/states';
import { statusFor } from '../../core/plan/status';

/** A manifest at its first group: one chart deployed, one failed. */
const manifestRunning: Progress = {
  phase: 'Running',
  group: 'platform',
  groups: [
    {
      name: 'platform',
      sequenced: true,
      state: 'running',
      charts: [
        { chart: 'settings', release: 'demo-settings', namespace: 'demo', state: 'deployed', revision: 3 },
        {
          chart: 'backend',
          release: 'demo-backend',
          namespace: 'demo',
          state: 'failed',
          error: 'wait timed out\nmore',
        },
      ],
    },
    { name: 'apps', sequenced: false, state: 'pending', charts: [] },
  ],
};

const SINCE = '2026-11-22T07:40:00.000Z';

describe('the progress renderer: one view, drawn as markdown (Temporal UI) and as text (armadactl)', () => {
  it.each([
    [
      'a manifest: a table of groups and charts, the revision before the state and its error',
      manifestRunning,
      [
        '**Running**',
        '',
        '| group | chart | release | revision | state |',
        '|---|---|---|---|---|',
        '| platform (sequenced, running) | settings | demo/demo-settings | 3 | deployed |',
        '|  | backend | demo/demo-backend |  | failed: wait timed out |',
        '| apps (parallel, pending) |  |  |  |  |',
        '',
        '2 charts in 2 groups',
        '',
        '\u00a0',
      ],
      [
        'Running',
        '  group                          chart     release             revision  state',
        '  platform (sequenced, running)  settings  demo/demo-settings  3         deployed',
        '                                 backend   demo/demo-backend             failed: wait timed out',
        '  apps (parallel, pending)',
      ],
    ],
    [
      'a canary: a table of steps with their split and times, the current one marked',
      canaryAtStep2,
      [
        '**blog-2: Progressing, step 2 / 3 at 30 % — waiting on approval**',
        '',
        '| step | percent | new/old | hold | started | ready | ended |',
        '|---|---|---|---|---|---|---|',
        '| 1 | 10 % | 1 / 9 | 1m | 07:38:41 | 07:38:42 | 07:39:42 held |',
        '| ▶ 2 | 30 % | 3 / 7 | approval | 07:39:42 |  |  |',
        '| 3 | 100 % | 10 / 0 | - |  |  |  |',
        '',
        '3 steps',
        '',
        '\u00a0',
      ],
      [
        'blog-2: Progressing, step 2/3 at 30 % — waiting on approval',
        '  step  percent  new/old  hold      started   ready     ended',
        '  1     10 %     1/9      1m        07:38:41  07:38:42  07:39:42 held',
        '▶ 2     30 %     3/7      approval  07:39:42',
        '  3     100 %    10/0     -',
      ],
    ],
  ])(
    '%s: the UI details as markdown (slashes between digits spaced: no fractions; the count and a blank line last), status as aligned text',
    (_name, progress, markdown, text) => {
      expect(renderDetails(progress).split('\n')).toEqual(markdown);
      expect(formatProgress(progress)).toEqual(text);
    },
  );

  it('escapes markdown in what a run reports, so an error cannot break the table', () => {
    const charts = [{ ...manifestRunning.groups[0].charts[1], error: 'bad | value_x' }];
    const details = renderDetails({ ...manifestRunning, groups: [{ ...manifestRunning.groups[0], charts }] });
    expect(details).toContain('| failed: bad \\| value\\_x |');
  });

  it('spaces a slash between digits, which the UI would typeset as a fraction, and no other', () => {
    expect(literal('step 1/4: 3/3 available in demo/web-2, 10/0')).toBe(
      'step 1 / 4: 3 / 3 available in demo/web-2, 10 / 0',
    );
  });

  const facts: [string, AnyProgress, string[]][] = [
    [
      'a manifest paused at an approval gate: what it waits on, the gate, and who paused it, why and since when',
      {
        ...manifestRunning,
        phase: 'WaitingApproval',
        waitingOn: 'approve before group apps',
        paused: { by: 'alice', reason: 'lunch', since: SINCE },
        gate: { name: 'before group apps', since: '2026-11-22T07:39:00.000Z' },
      },
      [
        'Paused — waiting on approve before group apps — paused by alice (lunch) since 2026-11-22 07:40:00 UTC',
        'gate "before group apps" waits for approval since 2026-11-22 07:39:00 UTC',
      ],
    ],
    [
      'a manifest with approvals and a refused signal: who, why, when, and why it was refused',
      {
        ...manifestRunning,
        approvals: [{ gate: 'before group apps', by: 'bob', reason: 'green', at: SINCE }],
        refused: [{ verb: 'approve', by: 'eve', why: 'no approval gate is waiting', at: SINCE }],
      },
      [
        'approved "before group apps" by bob (green) at 2026-11-22 07:40:00 UTC',
        'refused approve by eve at 2026-11-22 07:40:00 UTC: no approval gate is waiting',
      ],
    ],
    [
      'a run whose status writes failed: how often and the first line of the last error',
      { ...manifestRunning, statusWriteFailures: { count: 2, last: 'forbidden\nstack' } },
      ['status writes failed 2 times (the run went on); last: forbidden'],
    ],
    [
      'a canary paused in a hold: who, why, since when, and the time of the hold left',
      {
        ...canaryAtStep2,
        waitingOn: 'hold',
        paused: { by: 'ops', reason: 'metrics', since: SINCE, remainingSeconds: 42 },
      },
      ['waiting on hold — paused by ops (metrics) since 2026-11-22 07:40:00 UTC, 42s of the hold left'],
    ],
    [
      'a canary in a hold: until when',
      { ...canaryAtStep2, waitingOn: 'hold', nextStepAt: '2026-11-22T07:40:12.301Z' },
      ['blog-2: Progressing, step 2/3 at 30 % — waiting on hold until 2026-11-22 07:40:12 UTC'],
    ],
    [
      'a canary with traffic.gateway_api: the HTTPRoute weights last set',
      { ...canaryAtStep2, weights: 'HTTPRoute blog rule 0: blog 70 / blog-canary 30' },
      ['traffic: HTTPRoute blog rule 0: blog 70 / blog-canary 30'],
    ],
    [
      'a canary rolled back: the reason and the gate it waited at',
      {
        ...canaryAtStep2,
        phase: 'RolledBack',
        waitingOn: undefined,
        reason: 'analysis failed 3 times',
        gate: { name: 'step 2 (30 %)', since: SINCE },
      },
      [
        'blog-2: RolledBack, step 2/3 at 30 %',
        'reason: analysis failed 3 times',
        'gate "step 2 (30 %)" waits',
      ],
    ],
  ];

  it.each(facts)('%s: the UI, status and the watch log all say it', (_name, progress, said) => {
    const view = progressView(progress);
    for (const fact of said) {
      expect(markdownOf(view)).toContain(literal(fact));
      expect(textOf(view).join('\n')).toContain(fact);
      expect(logOf(view).join('\n')).toContain(fact);
    }
  });

  it.each([
    ['a manifest', manifestRunning],
    ['a canary', canaryAtStep2],
  ])('%s: every cell of the table is in both the markdown and the text row', (_name, progress) => {
    const view = progressView(progress);
    const markdownRows = markdownOf(view)
      .split('\n')
      .slice(-view.rows.length - 4, -4);
    const textRows = textOf(view).slice(-view.rows.length);
    view.rows.forEach((row, i) => {
      for (const cell of row.cells.filter(Boolean)) {
        expect(markdownRows[i]).toContain(literal(cell));
        expect(textRows[i]).toContain(cell);
      }
    });
  });
});

describe('waitingOf: what a run waits on, in a phrase for armadactl list', () => {
  const deploying = oneGroup('Running', { web: 'deploying', api: 'deploying', db: 'deployed' });
  it.each<[string, AnyProgress, string]>([
    [
      'a manifest at its approval gate',
      { ...manifestRunning, phase: 'WaitingApproval', waitingOn: 'approve before group apps' },
      'waiting on approve before group apps',
    ],
    ['a manifest deploying charts: the charts in flight', deploying, 'waiting on web, api deploying'],
    ['a manifest between charts: nothing', manifestRunning, ''],
    [
      'a canary in a hold: until when',
      { ...canaryAtStep2, waitingOn: 'hold', nextStepAt: '2026-11-22T07:40:12.301Z' },
      'waiting on hold until 2026-11-22 07:40:12 UTC',
    ],
    [
      'a paused run: the pause too',
      { ...deploying, paused: { by: 'ops', since: SINCE } },
      'waiting on web, api deploying — paused by ops since 2026-11-22 07:40:00 UTC',
    ],
  ])('%s', (_name, progress, said) => {
    expect(waitingOf(progress)).toBe(said);
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
    ['a paused run is reconciling: a resume moves it on', 'Paused', RECONCILING],
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
    expect(Object.keys(STATES).filter((phase) => !covered.has(phase))).toEqual([]);
  });

  it('shows the phase in lower case as actual_state', () => {
    expect(statusFor('RolledBack', 'm').actual_state).toBe('rolledback');
  });
});
