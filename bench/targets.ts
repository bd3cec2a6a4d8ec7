import type { ComparedFigure } from './baseline-build';
import type { Results } from './results';
import type { Summary } from './stats';

/**
 * Issue 35's targets table: each figure for the baseline build (the ref deploy/build-at-ref.sh
 * built, measured in the same run) and for HEAD, beside its target. Medians with their p95, drawn
 * from the results file; a figure a run did not measure reads "—".
 */

type Figures = Record<string, unknown>;

const at = (figures: unknown, ...keys: string[]): unknown =>
  keys.reduce<unknown>((v, k) => (v && typeof v === 'object' ? (v as Figures)[k] : undefined), figures);

const num = (v: unknown) => (typeof v === 'number' && Number.isFinite(v) ? v : undefined);
const fixed = (v: number, digits: number) => String(Math.round(v * 10 ** digits) / 10 ** digits);
const seconds = (ms: number) => `${fixed(ms / 1000, 2)} s`;

/** A summary over rounds as "median (p95 x)", each value formatted by `unit`. */
export function medianAndP95(summary: Summary | undefined, unit: (v: number) => string): string {
  return summary ? `${unit(summary.p50)} (p95 ${unit(summary.p95)}, n ${summary.n})` : '—';
}

/** Benchmark 4: a build's median ÷ the helm loop's and ÷ helmfile's, with its own p50 and p95. */
export function applyCell(variant: unknown, form: 'engine' | 'engineBaseline'): string {
  const mine = at(variant, `${form}Ms`) as Summary | undefined;
  const loop = num(at(variant, 'scriptMs', 'p50'));
  if (!mine || !loop) return '—';
  const helmfile = num(at(variant, 'helmfileMs', 'p50'));
  return (
    `${fixed(mine.p50 / loop, 2)}× the loop` +
    (helmfile ? `, ${fixed(mine.p50 / helmfile, 2)}× helmfile` : '') +
    ` (${seconds(mine.p50)}, p95 ${seconds(mine.p95)}, n ${mine.n})`
  );
}

/** A figure benchmark 1, 2 or 3 compared over alternating rounds (runVersusBaseline). */
function comparedCell(
  figures: unknown,
  name: string,
  build: 'HEAD' | 'baseline',
  unit: (v: number) => string,
) {
  const compared = at(figures, 'baselineBuild', 'figures', name) as ComparedFigure | undefined;
  return medianAndP95(compared?.[build], unit);
}

const times = (v: number) => `${fixed(v, 2)}×`;

/** Benchmark 10 at one size: our median ÷ Flux's, with both medians. */
function fleetCell(figures: unknown, size: string): string {
  const ours = num(at(figures, 'armadaMs', 'p50'));
  const flux = num(at(figures, 'fluxMs', 'p50'));
  if (ours === undefined || flux === undefined) return `${size}: —`;
  const n = num(at(figures, 'armadaMs', 'n'));
  return `${size}: ${times(ours / flux)} (${seconds(ours)} vs Flux ${seconds(flux)}, n ${n})`;
}

