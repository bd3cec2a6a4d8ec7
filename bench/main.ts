import { Client, Connection } from '@temporalio/client';
import { DefaultLogger, Runtime } from '@temporalio/worker';
import { readFile } from 'node:fs/promises';
import path from 'node:path';
import { startTemporal } from '../test/helpers/temporal';
import { baselineFromEnv, runVersusBaseline, type VersusSpec } from './baseline-build';
import { runBridge } from './bridge';
import { runBridgeMemory } from './bridge-memory';
import { runConcurrency } from './concurrency';
import { loadSizes, selectedBenchmarks, type Sizes } from './config';
import type { BenchContext } from './context';
import { runFleet } from './fleet';
import { runHelmLoop } from './helm-loop';
import { describeMachine } from './machine';
import { runOverhead } from './overhead';
import { writePlots } from './plot';
import { runProfile } from './profile';
import { runServers } from './servers';
import { targetsMarkdown } from './targets';
import { runRecovery } from './recovery';
import { runWorkerStart } from './worker-start';
import { repo } from './processes';
import {
  BENCHMARKS,
  BENCHMARK_NUMBERS,
  formatTable,
  resultsFilePath,
  summaryRows,
  writeResults,
  writeTargets,
  type BenchmarkResult,
  type Results,
} from './results';

const log = (line: string) => console.log(line);

type Runner = (ctx: BenchContext, sizes: Sizes) => Promise<Record<string, unknown>>;

interface BenchmarkRunner {
  title: string;
  sizes: (s: Sizes) => unknown;
  run: Runner;
  /** With a baseline build: how the benchmark runs beside it (alternating rounds, compared figures). */
  versus?: VersusSpec;
}

const runners: Record<keyof typeof BENCHMARKS, BenchmarkRunner> = {
  1: {
    title: 'orchestration overhead',
    sizes: (s) => s.overhead,
    run: (ctx, s) => runOverhead(ctx, s.overhead),
    versus: {
      module: 'overhead',
      runner: 'runOverhead',
      figures: {
        groupTransitionInRoundTrips: ['groupTransitionInRoundTrips'],
        groupTransitionP50Ms: ['groupTransitionMs', 'p50'],
        workflowTaskRoundTripP50Ms: ['workflowTaskRoundTripMs', 'p50'],
      },
      plotted: ['groupTransitionMs', 'groupTransitionPercentilesMs'],
    },
  },
  2: {
    title: 'bridge latency',
    sizes: (s) => s.bridge,
    run: (ctx, s) => runBridge(ctx, s.bridge),
    versus: {
      module: 'bridge',
      runner: 'runBridge',
      figures: {
        startedP99VsBaseline: ['startedP99VsBaseline'],
        createdToStartedP99Ms: ['createdToStartedMs', 'p99'],
        bareLoopRequestToStartedP99Ms: ['baselineRequestToStartedMs', 'p99'],
      },
    },
  },
  3: {
    title: 'concurrency',
    sizes: (s) => s.concurrency,
    run: (ctx, s) => runConcurrency(ctx, s.concurrency),
    versus: {
      module: 'concurrency',
      runner: 'runConcurrency',
      figures: {
        timerLatenessP99VsTimersOnly: ['timerLatenessP99VsTimersOnly'],
        timerLatenessP99Ms: ['timerLatenessMs', 'p99'],
        timersOnlyTimerLatenessP99Ms: ['timersOnly', 'timerLatenessMs', 'p99'],
      },
    },
  },
  4: {
    title: 'end to end against plain Helm',
    sizes: (s) => s.helm,
    run: (ctx, s) => runHelmLoop(ctx, s.helm),
  },
  5: { title: 'profile and improve', sizes: (s) => s.overhead, run: runProfile },
  6: {
    title: 'PostgreSQL cluster against the dev server',
    sizes: (s) => ({ overhead: s.overhead, helm: s.helm, servers: s.servers }),
    run: runServers,
  },
  7: {
    title: 'worker start',
    sizes: (s) => s.workerStart,
    run: (ctx, s) => runWorkerStart(ctx, s.workerStart),
  },
  8: { title: 'crash recovery', sizes: (s) => s.recovery, run: (ctx, s) => runRecovery(ctx, s.recovery) },
  9: {
    title: 'bridge memory',
    sizes: (s) => s.bridgeMemory,
    run: (ctx, s) => runBridgeMemory(ctx, s.bridgeMemory),
  },
  10: { title: 'a fleet against Flux', sizes: (s) => s.fleet, run: (ctx, s) => runFleet(ctx, s.fleet) },
};

