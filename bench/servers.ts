import { Client, Connection } from '@temporalio/client';
import { randomUUID } from 'node:crypto';
import { mkdtemp, rm } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import path from 'node:path';
import { applicableDocuments } from '../cli/documents';
import { planManifest } from '../core/plan/manifest';
import { startRealWorker } from './bridge';
import type { Sizes } from './config';
import type { BenchContext } from './context';
import { manifestFile, timed, uninstall } from './helm-loop';
import { runOverhead } from './overhead';
import type { BenchmarkResult } from './results';
import { ratio, summarize, type Summary } from './stats';

/** The headline figures of benchmarks 1 and 4 on one Temporal server. */
interface ServerFigures {
  groupTransitionP50Ms?: number;
  manifestTotalP50Ms?: number;
  sequencedApplyP50Ms?: number;
  parallelApplyP50Ms?: number;
}

/** Timed applies per variant and server: fewer than benchmark 4's pairs, as it runs twice here. */
const MAX_APPLIES = 3;

type Figures = Record<string, unknown>;
const p50 = (figures: Figures | undefined, ...keys: string[]): number | undefined => {
  const value = keys.reduce<unknown>(
    (v, k) => (v && typeof v === 'object' ? (v as Figures)[k] : undefined),
    figures,
  );
  return typeof value === 'number' ? value : undefined;
};

/**
 * The dev server's figures as benchmarks 1 and 4 measured them earlier in this run (the same
 * manifest, worker and command on the same dev server), or undefined when either did not run or
 * lacks a figure.
 */
export function fromThisRun(earlier: BenchContext['thisRun']): ServerFigures | undefined {
  const overhead = earlier?.overhead?.figures;
  const helm = earlier?.helmLoop?.figures;
  const figures: ServerFigures = {
    groupTransitionP50Ms: p50(overhead, 'groupTransitionMs', 'p50'),
    manifestTotalP50Ms: p50(overhead, 'totalMs', 'p50'),
    sequencedApplyP50Ms: p50(helm, 'sequenced', 'engineMs', 'p50'),
    parallelApplyP50Ms: p50(helm, 'parallel', 'engineMs', 'p50'),
  };
  return Object.values(figures).every((v) => v !== undefined) ? figures : undefined;
}

/**
 * Benchmark 4's A side alone: `armadactl apply -f <manifest> --wait` of the examples' manifest
 * in both variants against the product's worker, one untimed warm-up, then `applies` timed, every
 * release uninstalled (untimed) before each. Neither the serial script nor a peer runs: their
 * time does not depend on the Temporal server.
 */
async function armadactlApplies(
  ctx: BenchContext,
  applies: number,
): Promise<Record<string, Summary | undefined>> {
  const dir = await mkdtemp(path.join(tmpdir(), 'armada-bench-servers-'));
  const worker = await startRealWorker(ctx, `bench-servers-${randomUUID().slice(0, 8)}`);
  try {
    const times: Record<string, Summary | undefined> = {};
    for (const variant of ['sequenced', 'parallel'] as const) {
      const file = await manifestFile(dir, variant);
      const docs = await applicableDocuments(file, 'default');
      if (docs.kind !== 'ArmadaManifest') throw new Error(`${file} has no ArmadaManifest`);
      const plan = planManifest(docs.manifest);
      const apply = async () => {
        await uninstall(plan);
        return timed(process.execPath, ['bin/armadactl.js', 'apply', '-f', file, '--wait'], {
          TEMPORAL_ADDRESS: ctx.temporalAddress,
          ARMADA_TASK_QUEUE: worker.taskQueue,
        });
      };
      await apply();
      const ms: number[] = [];
      for (let i = 0; i < applies; i++) ms.push(await apply());
      await uninstall(plan);
      times[variant] = summarize(ms);
      ctx.log(`  ${variant}: armadactl apply --wait p50 ${times[variant]?.p50} ms (${applies} applies)`);
    }
    return times;
  } finally {
    await worker.stop();
    await rm(dir, { recursive: true, force: true });
  }
}

/** Benchmark 1 and benchmark 4's applies on one server. */
async function measure(server: BenchContext, sizes: Sizes, applies: number): Promise<ServerFigures> {
  const overhead = (await runOverhead(server, sizes.overhead)) as Figures;
  const helm = await armadactlApplies(server, applies);
  return {
    groupTransitionP50Ms: p50(overhead, 'groupTransitionMs', 'p50'),
    manifestTotalP50Ms: p50(overhead, 'totalMs', 'p50'),
    sequencedApplyP50Ms: helm.sequenced?.p50,
    parallelApplyP50Ms: helm.parallel?.p50,
  };
}

/**
 * 6. The Temporal cluster on PostgreSQL against the dev server (SQLite): benchmark 1 (the
 * overhead manifest, stub activities) and benchmark 4's armadactl applies of the examples'
 * manifest (real helm on the sandbox) on the cluster (`BENCH_CLUSTER_TEMPORAL`, started by
 * bench/run.sh as `npm run temporal:up` starts it). The dev server's side is benchmarks 1 and 4
 * of this run when they ran (the same measurements on the same server: no need to repeat them),
 * else (or with `devAgain`, BENCH_SERVERS_DEV_AGAIN=1) measured here first, as the cluster is.
 * Ratios are cluster ÷ dev server: above 1, the cluster is slower.
 */
export async function runServers(
  ctx: BenchContext,
  sizes: Sizes & { servers: { devAgain: boolean } },
): Promise<Record<string, unknown>> {
  const address = process.env.BENCH_CLUSTER_TEMPORAL;
  if (!address)
    throw new Error('benchmark 6 needs the Temporal cluster on PostgreSQL (BENCH_CLUSTER_TEMPORAL)');
  const applies = Math.min(sizes.helm.pairs, MAX_APPLIES);
  const earlier = sizes.servers.devAgain ? undefined : fromThisRun(ctx.thisRun);
  let devServer = earlier;
  if (!devServer) {
    ctx.log('  on the dev server');
    devServer = await measure(ctx, sizes, applies);
  } else ctx.log('  on the dev server: the figures of benchmarks 1 and 4 of this run');
  ctx.log('  on the PostgreSQL cluster');
  const connection = await Connection.connect({ address });
  let postgresCluster: ServerFigures;
  try {
    postgresCluster = await measure(
      { ...ctx, client: new Client({ connection }), temporalAddress: address },
      sizes,
      applies,
    );
  } finally {
    await connection.close();
  }
  const clusterVsDev = Object.fromEntries(
    (Object.keys(devServer) as (keyof ServerFigures)[]).map((key) => [
      key,
      ratio(postgresCluster[key], devServer[key]),
    ]),
  );
  const onCluster = `benchmark 1 (${sizes.overhead.groups} × ${sizes.overhead.charts}, ${sizes.overhead.runs} runs) and ${applies} armadactl applies per variant`;
  return {
    what: earlier
      ? `${onCluster} on the cluster; the dev server's figures are benchmarks 1 and 4 of the same run (${sizes.helm.pairs} pairs)`
      : `${onCluster} on each server, the dev server first`,
    devServerFrom: earlier ? 'benchmarks 1 and 4 of this run' : 'measured here',
    devServer,
    postgresCluster,
    clusterVsDev,
  };
}

/** This run's entries so far, for benchmark 6 (bench/main.ts fills it as benchmarks finish). */
export type ThisRun = Partial<Record<'overhead' | 'helmLoop', BenchmarkResult>>;
