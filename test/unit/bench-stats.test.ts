import { histogramQuantile, median, percentile, ratio, summarize } from '../../bench/stats';
import { selfTimes } from '../../bench/profile';
import { parsePrometheus, histogramFigures } from '../../bench/prometheus';

describe('percentile (linear between closest ranks, as numpy and R by default)', () => {
  it.each([
    ['a single sample is every percentile', [7], 0.99, 7],
    ['p0 is the smallest sample', [3, 1, 2], 0, 1],
    ['p100 is the largest sample', [3, 1, 2], 1, 3],
    ['p50 of an odd count is the middle sample', [5, 1, 3], 0.5, 3],
    ['p50 of an even count is halfway between the middle two', [10, 20, 30, 40], 0.5, 25],
    ['p95 of four samples interpolates between the top two', [10, 20, 30, 40], 0.95, 38.5],
    ['p99 of 1..100 is 99.01', Array.from({ length: 100 }, (_, i) => i + 1), 0.99, 99.01],
    ['unsorted input gives the same answer as sorted', [40, 10, 30, 20], 0.25, 17.5],
    ['negative samples (an early timer) count as they are', [-5, 0, 5], 0.5, 0],
  ])('%s', (_name, samples, q, expected) => {
    expect(percentile(samples, q)).toBeCloseTo(expected, 10);
  });

  it('refuses no samples and a quantile outside 0..1', () => {
    expect(() => percentile([], 0.5)).toThrow('no samples');
    expect(() => percentile([1], 1.5)).toThrow('not between 0 and 1');
    expect(() => percentile([1], NaN)).toThrow('not between 0 and 1');
  });

  it('leaves the samples it was given unsorted', () => {
    const samples = [3, 1, 2];
    percentile(samples, 0.5);
    expect(samples).toEqual([3, 1, 2]);
  });

  it('median is p50', () => {
    expect(median([1, 2, 3, 4])).toBe(2.5);
  });
});

describe('summarize', () => {
  it('gives n, min, p50, p95, p99, max and mean rounded to 0.1', () => {
    expect(summarize([1, 2, 3, 4, 100])).toEqual({
      n: 5,
      min: 1,
      p50: 3,
      p95: 80.8,
      p99: 96.2,
      max: 100,
      mean: 22,
    });
  });

  it('rounds to the digits asked for', () => {
    expect(summarize([0.5, 0.5666], 2)?.p50).toBe(0.53);
  });

  it('is undefined without samples', () => {
    expect(summarize([])).toBeUndefined();
  });

  it('copes with many samples (no spread of a huge array into Math.min)', () => {
    const many = Array.from({ length: 200_000 }, (_, i) => i);
    expect(summarize(many)).toMatchObject({ min: 0, max: 199_999 });
  });
});

describe('ratio', () => {
  it.each([
    ['divides to two decimals', 30_000, 7, 4285.71],
    ['is undefined when the divisor is 0', 1, 0, undefined],
    ['is undefined when a figure is missing', undefined, 2, undefined],
  ])('%s', (_name, a, b, expected) => {
    expect(ratio(a, b)).toBe(expected);
  });
});

describe('histogramQuantile (as PromQL histogram_quantile)', () => {
  const buckets = [
    { le: 0.1, count: 10 },
    { le: 0.25, count: 20 },
    { le: Infinity, count: 20 },
  ];
  it.each([
    ['p50 at the top of the first bucket', 0.5, 0.1],
    ['p75 halfway into the second bucket', 0.75, 0.175],
    ['p25 interpolates from 0 in the first bucket', 0.25, 0.05],
  ])('%s', (_name, q, expected) => {
    expect(histogramQuantile(q, buckets)).toBeCloseTo(expected, 10);
  });

  it('answers the highest finite bound for a rank in the +Inf bucket', () => {
    expect(
      histogramQuantile(0.99, [
        { le: 1, count: 1 },
        { le: Infinity, count: 10 },
      ]),
    ).toBe(1);
  });

  it('is undefined when nothing was observed', () => {
    expect(
      histogramQuantile(0.5, [
        { le: 1, count: 0 },
        { le: Infinity, count: 0 },
      ]),
    ).toBeUndefined();
  });
});

describe('parsePrometheus and histogramFigures', () => {
  const text = [
    '# HELP x_seconds a histogram',
    '# TYPE x_seconds histogram',
    'x_seconds_bucket{le="0.1",kind="a"} 4',
    'x_seconds_bucket{le="0.1",kind="b"} 6',
    'x_seconds_bucket{le="+Inf",kind="a"} 4',
    'x_seconds_bucket{le="+Inf",kind="b"} 6',
    'x_seconds_sum{kind="a"} 0.2',
    'x_seconds_sum{kind="b"} 0.3',
    'x_seconds_count{kind="a"} 4',
    'x_seconds_count{kind="b"} 6',
    'process_max_resident_memory_bytes 1048576',
    'with_quote{msg="say \\"hi\\""} 1',
  ].join('\n');

  it('reads names, labels (unescaped) and values, skipping comments', () => {
    const samples = parsePrometheus(text);
    expect(samples).toHaveLength(10);
    expect(samples.find((s) => s.name === 'with_quote')?.labels).toEqual({ msg: 'say "hi"' });
    expect(samples.find((s) => s.name === 'process_max_resident_memory_bytes')?.value).toBe(1048576);
  });

  it('sums a histogram over its labels', () => {
    expect(histogramFigures(parsePrometheus(text), 'x_seconds')).toEqual({
      count: 10,
      mean: 0.05,
      p50: 0.05,
      p95: 0.095,
      p99: 0.099,
    });
  });
});

describe('selfTimes', () => {
  it('charges each sample’s interval to the function it landed in, largest first', () => {
    const frame = (functionName: string, url = '') => ({ functionName, url, lineNumber: 9 });
    const profile = {
      nodes: [
        { id: 1, callFrame: frame('(idle)') },
        { id: 2, callFrame: frame('encode', 'file:///app/dist/worker/codec.js') },
        { id: 3, callFrame: frame('') },
      ],
      samples: [1, 2, 2, 3, 1],
      timeDeltas: [1000, 2000, 3000, 500, 3500],
      startTime: 0,
      endTime: 10_000,
    };
    expect(selfTimes(profile)).toEqual({
      totalMs: 10,
      functions: [
        { function: '(idle)', ms: 4.5, percent: 45 },
        { function: 'encode codec.js:10', ms: 5, percent: 50 },
        { function: '(anonymous)', ms: 0.5, percent: 5 },
      ].sort((a, b) => b.ms - a.ms),
    });
  });
});
