import { PLOT_FILES } from '../bench/plot';
import { summaryRows, type Results } from '../bench/results';
import { machineLine, TARGETS_METHOD, targetsTable } from '../bench/targets';
import { table } from './table';

/** The figures of bench/results/latest.json: the headline table and the plots drawn from it. */
export function benchmarkFigures(results: Results, plotsFrom: string): string {
  return [
    table(['benchmark', 'figure', 'value', 'target', 'met'], summaryRows(results)).join('\n'),
    machineLine(results),
    `![End to end per engine: p50 bars, p95 whiskers (benchmark 4)](${plotsFrom}/${PLOT_FILES.endToEnd})`,
    `![Group transition latency, cumulative distribution (benchmark 1)](${plotsFrom}/${PLOT_FILES.transitions})`,
  ]
    .filter(Boolean)
    .join('\n\n');
}

/** Issue 35's targets table (as bench/results/issue35/targets.md has it) from its results file. */
export function benchmarkTargets(results: Partial<Results>): string {
  return [targetsTable(results).join('\n'), `${TARGETS_METHOD} ${machineLine(results)}`.trim()].join('\n\n');
}