/** The rows: figure, baseline build, HEAD, target. */
export function targetRows(results: Partial<Results>): string[][] {
  const b = results.benchmarks ?? {};
  const four = b.helmLoop?.figures;
  const one = b.overhead?.figures;
  const two = b.bridge?.figures;
  const three = b.concurrency?.figures;
  const nine = b.bridgeMemory?.figures;
  const ten = b.fleet?.figures;
  const fleetSizes = Object.keys((at(ten, 'sizes') as Figures | undefined) ?? {});
  const objects = num(at(b.bridge?.sizes, 'objects'));
  const canaries = num(at(b.concurrency?.sizes, 'canaries'));
  const startToFirst = (form: 'engine' | 'engineBaseline') =>
    ['sequenced', 'parallel']
      .map((variant) => {
        const summary = at(four, variant, `${form}StartToFirstActivityMs`) as Summary | undefined;
        return summary ? `${variant} ${medianAndP95(summary, seconds)}` : undefined;
      })
      .filter(Boolean)
      .join('; ') || '—';
  const settled = num(at(nine, 'settledRssRatio'));
  return [
    [
      'sequenced apply ÷ helm loop',
      applyCell(at(four, 'sequenced'), 'engineBaseline'),
      applyCell(at(four, 'sequenced'), 'engine'),
      '≤ 1.20×, and below helmfile',
    ],
    [
      'every group parallel ÷ parallel helm loop',
      applyCell(at(four, 'parallel'), 'engineBaseline'),
      applyCell(at(four, 'parallel'), 'engine'),
      '≤ 1.10×, and below helmfile',
    ],
    [
      'group transition, in workflow-task round trips',
      comparedCell(one, 'groupTransitionInRoundTrips', 'baseline', (v) => fixed(v, 2)),
      comparedCell(one, 'groupTransitionInRoundTrips', 'HEAD', (v) => fixed(v, 2)),
      '≤ 2',
    ],
    [
      'armadactl start → the run’s first activity',
      startToFirst('engineBaseline'),
      startToFirst('engine'),
      '≤ 0.25 s (quiet machine)',
    ],
    [
      `${objects ?? '1,000'} ArmadaCharts created → started p99 ÷ bare client loop`,
      comparedCell(two, 'startedP99VsBaseline', 'baseline', times),
      comparedCell(two, 'startedP99VsBaseline', 'HEAD', times),
      '≤ 3×',
    ],
    [
      `${canaries ?? '1,000'} canaries timer lateness p99 ÷ timers only`,
      comparedCell(three, 'timerLatenessP99VsTimersOnly', 'baseline', times),
      comparedCell(three, 'timerLatenessP99VsTimersOnly', 'HEAD', times),
      '≤ 1.5×',
    ],
    [
      'bridge RSS, 5,000 unmanaged Helm-labelled objects ÷ none',
      '— (benchmark 9 is newer than the baseline)',
      settled === undefined ? '—' : times(settled),
      '≤ 1.2×',
    ],
    [
      `${fleetSizes.join(' and ') || '100 and 1,000'} ArmadaCharts apply → all Ready ÷ Flux HelmReleases`,
      '— (benchmark 10 is newer than the baseline)',
      fleetSizes.map((size) => fleetCell(at(ten, 'sizes', size), size)).join('; ') || '—',
      '< 1 at both sizes',
    ],
  ];
}

/** Where and when a run was measured: "Run of DATE: N × CPU, load L at the start." (empty without a machine). */
export function machineLine(results: Partial<Results>): string {
  const machine = results.machine;
  return machine
    ? `Run of ${results.date ?? '?'}: ${machine.cpus} × ${machine.cpuModel}, load ${machine.loadAverage.join(' ')} at the start.`
    : '';
}

/** The targets table's lines, with the baseline build's ref in its header. */
export function targetsTable(results: Partial<Results>): string[] {
  const versus = [results.benchmarks?.overhead, results.benchmarks?.bridge, results.benchmarks?.concurrency]
    .map((e) => at(e?.figures, 'baselineBuild') as { ref?: string; sha?: string } | undefined)
    .find((v) => v?.ref);
  const ref =
    versus?.ref ?? (at(results.benchmarks?.helmLoop?.figures, 'baselineBuild', 'ref') as string | undefined);
  const rows = [
    ['figure', `baseline (${ref ?? 'none'})`, 'HEAD', 'target'],
    ['---', '---', '---', '---'],
    ...targetRows(results),
  ];
  return rows.map((r) => `| ${r.join(' | ')} |`);
}

/** How the targets' figures were taken (under the table). */
export const TARGETS_METHOD =
  'Medians with their p95 and the number of samples beside them: for benchmark 4 the applies of ' +
  'its alternating rounds (every form once per round, order rotated), for benchmarks 1 to 3 ' +
  'the per-round figures of alternating rounds of HEAD and the baseline build.';

/** The table as Markdown, with the baseline build's ref in its header and what was measured under it. */
export function targetsMarkdown(results: Partial<Results>): string {
  return [
    '# Issue 35 targets',
    '',
    ...targetsTable(results),
    '',
    TARGETS_METHOD,
    machineLine(results),
    '',
  ].join('\n');
}
