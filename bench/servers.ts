import { Client, Connection } from '@temporalio/client';
import type { Sizes } from './config';
import type { BenchContext } from './context';
import { runHelmLoop } from './helm-loop';
import { runOverhead } from './overhead';
import { ratio } from './stats';

type Summary = { p50?: number } | undefined;

/** The headline figures of benchmarks 1 and 4 on one Temporal server. */
interface ServerFigures {
  groupTransitionP50Ms?: number;
  manifestTotalP50Ms?: number;
  sequencedApplyP50Ms?: number;
  parallelApplyP50Ms?: number;
}

/** Timed pairs of benchmark 4 per server: fewer than benchmark 4 alone, as it runs twice here. */
const MAX_PAIRS = 3;

/**
 * 6. The Temporal cluster on PostgreSQL against the dev server (SQLite), in one run: benchmark 1
 * (the overhead manifest, stub activities) and benchmark 4's armadactl applies of the examples'
 * manifest (real helm on the sandbox) on each, the dev server first, then the cluster
 * (`BENCH_CLUSTER_TEMPORAL`, started by bench/run.sh as `npm run temporal:up` starts it).
 * Ratios are cluster ÷ dev server: above 1, the cluster is slower.
 */
export async function runServers(ctx: BenchContext, sizes: Sizes): Promise<Record<string, unknown>> {
  const address = process.env.BENCH_CLUSTER_TEMPORAL;
  if (!address)
    throw new Error('benchmark 6 needs the Temporal cluster on PostgreSQL (BENCH_CLUSTER_TEMPORAL)');
  const connection = await Connection.connect({ address });
  const servers = {
    devServer: ctx,
    postgresCluster: { ...ctx, client: new Client({ connection }), temporalAddress: address },
  };
  const figures: Record<string, ServerFigures> = {};
  try {
    for (const [name, server] of Object.entries(servers)) {
      ctx.log(`  on the ${name === 'devServer' ? 'dev server' : 'PostgreSQL cluster'}`);
      const overhead = (await runOverhead(server, sizes.overhead)) as {
        groupTransitionMs?: Summary;
        totalMs?: Summary;
      };
      const helm = (await runHelmLoop(server, { pairs: Math.min(sizes.helm.pairs, MAX_PAIRS) })) as {
        sequenced?: { engineMs?: Summary };
        parallel?: { engineMs?: Summary };
      };
      figures[name] = {
        groupTransitionP50Ms: overhead.groupTransitionMs?.p50,
        manifestTotalP50Ms: overhead.totalMs?.p50,
        sequencedApplyP50Ms: helm.sequenced?.engineMs?.p50,
        parallelApplyP50Ms: helm.parallel?.engineMs?.p50,
      };
    }
  } finally {
    await connection.close();
  }
  const { devServer, postgresCluster } = figures;
  const clusterVsDev = Object.fromEntries(
    (Object.keys(devServer) as (keyof ServerFigures)[]).map((key) => [
      key,
      ratio(postgresCluster[key], devServer[key]),
    ]),
  );
  return {
    what: `benchmark 1 (${sizes.overhead.groups} × ${sizes.overhead.charts}, ${sizes.overhead.runs} runs) and benchmark 4's armadactl applies (${Math.min(sizes.helm.pairs, MAX_PAIRS)} pairs) on each server, the dev server first`,
    devServer,
    postgresCluster,
    clusterVsDev,
  };
}
