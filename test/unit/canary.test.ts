import { splitAt, stepSplits } from '../../workflows/plan/canary';

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

describe('stepSplits', () => {
  it("gives the Deployer operator's example 1/9, 3/7, 6/4, 10/0", () => {
    expect(stepSplits(10, [10, 30, 60, 100]).map((s) => `${s.canary}/${s.stable}`)).toEqual([
      '1/9',
      '3/7',
      '6/4',
      '10/0',
    ]);
  });

  it('adds the implied final 100 % step', () => {
    expect(stepSplits(10, [10, 30, 60]).map((s) => s.percent)).toEqual([10, 30, 60, 100]);
  });
});