/**
 * `npm run bench` (through bench/run.sh, which builds the tools and dist/ and starts the sandbox
 * for benchmarks 2, 4, 6, 8 and 9, and the Temporal cluster on PostgreSQL for 6): starts a Temporal dev server of its own, runs the selected
 * benchmarks, writes bench/results/latest.json and prints a summary table.
 */
async function main(): Promise<number> {
  const selected = selectedBenchmarks(process.argv.slice(2));
  const sizes = loadSizes();
  const file = resultsFilePath();
  Runtime.install({ logger: new DefaultLogger('WARN') });
  const machine = await describeMachine();
  log(
    `bench: ${machine.cpus} × ${machine.cpuModel}, ${machine.memoryGiB} GiB, Node.js ${machine.node}, ` +
      `Linux ${machine.kernel}, load ${machine.loadAverage.join(' ')}`,
  );

  const temporal = await startTemporal();
  const connection = await Connection.connect({ address: temporal.address });
  const results: Results = { date: new Date().toISOString(), machine, benchmarks: {} };
  let failed = 0;
  try {
    // The build's bundle (bench/run.sh runs npm run build first).
    const bundlePath = path.join(repo, 'dist', 'workflow-bundle.js');
    const ctx: BenchContext = {
      client: new Client({ connection }),
      temporalAddress: temporal.address,
      bundlePath,
      kubeconfig: process.env.KUBECONFIG,
      baseline: baselineFromEnv(),
      thisRun: results.benchmarks,
      log,
    };
    for (const n of BENCHMARK_NUMBERS) {
      if (!selected.has(n)) continue;
      const runner = runners[n];
      log(`\nbench ${n}: ${runner.title}`);
      const t0 = Date.now();
      // With a baseline build, benchmarks that compare builds run in alternating rounds of both.
      const versus = ctx.baseline && runner.versus;
      const entry: BenchmarkResult = {
        date: new Date().toISOString(),
        durationSeconds: 0,
        sizes: versus
          ? { ...(runner.sizes(sizes) as object), baselineBuildRounds: sizes.baselineBuild.rounds }
          : runner.sizes(sizes),
      };
      try {
        entry.figures =
          ctx.baseline && versus
            ? await runVersusBaseline(
                ctx,
                ctx.baseline,
                sizes.baselineBuild.rounds,
                (c) => runner.run(c, sizes),
                versus,
                runner.sizes(sizes),
              )
            : await runner.run(ctx, sizes);
      } catch (err) {
        failed++;
        entry.error = err instanceof Error ? (err.stack ?? err.message) : String(err);
        log(`bench ${n} failed: ${entry.error}`);
      }
      entry.durationSeconds = Math.round((Date.now() - t0) / 100) / 10;
      log(`bench ${n}: ${entry.durationSeconds} s`);
      results.benchmarks[BENCHMARKS[n]] = entry;
      await writeResults(file, results);
    }
  } finally {
    await connection.close();
    await temporal.server.stop();
  }
  log(`\n${formatTable(summaryRows(results))}\n\nresults: ${path.relative(repo, file)}`);
  // The plots (end-to-end.png, transitions.png) are drawn from the file, next to it.
  const plots = await writePlots(file).catch((err: unknown) => {
    failed++;
    log(`plots failed: ${err instanceof Error ? (err.stack ?? err.message) : String(err)}`);
    return [];
  });
  if (plots.length) log(`plots: ${plots.map((p) => path.relative(repo, p)).join(', ')}`);
  // Issue 35's targets table, from the whole results file (benchmarks not run keep their figures).
  const merged = JSON.parse(await readFile(file, 'utf8')) as Results;
  log(`\n${targetsMarkdown(merged)}`);
  log(`targets: ${path.relative(repo, await writeTargets(file, merged))}`);
  return failed ? 1 : 0;
}

main().then(
  (code) => process.exit(code),
  (err: unknown) => {
    console.error(`bench: ${err instanceof Error ? (err.stack ?? err.message) : String(err)}`);
    process.exit(1);
  },
);
