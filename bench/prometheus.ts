import { histogramQuantile, round, type Bucket } from './stats';

/** One sample of the Prometheus text format: `name{label="v"} 12.5`. */
export interface PromSample {
  name: string;
  labels: Record<string, string>;
  value: number;
}

/**
 * Parses the Prometheus text exposition format (0.0.4): `name{a="x",b="y"} value`, one a line;
 * comments (`# HELP`, `# TYPE`) skipped, label values unescaped (\\ \" \n). A line that is
 * neither throws: the tests that read the product's /metrics check its format with it.
 */
export function parsePrometheus(text: string): PromSample[] {
  const samples: PromSample[] = [];
  for (const line of text.split('\n')) {
    if (!line.trim() || line.startsWith('#')) continue;
    const match = /^([a-zA-Z_:][a-zA-Z0-9_:]*)(?:\{(.*)\})?\s+(\S+)(?:\s+-?\d+)?$/.exec(line);
    if (!match) throw new Error(`not a sample line: ${line}`);
    const labels: Record<string, string> = {};
    const pairs = /([a-zA-Z_][a-zA-Z0-9_]*)="((?:[^"\\]|\\.)*)",?/y;
    const body = match[2] ?? '';
    while (pairs.lastIndex < body.length) {
      const pair = pairs.exec(body);
      if (!pair) throw new Error(`bad labels: ${line}`);
      labels[pair[1]] = pair[2].replace(/\\(.)/g, (_, c: string) => (c === 'n' ? '\n' : c));
    }
    samples.push({ name: match[1], labels, value: Number(match[3]) });
  }
  return samples;
}

/** The sum of a metric's samples whose labels include `labels`; undefined when there is none. */
export function metricValue(
  samples: readonly PromSample[],
  name: string,
  labels: Record<string, string> = {},
): number | undefined {
  const own = samples.filter(
    (s) => s.name === name && Object.entries(labels).every(([k, v]) => s.labels[k] === v),
  );
  return own.length ? own.reduce((sum, s) => sum + s.value, 0) : undefined;
}

/** A histogram's figures, its buckets summed over every other label. */
export interface HistogramFigures {
  count: number;
  mean?: number;
  p50?: number;
  p95?: number;
  p99?: number;
}

/** Count, mean and bucket-estimated p50/p95/p99 of a histogram (in its own unit), summed over labels. */
export function histogramFigures(samples: readonly PromSample[], name: string): HistogramFigures | undefined {
  const buckets = new Map<number, number>();
  for (const s of samples.filter((x) => x.name === `${name}_bucket`)) {
    const le = s.labels.le === '+Inf' ? Infinity : Number(s.labels.le);
    buckets.set(le, (buckets.get(le) ?? 0) + s.value);
  }
  if (!buckets.size) return undefined;
  const list: Bucket[] = [...buckets].map(([le, count]) => ({ le, count }));
  const count = metricValue(samples, `${name}_count`) ?? 0;
  const sum = metricValue(samples, `${name}_sum`) ?? 0;
  const q = (p: number) => {
    const v = histogramQuantile(p, list);
    return v === undefined ? undefined : round(v, 3);
  };
  return { count, mean: count ? round(sum / count, 3) : undefined, p50: q(0.5), p95: q(0.95), p99: q(0.99) };
}

/** GETs a /metrics endpoint and parses it. */
export async function scrape(url: string): Promise<PromSample[]> {
  const res = await fetch(url);
  if (!res.ok) throw new Error(`GET ${url}: HTTP ${res.status}`);
  return parsePrometheus(await res.text());
}
