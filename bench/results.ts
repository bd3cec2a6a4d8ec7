import { mkdir, readFile, writeFile } from 'node:fs/promises';
import path from 'node:path';
import type { Machine } from './machine';
import { repo } from './processes';
import type { Summary } from './stats';
import { targetsMarkdown } from './targets';

/** One benchmark's figures as the results file keeps them. */
export interface BenchmarkResult {
  date: string;
  durationSeconds: number;
  sizes: unknown;
  figures?: Record<string, unknown>;
  error?: string;
}

export interface Results {
  date: string;
  machine: Machine;
  benchmarks: Partial<Record<BenchmarkKey, BenchmarkResult>>;
}

export const BENCHMARKS = {
  1: 'overhead',
  2: 'bridge',
  3: 'concurrency',
  4: 'helmLoop',
  5: 'profile',
  6: 'servers',
  7: 'workerStart',
  8: 'recovery',
  9: 'bridgeMemory',
  10: 'fleet',
} as const;

/** The benchmark numbers, in order. */
export const BENCHMARK_NUMBERS = Object.keys(BENCHMARKS).map(Number) as (keyof typeof BENCHMARKS)[];
export type BenchmarkKey = (typeof BENCHMARKS)[keyof typeof BENCHMARKS];

/** The results file: `BENCH_OUT`, default bench/results/latest.json. */
export const resultsFilePath = () => path.resolve(repo, process.env.BENCH_OUT ?? 'bench/results/latest.json');

/** A benchmark's entry in the results file as it stands before this run writes it, if any. */
export async function previousEntry(key: BenchmarkKey): Promise<BenchmarkResult | undefined> {
  return readFile(resultsFilePath(), 'utf8')
    .then((text) => (JSON.parse(text) as Partial<Results>).benchmarks?.[key])
    .catch(() => undefined);
}

/**
 * Writes the results file (`BENCH_OUT`, default bench/results/latest.json), formatted as the
 * project's Prettier check wants it. Benchmarks not run this time keep their previous entry
 * (each has its own date), so `npm run bench -- 3` refreshes one figure without losing the rest.
 */
export async function writeResults(file: string, results: Results): Promise<void> {
  let previous: Partial<Results> = {};
  try {
    previous = JSON.parse(await readFile(file, 'utf8')) as Results;
  } catch {
    // no previous results
  }
  const merged: Results = { ...results, benchmarks: { ...previous.benchmarks, ...results.benchmarks } };
  await mkdir(path.dirname(file), { recursive: true });
  const { format, resolveConfig } = await prettier();
  const options = (await resolveConfig(file)) ?? {};
  await writeFile(file, await format(JSON.stringify(merged), { ...options, filepath: file }));
}

/**
 * Prettier, loaded when a file is written: loading it runs a dynamic import, which Jest refuses,
 * and the tests that read these figures (the docs' freshness test) write none.
 */
const prettier = () => import('prettier');

/** Writes issue 35's targets table (targets.md) next to the results file, formatted as Prettier wants it. */
export async function writeTargets(resultsFile: string, results: Partial<Results>): Promise<string> {
  const file = path.join(path.dirname(resultsFile), 'targets.md');
  const { format, resolveConfig } = await prettier();
  const options = (await resolveConfig(file)) ?? {};
  await writeFile(file, await format(targetsMarkdown(results), { ...options, filepath: file }));
  return file;
}

type Figures = Record<string, unknown>;

const get = (figures: Figures | undefined, ...keys: string[]): unknown =>
  keys.reduce<unknown>((v, k) => (v && typeof v === 'object' ? (v as Figures)[k] : undefined), figures);

const ms = (v: unknown) => (typeof v === 'number' ? `${v} ms` : '—');
const pct = (s: unknown, a: keyof Summary, b: keyof Summary) => {
  const summary = s as Summary | undefined;
  return summary ? `${ms(summary[a])} / ${ms(summary[b])}` : '—';
};
const times = (v: unknown) => (typeof v === 'number' ? `${v}×` : '—');
const mib = (v: unknown) => (typeof v === 'number' ? `${v} MiB` : '—');
const met = (target: unknown) => {
  const t = target as { met?: boolean } | undefined;
  return t?.met === undefined ? '' : t.met ? 'met' : 'missed';
};

/** Benchmark 4's peers: the form's name in the figures (`<name>Ms`, the ratios' keys), and a label. */
const PEERS = [
  ['engineBaseline', 'baseline build'],
  ['flux30s', 'Flux (30 s)'],
  ['flux5s', 'Flux (5 s)'],
  ['helmfile', 'helmfile'],
] as const;

