import { BENCHMARK_NUMBERS } from './results';

/**
 * Benchmark sizes, from the environment; the defaults are the sizes issue 9 asks for. Smaller
 * values make a quick check (`BENCH_CHARTS=2 BENCH_CANARIES=20 ... npm run bench`).
 */
function int(name: string, fallback: number, min = 1): number {
  const raw = process.env[name];
  if (raw === undefined || raw === '') return fallback;
  const value = Number(raw);
  if (!Number.isInteger(value) || value < min)
    throw new Error(`${name} must be an integer ≥ ${min}, not "${raw}"`);
  return value;
}

/** A comma-separated list of integers ≥ 1. */
function ints(name: string, fallback: number[]): number[] {
  const raw = process.env[name];
  if (raw === undefined || raw === '') return fallback;
  const values = raw.split(',').map((v) => Number(v.trim()));
  if (!values.every((v) => Number.isInteger(v) && v >= 1))
    throw new Error(`${name} must be integers ≥ 1 separated by commas, not "${raw}"`);
  return values;
}

function choice<T extends string>(name: string, options: readonly T[], fallback: T): T {
  const raw = process.env[name] ?? fallback;
  if (!(options as readonly string[]).includes(raw))
    throw new Error(`${name} must be one of ${options.join(', ')}, not "${raw}"`);
  return raw as T;
}

export function loadSizes() {
  return {
    overhead: {
      /** Groups of the manifest, run strictly in order. */
      groups: int('BENCH_GROUPS', 10),
      /** Charts per group. */
      charts: int('BENCH_CHARTS', 10),
      /** 1: every group deploys its charts one at a time; 0: all at once (the default). */
      sequenced: int('BENCH_SEQUENCED', 0, 0) === 1,
      /** Runs of the whole manifest. */
      runs: int('BENCH_RUNS', 5),
    },
    bridge: {
      /** ArmadaCharts created per round. */
      objects: int('BENCH_BRIDGE_OBJECTS', 1000),
      /** Rounds, each in a fresh namespace with a fresh bridge process. */
      rounds: int('BENCH_BRIDGE_ROUNDS', 1),
      /** Create calls in flight at once: as fast as the API server takes them. */
      createConcurrency: int('BENCH_CREATE_CONCURRENCY', 50),
      /** `stub`: Helm calls return at once (the default; the bridge is measured, not Helm); `real`: the product's worker. */
      helm: choice('BENCH_BRIDGE_HELM', ['stub', 'real'] as const, 'stub'),
    },
    bridgeMemory: {
      /** Helm-labelled ConfigMaps of releases the bridge does not manage, in its drift namespace. */
      unmanaged: int('BENCH_BRIDGE_UNMANAGED', 5000),
      /** Rounds, each with two fresh bridge processes side by side. */
      rounds: int('BENCH_BRIDGE_MEMORY_ROUNDS', 3),
      createConcurrency: int('BENCH_CREATE_CONCURRENCY', 50),
    },
    fleet: {
      /** Standalone ArmadaCharts (and Flux HelmReleases) per round, one size after another. */
      sizes: ints('BENCH_FLEET_SIZES', [100, 1000]),
      /** Rounds per size, the order of armada and Flux alternating. */
      rounds: int('BENCH_FLEET_ROUNDS', 3),
    },
    concurrency: {
      /** Canary workflows running at once on one worker. */
      canaries: int('BENCH_CANARIES', 1000),
      steps: int('BENCH_CANARY_STEPS', 5),
      holdSeconds: int('BENCH_CANARY_HOLD', 2),
      /** Rounds of all the canaries. */
      rounds: int('BENCH_CANARY_ROUNDS', 1),
    },
    helm: {
      /** Rounds per manifest variant (each form once, order rotated), after one untimed warm-up of each. */
      pairs: int('BENCH_PAIRS', 5),
      /** 1: Flux (30 s and 5 s) and helmfile run beside armadactl and the helm loop; 0: only those two. */
      peers: int('BENCH_PEERS', 1, 0) === 1,
      /** Rounds Flux at 30 s runs in (the first ones; 0: none): its run is mostly 30 s requeues. */
      flux30sRounds: int('BENCH_FLUX30_ROUNDS', 2, 0),
    },
    baselineBuild: {
      /** Alternating rounds of HEAD and the baseline build for benchmarks 1 to 3 (each round one whole run of each). */
      rounds: int('BENCH_BASELINE_ROUNDS', 5),
    },
    servers: {
      /** 1: benchmark 6 measures the dev server again rather than take benchmarks 1 and 4 of the same run. */
      devAgain: int('BENCH_SERVERS_DEV_AGAIN', 0, 0) === 1,
    },
    workerStart: {
      /** Starts of each way of starting a worker. */
      starts: int('BENCH_STARTS', 5),
      /** 1: also measure `npm run worker` as before issue 22 (28 s a start); 0: carry its last figure over. */
      before: int('BENCH_WORKER_START_BEFORE', 0, 0) === 1,
    },
    recovery: {
      /** Kills per way of starting the replacement; each kill takes a sample of every kind of activity. */
      kills: int('BENCH_KILLS', 5),
      /** 1: also measure with the timeout options of before issue 22 (30 s heartbeats), as before; 0: carry the last such figures over. */
      before: int('BENCH_RECOVERY_BEFORE', 0, 0) === 1,
      /** 1: the kinds side by side, each on its own worker: 3 × quicker, but the p50s come out lower (not comparable). */
      sideBySide: int('BENCH_RECOVERY_SIDE_BY_SIDE', 0, 0) === 1,
    },
  };
}

export type Sizes = ReturnType<typeof loadSizes>;

/** The benchmarks to run: `BENCH_ONLY=1,3` or arguments `1 3`; all of them by default. */
export function selectedBenchmarks(args: string[]): Set<number> {
  const raw = args.length ? args.join(',') : (process.env.BENCH_ONLY ?? BENCHMARK_NUMBERS.join(','));
  const picked = raw
    .split(/[\s,]+/)
    .filter(Boolean)
    .map(Number);
  for (const n of picked)
    if (!(BENCHMARK_NUMBERS as number[]).includes(n))
      throw new Error(`no benchmark ${n}: pick from ${BENCHMARK_NUMBERS.join(', ')}`);
  return new Set(picked);
}
