import { fromThisRun } from '../../bench/servers';

const entry = (figures: Record<string, unknown>) => ({ date: '', durationSeconds: 1, sizes: {}, figures });
const overhead = entry({ groupTransitionMs: { n: 45, p50: 420.7 }, totalMs: { n: 5, p50: 10135.8 } });
const helmLoop = entry({
  sequenced: { engineMs: { n: 5, p50: 5390 }, scriptMs: { n: 5, p50: 1546 } },
  parallel: { engineMs: { n: 5, p50: 5289.4 } },
});

describe('fromThisRun (benchmark 6 reuses the dev server figures of benchmarks 1 and 4)', () => {
  it('takes the transition and total p50 from 1 and the armadactl apply p50s from 4', () => {
    expect(fromThisRun({ overhead, helmLoop })).toEqual({
      groupTransitionP50Ms: 420.7,
      manifestTotalP50Ms: 10135.8,
      sequencedApplyP50Ms: 5390,
      parallelApplyP50Ms: 5289.4,
    });
  });

  it.each([
    ['benchmark 4 did not run', { overhead }],
    ['benchmark 1 failed (no figures)', { overhead: { ...overhead, figures: undefined }, helmLoop }],
    ['a variant lacks armadactl’s time', { overhead, helmLoop: entry({ sequenced: {}, parallel: {} }) }],
    ['nothing ran yet', undefined],
  ])('measures the dev server itself when %s', (_name, thisRun) => {
    expect(fromThisRun(thisRun)).toBeUndefined();
  });
});
