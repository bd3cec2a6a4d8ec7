import { performance } from 'node:perf_hooks';
import path from 'node:path';
import { WORKER_POLLING } from '../test/helpers/processes';
import type { BenchContext } from './context';
import { repo, startProcess } from './processes';
import { previousEntry } from './results';
import { ratio, summarize, type Summary } from './stats';

/**
 * How each way of starting a worker is run: `npm run worker` before issue 22 (tsc, then a worker
 * that bundles the workflows with webpack), the worker alone bundling at start, and `npm run
 * worker` now (a build that finds nothing stale, then a worker given the build's bundle). As
 * shell commands without npm itself, which adds the same to each.
 */
const WAYS = {
  npmRunWorkerBefore:
    'node node_modules/typescript/bin/tsc -p tsconfig.json && exec node dist/worker/main.js',
  workerBundlingAtStart: 'ARMADA_WORKFLOW_BUNDLE= exec node dist/worker/main.js',
  npmRunWorkerNow: `bash deploy/build.sh && ARMADA_WORKFLOW_BUNDLE=${path.join(repo, 'dist', 'workflow-bundle.js')} exec node dist/worker/main.js`,
} as const;

type Way = keyof typeof WAYS;
const BEFORE: Way = 'npmRunWorkerBefore';

/**
 * The before-issue-22 way's figure as the results file last measured it, with that date: carried
 * into a run that does not measure it again (its five starts took 2.5 minutes, to measure what
 * is history). Undefined when the file has none.
 */
async function lastBeforeFigure(): Promise<{ measuredAt: string; summary: Summary } | undefined> {
  const previous = await previousEntry('workerStart');
  const figures = previous?.figures as
    { toFirstPollMs?: Record<string, Summary>; beforeMeasuredAt?: string } | undefined;
  const summary = figures?.toFirstPollMs?.[BEFORE];
  return previous && summary && { measuredAt: figures.beforeMeasuredAt ?? previous.date, summary };
}

/**
 * 7. Worker start: from the process's start to its first poll (the "polling" line, printed as it
 * starts polling), each way of WAYS in turn, `starts` times. The worker only polls: no task
 * reaches its queue. The way of before issue 22 is measured only with `before`
 * (BENCH_WORKER_START_BEFORE=1); else its last figure is carried over with its date.
 */
export async function runWorkerStart(
  ctx: BenchContext,
  sizes: { starts: number; before: boolean },
): Promise<Record<string, unknown>> {
  const carried = sizes.before ? undefined : await lastBeforeFigure();
  const samples: Record<Way, number[]> = {
    npmRunWorkerBefore: [],
    workerBundlingAtStart: [],
    npmRunWorkerNow: [],
  };
  const ways = (Object.keys(WAYS) as Way[]).filter((way) => way !== BEFORE || !carried);
  for (let i = 0; i < sizes.starts; i++)
    for (const way of ways) {
      const t0 = performance.now();
      const worker = startProcess('bash', ['-c', WAYS[way]], {
        TEMPORAL_ADDRESS: ctx.temporalAddress,
        ARMADA_TASK_QUEUE: `bench-start-${i}`,
        ARMADA_METRICS_PORT: '0',
      });
      try {
        await worker.printed(WORKER_POLLING);
        samples[way].push(performance.now() - t0);
      } finally {
        await worker.stop();
      }
    }
  const toFirstPollMs = Object.fromEntries(
    Object.entries(samples).map(([way, s]) => [
      way,
      way === BEFORE && carried ? carried.summary : summarize(s),
    ]),
  ) as Record<Way, Summary | undefined>;
  const p50 = (way: Way) => toFirstPollMs[way]?.p50;
  ctx.log(
    `  to the first poll, p50: npm run worker before ${p50(BEFORE)} ms${carried ? ` (of ${carried.measuredAt})` : ''}, ` +
      `the worker bundling at start ${p50('workerBundlingAtStart')} ms, npm run worker now ${p50('npmRunWorkerNow')} ms`,
  );
  return {
    what: `process start to the first poll, ${sizes.starts} starts of each way, alternated${carried ? `; ${BEFORE} not measured again (BENCH_WORKER_START_BEFORE=1 does): its figure is of beforeMeasuredAt` : ''}`,
    ways: WAYS,
    toFirstPollMs,
    ...(carried && { beforeMeasuredAt: carried.measuredAt }),
    nowVsBefore: ratio(p50('npmRunWorkerNow'), p50('npmRunWorkerBefore')),
    nowVsBundlingAtStart: ratio(p50('npmRunWorkerNow'), p50('workerBundlingAtStart')),
  };
}
