import type { ProductProcess } from './processes';

export interface Sample {
  name: string;
  labels: Record<string, string>;
  value: number;
}

/**
 * The samples of a Prometheus text exposition (format 0.0.4): `name{a="x",b="y"} value`, one a
 * line; comments (`# HELP`, `# TYPE`) skipped, label values unescaped (\\ \" \n).
 */
export function parseExposition(text: string): Sample[] {
  const samples: Sample[] = [];
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

/** The sum of the samples `name` whose labels include `labels`; undefined when there is none. */
export function total(
  samples: Sample[],
  name: string,
  labels: Record<string, string> = {},
): number | undefined {
  const matching = samples.filter(
    (s) => s.name === name && Object.entries(labels).every(([k, v]) => s.labels[k] === v),
  );
  return matching.length ? matching.reduce((sum, s) => sum + s.value, 0) : undefined;
}

/** `http://127.0.0.1:PORT` of a product process's metrics server, from its `metrics listening` line. */
export async function metricsBase(process: ProductProcess): Promise<string> {
  await process.printed('"metrics listening"');
  const line = process
    .output()
    .split('\n')
    .find((l) => l.includes('"metrics listening"'))!;
  return `http://127.0.0.1:${(JSON.parse(line) as { port: number }).port}`;
}

/** The samples a product process serves at `base`/metrics now. */
export async function scrape(base: string): Promise<Sample[]> {
  const response = await fetch(`${base}/metrics`);
  if (response.status !== 200) throw new Error(`GET ${base}/metrics answered ${response.status}`);
  return parseExposition(await response.text());
}
