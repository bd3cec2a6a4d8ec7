import { baselineFromEnv, buildOrder, compareRounds, figureAt } from '../../bench/baseline-build';

describe('the baseline build beside HEAD', () => {
  it('alternates which build runs first, round by round', () => {
    expect([0, 1, 2, 3].map(buildOrder)).toEqual([
      ['HEAD', 'baseline'],
      ['baseline', 'HEAD'],
      ['HEAD', 'baseline'],
      ['baseline', 'HEAD'],
    ]);
  });

  it('takes the build run.sh made from the environment, and none without it', () => {
    expect(baselineFromEnv({})).toBeUndefined();
    expect(
      baselineFromEnv({ BENCH_BASELINE_DIR: '/r/.tools/builds/abc123', BENCH_BASELINE_REF: 'v1' }),
    ).toEqual({
      ref: 'v1',
      sha: 'abc123',
      root: '/r/.tools/builds/abc123',
      bundlePath: '/r/.tools/builds/abc123/dist/workflow-bundle.js',
    });
    expect(baselineFromEnv({ BENCH_BASELINE_DIR: '/x/0171bf6aa' })?.ref).toBe('0171bf6');
  });

  it('reads a figure by its path, only when it is a finite number', () => {
    const figures = { a: { p50: 3 }, b: 'x', c: { p50: NaN } };
    expect(figureAt(figures, ['a', 'p50'])).toBe(3);
    expect(figureAt(figures, ['b'])).toBeUndefined();
    expect(figureAt(figures, ['c', 'p50'])).toBeUndefined();
    expect(figureAt(figures, ['missing', 'p50'])).toBeUndefined();
  });

  it('summarizes each figure over the rounds, per build, skipping rounds that lack it', () => {
    const rounds = [
      { HEAD: { ratio: 1 }, baseline: { ratio: 10 } },
      { HEAD: { ratio: 3 }, baseline: { ratio: 30 } },
      { HEAD: { ratio: 2 }, baseline: {} },
    ];
    const { ratio } = compareRounds(rounds, { ratio: ['ratio'] });
    expect(ratio.HEAD).toMatchObject({ n: 3, p50: 2, min: 1, max: 3 });
    expect(ratio.baseline).toMatchObject({ n: 2, p50: 20 });
    expect(ratio.perRound).toEqual({ HEAD: [1, 3, 2], baseline: [10, 30, undefined] });
  });
});