/** The headline figures, one row each: benchmark, figure, value, target and whether it was met. */
export function summaryRows(results: Results): string[][] {
  const rows: string[][] = [];
  const b = results.benchmarks;
  const one = b.overhead?.figures;
  if (one) {
    rows.push([
      '1 overhead',
      'group transition p50 / p95',
      pct(one.groupTransitionMs, 'p50', 'p95'),
      'p50 ≤ 1.5 round trips',
      met(one.target),
    ]);
    rows.push([
      '1 overhead',
      'workflow-task round trip p50 / p95 (bare workflow)',
      pct(one.workflowTaskRoundTripMs, 'p50', 'p95'),
      '',
      '',
    ]);
    rows.push([
      '1 overhead',
      'group transition p50 in round trips',
      times(get(one, 'groupTransitionInRoundTrips')),
      '≤ 1.5×',
      '',
    ]);
    rows.push(['1 overhead', 'manifest total p50', ms(get(one, 'totalMs', 'p50')), '', '']);
    rows.push([
      '1 overhead',
      "a group's turn → its charts' first step p50 / p95",
      pct(one.turnToChartStartMs, 'p50', 'p95'),
      '',
      '',
    ]);
    rows.push([
      '1 overhead',
      'Flux 30 s / transition p50',
      times(get(one, 'peerRatios', 'fluxDependsOn30sVsTransitionP50')),
      '',
      '',
    ]);
    rows.push([
      '1 overhead',
      'Argo CD 2 s / transition p50',
      times(get(one, 'peerRatios', 'argoCdWave2sVsTransitionP50')),
      '',
      '',
    ]);
    rows.push([
      '1 overhead',
      'Argo Workflows 14 s / two-chart run',
      times(get(one, 'peerRatios', 'argoWorkflows14sVsTwoChartManifest')),
      '',
      '',
    ]);
  }
  const two = b.bridge?.figures;
  if (two) {
    rows.push([
      '2 bridge',
      'created → started p50 / p99',
      pct(two.createdToStartedMs, 'p50', 'p99'),
      'p99 ≤ 250 ms',
      met(two.target),
    ]);
    rows.push([
      '2 bridge',
      'created → first status p50 / p99',
      pct(two.createdToFirstStatusMs, 'p50', 'p99'),
      '',
      '',
    ]);
    rows.push([
      '2 bridge',
      'baseline (bare client loop) request → started p50 / p99',
      pct(two.baselineRequestToStartedMs, 'p50', 'p99'),
      '',
      '',
    ]);
    rows.push([
      '2 bridge',
      'created → started p99 / baseline p99 (median of rounds)',
      times(two.startedP99VsBaseline),
      '≤ 1.5×',
      met({ met: get(two, 'target', 'baselineMet') }),
    ]);
    rows.push(['2 bridge', 'bridge peak RSS', mib(two.bridgePeakRssMiB), '', '']);
    rows.push(['2 bridge', 'worker peak RSS', mib(two.workerPeakRssMiB), '', '']);
  }
  const nine = b.bridgeMemory?.figures;
  if (nine) {
    rows.push([
      '9 bridge memory',
      'bridge RSS, unmanaged Helm objects / none (settled; peak)',
      `${times(nine.settledRssRatio)}; ${times(nine.peakRssRatio)}`,
      '≤ 1.2×',
      met(nine.target),
    ]);
  }
  const ten = b.fleet?.figures;
  for (const [size, figures] of Object.entries((ten?.sizes ?? {}) as Record<string, Figures>))
    rows.push([
      '10 fleet',
      `${size} ArmadaCharts → all deployed / Flux HelmReleases → all Ready (medians)`,
      `${times(figures.armadaVsFlux)} (${ms(get(figures, 'armadaMs', 'p50'))} vs ${ms(get(figures, 'fluxMs', 'p50'))})`,
      '< 1',
      met({ met: typeof figures.armadaVsFlux === 'number' && figures.armadaVsFlux < 1 }),
    ]);
  const three = b.concurrency?.figures;
  if (three) {
    rows.push([
      '3 concurrency',
      'timer lateness p50 / p99',
      pct(three.timerLatenessMs, 'p50', 'p99'),
      'p99 ≤ 500 ms',
      met(three.target),
    ]);
    rows.push([
      '3 concurrency',
      'timers only: timer lateness p50 / p99',
      pct(get(three, 'timersOnly', 'timerLatenessMs'), 'p50', 'p99'),
      '',
      '',
    ]);
    rows.push([
      '3 concurrency',
      'timer lateness p99: canary / timers only',
      times(three.timerLatenessP99VsTimersOnly),
      '≤ 1.5×',
      '',
    ]);
    rows.push(['3 concurrency', 'wall time / ideal (p50 of rounds)', times(three.wallVsIdeal), '', '']);
    rows.push([
      '3 concurrency',
      'worker peak RSS: canary / timers only',
      `${mib(three.workerPeakRssMiB)} / ${mib(get(three, 'timersOnly', 'workerPeakRssMiB'))}`,
      '≤ 1536 MiB',
      '',
    ]);
    rows.push([
      '3 concurrency',
      'workflow task execution p50: canary / timers only',
      `${ms(get(three, 'workflowTaskExecutionMs', 'p50'))} / ${ms(get(three, 'timersOnly', 'workflowTaskExecutionMs', 'p50'))}`,
      '',
      '',
    ]);
    rows.push([
      '3 concurrency',
      'workflow task schedule → start p50 / p99',
      pct(three.workflowTaskScheduleToStartMs, 'p50', 'p99'),
      '',
      '',
    ]);
  }
  const four = b.helmLoop?.figures;
  if (four) {
    for (const variant of ['sequenced', 'parallel']) {
      const v = four[variant] as Figures | undefined;
      if (!v) continue;
      rows.push([
        '4 vs helm',
        `${variant}: armadactl / script (medians)`,
        `${times(v.ratioOfMedians)} (${ms(get(v, 'engineMs', 'p50'))} vs ${ms(get(v, 'scriptMs', 'p50'))})`,
        variant === 'sequenced' ? '≤ 1.15×, < helmfile, Flux 5 s' : '≤ 0.7×, < helmfile, Flux 5 s',
        met(v.target),
      ]);
      for (const [peer, label] of PEERS)
        if (get(v, `${peer}Ms`))
          rows.push([
            '4 vs helm',
            `${variant}: ${label} / script; armadactl / ${label} (medians)`,
            `${times(get(v, 'vsScriptRatioOfMedians', peer))} (${ms(get(v, `${peer}Ms`, 'p50'))}); ${times(get(v, 'engineVsPeerRatioOfMedians', peer))}`,
            '',
            '',
          ]);
    }
  }
  const five = b.profile?.figures;
  if (five) {
    rows.push([
      '5 profile',
      'group transition p50: before / after the fix',
      `${ms(get(five, 'groupTransitionP50Ms', 'beforeFix'))} / ${ms(get(five, 'groupTransitionP50Ms', 'afterFix'))}`,
      '',
      '',
    ]);
    const top = (
      get(five, 'workerProfile', 'functions') as { function: string; percent: number }[] | undefined
    )?.[0];
    rows.push([
      '5 profile',
      'worker CPU, top function',
      top ? `${top.function} (${top.percent} %)` : '—',
      '',
      '',
    ]);
  }
  const six = b.servers?.figures;
  if (six)
    for (const [key, label] of [
      ['groupTransitionP50Ms', 'group transition p50'],
      ['manifestTotalP50Ms', 'overhead manifest total p50'],
      ['sequencedApplyP50Ms', 'examples, sequenced apply p50'],
      ['parallelApplyP50Ms', 'examples, parallel apply p50'],
    ] as const)
      rows.push([
        '6 servers',
        `${label}: PostgreSQL / dev server`,
        `${times(get(six, 'clusterVsDev', key))} (${ms(get(six, 'postgresCluster', key))} vs ${ms(get(six, 'devServer', key))})`,
        '',
        '',
      ]);
  const seven = b.workerStart?.figures;
  if (seven)
    rows.push([
      '7 worker start',
      'to the first poll p50: npm run worker now / before',
      `${times(get(seven, 'nowVsBefore'))} (${ms(get(seven, 'toFirstPollMs', 'npmRunWorkerNow', 'p50'))} vs ${ms(get(seven, 'toFirstPollMs', 'npmRunWorkerBefore', 'p50'))}; bundling at start ${ms(get(seven, 'toFirstPollMs', 'workerBundlingAtStart', 'p50'))})`,
      '< 2 s',
      '',
    ]);
  const eight = b.recovery?.figures;
  if (eight)
    for (const kind of Object.keys((get(eight, 'kinds') as Record<string, unknown> | undefined) ?? {}))
      rows.push([
        '8 recovery',
        `${kind}: first poll → retried attempt p50 / p95 (replacement at once)`,
        `${ms(get(eight, 'kinds', kind, 'now.atOnce', 'p50'))} / ${ms(get(eight, 'kinds', kind, 'now.atOnce', 'p95'))}; before issue 22 ${ms(get(eight, 'kinds', kind, 'beforeIssue22.atOnce', 'p50'))} / ${ms(get(eight, 'kinds', kind, 'beforeIssue22.atOnce', 'p95'))}; replacement 10 s late ${ms(get(eight, 'kinds', kind, 'now.delayed', 'p50'))}`,
        '≤ 5 s',
        '',
      ]);
  for (const [key, result] of Object.entries(b))
    if (result?.error) rows.push([key, 'failed', result.error.split('\n')[0], '', '']);
  return rows;
}

/** Rows as an aligned plain-text table with a header. */
export function formatTable(rows: string[][]): string {
  const all = [['benchmark', 'figure', 'value', 'target', ''], ...rows];
  const widths = all[0].map((_, c) => Math.max(...all.map((r) => (r[c] ?? '').length)));
  return all
    .map((r) =>
      r
        .map((cell, c) => cell.padEnd(widths[c]))
        .join('  ')
        .trimEnd(),
    )
    .join('\n');
}
