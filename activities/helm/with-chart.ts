import { mkdtemp, rm, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import path from 'node:path';
import { chartOnThisWorker } from '../charts/prepare';
import { chartValues } from '../values/read';
import { runHelm, type HelmResult } from './exec';
import type { ChartRequest } from '../../core/contracts/helm';

/**
 * Runs helm on a request's chart with its values, as `req.actAs`: the chart found on this worker
 * (chartOnThisWorker), the values read and merged (chartValues) and written to `values.json` in a
 * fresh directory; `args` builds the command line from the chart's path and that file. mkdtemp
 * makes the directory 0700: the values file, Secrets' values included, is this process's alone,
 * and gone when helm is. A failure that quotes a string from `values_from` comes back redacted.
 */
export async function runHelmWithChart(
  req: ChartRequest,
  args: (chartPath: string, valuesFile: string) => string[],
): Promise<HelmResult> {
  const chartPath = await chartOnThisWorker(req.chart);
  const { values, redact } = await chartValues(req.values, req.valuesFrom);
  const dir = await mkdtemp(path.join(tmpdir(), 'armada-values-'));
  try {
    const valuesFile = path.join(dir, 'values.json');
    await writeFile(valuesFile, JSON.stringify(values), { mode: 0o600 });
    return await runHelm(args(chartPath, valuesFile), req.actAs).catch((err: unknown) => {
      throw redact(err);
    });
  } finally {
    await rm(dir, { recursive: true, force: true });
  }
}
