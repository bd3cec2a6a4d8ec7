/**
 * The figures every benchmark quotes: percentiles over many samples, never a single run.
 * Pure functions, no I/O.
 */

/** Percentiles of a set of samples, in the samples' unit (ms unless said otherwise). */
export interface Summary {
  n: number;
  min: number;
  p50: number;
  p95: number;
  p99: number;
  max: number;
  mean: number;
}

/**
 * The q-quantile (0 ≤ q ≤ 1) of the samples, interpolating linearly between the two closest
 * ranks (Hyndman & Fan type 7, the default of numpy and R): for [10, 20, 30, 40], p50 is 25 and
 * p95 is 38.5; a single sample is every percentile. Throws on no samples or q outside 0..1.
 */
export function percentile(samples: readonly number[], q: number): number {
  if (!samples.length) throw new Error('no samples: a percentile needs at least one');
  if (!(q >= 0 && q <= 1)) throw new Error(`quantile ${q} is not between 0 and 1`);
  const sorted = [...samples].sort((a, b) => a - b);
  const rank = q * (sorted.length - 1);
  const below = Math.floor(rank);
  const above = Math.min(below + 1, sorted.length - 1);
  return sorted[below] + (sorted[above] - sorted[below]) * (rank - below);
}

/** The median (p50) of the samples. */
export function median(samples: readonly number[]): number {
  return percentile(samples, 0.5);
}

/** n, min, p50, p95, p99, max and mean, to `digits` decimals (1); undefined when there are no samples. */
export function summarize(samples: readonly number[], digits = 1): Summary | undefined {
  if (!samples.length) return undefined;
  const r = (x: number) => round(x, digits);
  return {
    n: samples.length,
    min: r(samples.reduce((a, b) => Math.min(a, b))),
    p50: r(percentile(samples, 0.5)),
    p95: r(percentile(samples, 0.95)),
    p99: r(percentile(samples, 0.99)),
    max: r(samples.reduce((a, b) => Math.max(a, b))),
    mean: r(samples.reduce((sum, x) => sum + x, 0) / samples.length),
  };
}

/**
 * The samples' percentiles p0, p1, …, p100 (101 values, min to max), to `digits` decimals: what
 * the results file keeps of a distribution to draw its CDF (bench/plot.ts) without every sample.
 * [10, 20, 30, 40] gives 10, 10.3, 10.6, … 40. Undefined when there are no samples.
 */
export function percentiles(samples: readonly number[], digits = 1): number[] | undefined {
  if (!samples.length) return undefined;
  const sorted = [...samples].sort((a, b) => a - b);
  return Array.from({ length: 101 }, (_, p) => round(percentile(sorted, p / 100), digits));
}

/** One cumulative bucket of a Prometheus histogram: how many observations were ≤ `le`. */
export interface Bucket {
  le: number;
  count: number;
}

/**
 * The q-quantile of a Prometheus histogram, as PromQL's histogram_quantile estimates it: the
 * bucket holding the rank, interpolated linearly from its lower bound (0 for the first bucket);
 * a rank in the +Inf bucket answers the highest finite bound. With 10 observations ≤ 0.1 s and
 * 10 more ≤ 0.25 s, p50 is 0.1 and p75 is 0.175. Undefined when nothing was observed.
 */
export function histogramQuantile(q: number, buckets: readonly Bucket[]): number | undefined {
  const sorted = [...buckets].sort((a, b) => a.le - b.le);
  const total = sorted.at(-1)?.count ?? 0;
  if (total === 0) return undefined;
  const rank = q * total;
  let lower = 0;
  let below = 0;
  for (const bucket of sorted) {
    if (bucket.count >= rank) {
      if (bucket.le === Infinity) return lower;
      const inBucket = bucket.count - below;
      return inBucket === 0 ? bucket.le : lower + (bucket.le - lower) * ((rank - below) / inBucket);
    }
    lower = bucket.le;
    below = bucket.count;
  }
  return lower;
}

/** `x` rounded to `digits` decimals (0.1 by default): what the results file and table show. */
export function round(x: number, digits = 1): number {
  const scale = 10 ** digits;
  return Math.round(x * scale) / scale;
}

/** `a / b` to two decimals, or undefined when either is missing or b is 0. */
export function ratio(a: number | undefined, b: number | undefined): number | undefined {
  return a === undefined || b === undefined || b === 0 ? undefined : round(a / b, 2);
}
