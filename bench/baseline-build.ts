import path from 'node:path';
import type { BenchContext } from './context';
import { summarize, type Summary } from './stats';

/**
 * The baseline build of `npm run bench`: the checkout at BENCH_BASELINE_REF, built by
 * deploy/build-at-ref.sh into .tools/builds/<sha>/ (its own dist/: worker, bridge, armadactl,
 * workflow bundle, and its own benchmark code). Its processes run on task queues of their own
 * against the same Temporal dev server and sandbox as HEAD's, in rounds alternating with HEAD's.
 */
export interface Baseline {
  /** The ref as given (default 0171bf6, the commit before issue 35's redesign). */
  ref: string;
  sha: string;
  /** Its checkout: `<root>/dist/...` are its compiled processes. */
  root: string;
  /** Its workflow bundle, for its workers. */
  bundlePath: string;
}

/** The baseline bench/run.sh built (BENCH_BASELINE_DIR), if any. */
export function baselineFromEnv(env: NodeJS.ProcessEnv = process.env): Baseline | undefined {
  const root = env.BENCH_BASELINE_DIR;
  if (!root) return undefined;
  return {
    ref: env.BENCH_BASELINE_REF || '0171bf6',
    sha: path.basename(root),
    root,
    bundlePath: path.join(root, 'dist', 'workflow-bundle.js'),
  };
}

/** The context a baseline benchmark runs in: the same server, client and sandbox, its own bundle. */
export function baselineContext(ctx: BenchContext, baseline: Baseline): BenchContext {
  return { ...ctx, bundlePath: baseline.bundlePath };
}

/**
 * A compiled benchmark module of the baseline (`<root>/dist/bench/<name>.js`): its own code
 * measures its own build, so a benchmark whose requests or workflow shapes changed since the
 * baseline still measures it as it was. Its `repo` is its own checkout, so the processes it
 * starts are the baseline's.
 */
export function baselineModule(baseline: Baseline, name: string): Record<string, unknown> {
  // eslint-disable-next-line @typescript-eslint/no-require-imports -- a module of another build, found at run time
  return require(path.join(baseline.root, 'dist', 'bench', `${name}.js`)) as Record<string, unknown>;
}

export type Build = 'HEAD' | 'baseline';

/** Which build runs first in round `r` (0-based): HEAD, then the baseline first, and so on. */
export function buildOrder(r: number): Build[] {
  return r % 2 === 0 ? ['HEAD', 'baseline'] : ['baseline', 'HEAD'];
}

type Figures = Record<string, unknown>;

/** A figure inside a benchmark's figures, by its path (`['groupTransitionMs', 'p50']`). */
export function figureAt(figures: Figures | undefined, at: readonly string[]): number | undefined {
  const value = at.reduce<unknown>(
    (v, k) => (v && typeof v === 'object' ? (v as Figures)[k] : undefined),
    figures,
  );
  return typeof value === 'number' && Number.isFinite(value) ? value : undefined;
}

/** One compared figure: each build's value per round, and their summaries (median, p95). */
export interface ComparedFigure {
  HEAD: Summary | undefined;
  baseline: Summary | undefined;
  perRound: { HEAD: (number | undefined)[]; baseline: (number | undefined)[] };
}

/**
 * The compared figures of alternating rounds: each named figure (a path into a benchmark's
 * figures) read from every round of each build, summarized over the rounds.
 */
export function compareRounds(
  rounds: readonly Record<Build, Figures>[],
  figures: Record<string, readonly string[]>,
): Record<string, ComparedFigure> {
  return Object.fromEntries(
    Object.entries(figures).map(([name, at]) => {
      const of = (build: Build) => rounds.map((r) => figureAt(r[build], at));
      const summary = (values: (number | undefined)[]) =>
        summarize(
          values.filter((v): v is number => v !== undefined),
          2,
        );
      const head = of('HEAD');
      const baseline = of('baseline');
      return [name, { HEAD: summary(head), baseline: summary(baseline), perRound: { HEAD: head, baseline } }];
    }),
  );
}

/** How a benchmark runs beside the baseline: its module, and the figures compared. */
export interface VersusSpec {
  /** The module under bench/ (and the baseline's dist/bench/) and its runner's export name. */
  module: string;
  runner: string;
  /** Compared figures: name → path into the runner's figures. */
  figures: Record<string, readonly string[]>;
  /**
   * Top-level figures of the baseline's last round to keep beside HEAD's, prefixed
   * `baselineBuild` (`groupTransitionMs` → `baselineBuildGroupTransitionMs`): what bench/plot.ts
   * draws for HEAD, it then draws for the baseline too.
   */
  plotted?: readonly string[];
}

type RunnerFn = (ctx: BenchContext, sizes: unknown) => Promise<Figures>;

/**
 * A benchmark in `rounds` alternating rounds of HEAD and the baseline (buildOrder), each round
 * one whole run of each build's own benchmark code at the configured sizes. Returns HEAD's
 * figures of its last round (so the summary table and the plots keep their shape), with
 * `baselineBuild`: the compared figures over all rounds, and the baseline's last figures.
 */
export async function runVersusBaseline(
  ctx: BenchContext,
  baseline: Baseline,
  rounds: number,
  head: RunnerFn,
  spec: VersusSpec,
  /** The sizes the baseline's runner takes, as HEAD's gets them. */
  sizes: unknown,
): Promise<Figures> {
  const theirs = baselineModule(baseline, spec.module)[spec.runner];
  if (typeof theirs !== 'function')
    throw new Error(`the baseline ${baseline.ref} has no ${spec.runner} in dist/bench/${spec.module}.js`);
  const run: Record<Build, RunnerFn> = {
    HEAD: head,
    baseline: (c, s) => (theirs as RunnerFn)(baselineContext(c, baseline), s),
  };
  const results: Record<Build, Figures>[] = [];
  for (let r = 0; r < rounds; r++) {
    const round = {} as Record<Build, Figures>;
    for (const build of buildOrder(r)) {
      ctx.log(`  round ${r + 1}/${rounds}: ${build === 'HEAD' ? 'HEAD' : `baseline ${baseline.ref}`}`);
      round[build] = await run[build](ctx, sizes);
    }
    results.push(round);
  }
  const last = results.at(-1)!;
  return {
    ...last.HEAD,
    ...Object.fromEntries(
      (spec.plotted ?? []).map((key) => [
        `baselineBuild${key[0].toUpperCase()}${key.slice(1)}`,
        last.baseline[key],
      ]),
    ),
    baselineBuild: {
      ref: baseline.ref,
      sha: baseline.sha,
      rounds,
      figures: compareRounds(results, spec.figures),
      baselineLastRound: last.baseline,
    },
  };
}
