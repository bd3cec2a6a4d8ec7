import {
  afterWait,
  canarySteps,
  capacityReplicas,
  continuedRun,
  DEFAULT_HISTORY_LIMIT,
  formatSeconds,
  historyFull,
  holdTimerMs,
  nextWaitMs,
  restoreScales,
  splitAt,
  stepScales,
} from '../../core/plan/canary';

describe('splitAt', () => {
  it.each([
    // [total, percent, canary, stable]
    [10, 10, 1, 9],
    [10, 30, 3, 7],
    [10, 60, 6, 4],
    [10, 100, 10, 0],
    [1, 1, 1, 0], // any share of one replica is that replica
    [1, 99, 1, 0],
    [1, 100, 1, 0],
    [3, 1, 1, 2], // at least one canary once the percent is above 0
    [3, 33, 1, 2], // 0.99 rounds up to 1
    [3, 99, 3, 0], // 2.97 rounds up to 3
    [3, 100, 3, 0],
    [7, 1, 1, 6],
    [7, 33, 3, 4], // 2.31 → 3
    [7, 99, 7, 0], // 6.93 → 7
    [7, 100, 7, 0],
    [10, 0, 0, 10], // 0 % is the stable state
    [0, 50, 0, 0], // nothing to split
  ])('%i replicas at %i %% → %i canary, %i stable', (total, percent, canary, stable) => {
    expect(splitAt(total, percent)).toEqual({ percent, canary, stable });
  });

  it.each([
    [-1, 10],
    [2.5, 10],
    [10, 101],
    [10, -5],
  ])('refuses %p replicas at %p %%', (total, percent) => {
    expect(() => splitAt(total, percent)).toThrow(RangeError);
  });
});

describe('capacityReplicas: R, never below what the stable side runs now', () => {
  it.each([
    // [case, inputs, R]
    ['a stable scaled above the chart keeps its live count', { rendered: 4, live: 10 }, 10], // 10 %: 1/9
    ['a stable at the chart’s count keeps the chart’s count', { rendered: 4, live: 4 }, 4], // 10 %: 1/3
    ['a stable scaled below the chart gets the chart’s count', { rendered: 4, live: 2 }, 4], // 10 %: 1/3
    ['an HPA’s minimum above both is the floor', { rendered: 4, live: 4, hpaMin: 6 }, 6], // 10 %: 1/5
    ['a live count above the HPA’s minimum wins', { rendered: 4, live: 10, hpaMin: 6 }, 10], // 10 %: 1/9
    ['a chart above both the live count and the HPA wins', { rendered: 8, live: 5, hpaMin: 3 }, 8], // 10 %: 1/7
    ['a Deployment the revision adds takes the chart’s count', { rendered: 3 }, 3], // 10 %: 1 canary, no stable
    ['a chart without replicas counts as 1', {}, 1], // 10 %: 1 canary, no stable
    ['a chart without replicas follows the live stable', { live: 5 }, 5], // 10 %: 1/4
    ['a chart at 0 beside no stable stays at 0', { rendered: 0 }, 0], // 10 %: nothing to split
    ['a stable scaled to 0 under a chart at 0 stays at 0', { rendered: 0, live: 0 }, 0], // 10 %: 0/0
  ])('%s', (_case, inputs, replicas) => {
    expect(capacityReplicas(inputs)).toBe(replicas);
  });
});

describe('canarySteps', () => {
  it('turns sleeps into seconds and adds the implied final 100 % step', () => {
    expect(
      canarySteps([
        { percent: 10, sleep: '1m30s' },
        { percent: 30, approval: true },
        { percent: 60, sleep: 20 },
      ]),
    ).toEqual([
      { percent: 10, holdSeconds: 90 },
      { percent: 30, approval: true },
      { percent: 60, holdSeconds: 20 },
      { percent: 100 },
    ]);
  });

  it('keeps a final 100 % step as given', () => {
    expect(canarySteps([{ percent: 50 }, { percent: 100, sleep: '5m' }])).toEqual([
      { percent: 50 },
      { percent: 100, holdSeconds: 300 },
    ]);
  });
});

describe('stepScales and restoreScales', () => {
  const pairs = [
    { canary: 'web-2', stable: 'web-1', replicas: 10, stableReplicas: 10 },
    { canary: 'worker-canary', stable: 'worker', replicas: 3, stableReplicas: 5 },
    { canary: 'cache-canary', stable: null, replicas: 2, stableReplicas: 0 },
  ];

  it("gives the Deployer operator's example 1/9, 3/7, 6/4, 10/0", () => {
    const steps = canarySteps([{ percent: 10 }, { percent: 30 }, { percent: 60 }]);
    const web = steps.map((step) => stepScales(pairs.slice(0, 1), step.percent));
    expect(web.map(({ canary, stable }) => `${canary[0].replicas}/${stable[0].replicas}`)).toEqual([
      '1/9',
      '3/7',
      '6/4',
      '10/0',
    ]);
  });

  it('scales every pair at a step; a new Deployment has no old side to scale', () => {
    expect(stepScales(pairs, 33)).toEqual({
      canary: [
        { name: 'web-2', replicas: 4 },
        { name: 'worker-canary', replicas: 1 },
        { name: 'cache-canary', replicas: 1 },
      ],
      stable: [
        { name: 'web-1', replicas: 6 },
        { name: 'worker', replicas: 2 },
      ],
    });
  });

  it('restores the old side to its replicas from before the canary', () => {
    expect(restoreScales(pairs)).toEqual([
      { name: 'web-1', replicas: 10 },
      { name: 'worker', replicas: 5 },
    ]);
  });
});

