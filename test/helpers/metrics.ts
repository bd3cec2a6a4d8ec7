import type { ProductProcess } from './processes';

/** `http://127.0.0.1:PORT` of a product process's metrics server, from its `metrics listening` line. */
export async function metricsBase(process: ProductProcess): Promise<string> {
  await process.printed('"metrics listening"');
  const line = process
    .output()
    .split('\n')
    .find((l) => l.includes('"metrics listening"'))!;
  return `http://127.0.0.1:${(JSON.parse(line) as { port: number }).port}`;
}