describe('formatSeconds', () => {
  it.each([
    [0, '0s'],
    [1.5, '1.5s'],
    [30, '30s'],
    [60, '1m'],
    [90, '1m30s'],
    [3600, '1h'],
    [5430, '1h30m30s'],
  ])('%d s reads %s', (seconds, text) => {
    expect(formatSeconds(seconds)).toBe(text);
  });
});

describe('nextWaitMs and afterWait: the time left of a hold', () => {
  it('waits until the hold ends or the next check, whichever comes first', () => {
    expect(nextWaitMs({ remainingMs: 6000 })).toBe(6000);
    expect(nextWaitMs({ remainingMs: 30_000, untilCheckMs: 10_000 })).toBe(10_000);
    expect(nextWaitMs({ remainingMs: 4000, untilCheckMs: 10_000 })).toBe(4000);
    expect(nextWaitMs({})).toBe(Infinity); // an approval without a timeout
  });

  it('counts a fired timer as its full length, however little the workflow clock moved', () => {
    // A restarted worker that replayed the run for a query saw a 6 s hold fire 404 ms in.
    expect(afterWait({ remainingMs: 6000 }, 6000, true, 404)).toEqual({ remainingMs: 0 });
    expect(afterWait({ remainingMs: 6000 }, 6000, true, 6093)).toEqual({ remainingMs: 0 });
    expect(afterWait({ remainingMs: 30_000, untilCheckMs: 10_000 }, 10_000, true, 9_500)).toEqual({
      remainingMs: 20_000,
      untilCheckMs: 0,
    });
  });

  it('counts an interrupted wait (a pause) as what the clock measured', () => {
    expect(afterWait({ remainingMs: 6000, untilCheckMs: 2000 }, 2000, false, 1200)).toEqual({
      remainingMs: 4800,
      untilCheckMs: 800,
    });
    expect(afterWait({}, Infinity, false, 5000)).toEqual({});
  });
});

describe('holdTimerMs: a timer that ends at the deadline shown', () => {
  it('is shorter by the status write that showed the deadline', () => {
    expect(holdTimerMs(30_000, 0)).toBe(30_000);
    expect(holdTimerMs(30_000, 1_071)).toBe(28_929);
  });

  it('is never 0 or less, however long the write took', () => {
    expect(holdTimerMs(1_000, 1_000)).toBe(1);
    expect(holdTimerMs(1_000, 7_000)).toBe(1);
  });

  it('ignores a write that measured less than nothing (a clock stepped back)', () => {
    expect(holdTimerMs(5_000, -300)).toBe(5_000);
  });
});

describe('historyFull: when a run continues as new', () => {
  it.each([
    // [events, server suggests, limit, continue as new]
    [9_999, false, undefined, false], // the default limit, 10,000, not reached
    [10_000, false, undefined, true],
    [51_199, false, undefined, true], // long past it (a worker that was down): at once
    [59, false, 60, false], // a run's own limit, as the tests set it
    [60, false, 60, true],
    [200, true, undefined, true], // the server's hint (its count, or the history's bytes) counts too
    [200, true, 60_000, true],
  ])('%i events, suggested %s, limit %s → %s', (length, suggested, limit, full) => {
    expect(historyFull({ length, suggested }, limit)).toBe(full);
  });

  it("defaults to 10,000 events, far below the server's 51,200", () => {
    expect(DEFAULT_HISTORY_LIMIT).toBe(10_000);
  });
});

describe('continuedRun: the input a run continues as', () => {
  it('is the same input with where it resumes and what its control carries', () => {
    const run = { title: 'web', steps: [{ percent: 10, approval: true }], historyLimit: 60 };
    const resume = { step: 0, left: { untilCheckMs: 400 } };
    const carried = { paused: { by: 'ann', since: '2026-01-01T00:00:00.000Z' } };
    expect(continuedRun(run, resume, carried)).toEqual({ ...run, resume, carried });
  });

  it('replaces what the run before carried, never merges it', () => {
    const run = { title: 'web', resume: { step: 0 }, carried: { paused: { since: 'then' } } };
    expect(continuedRun(run, { step: 1 }, {})).toEqual({ title: 'web', resume: { step: 1 }, carried: {} });
  });
});
