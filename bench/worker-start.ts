import { performance } from 'node:perf_hooks';
import path from 'node:path';
import { WORKER_POLLING } from '../test/helpers/processes';
import type { BenchContext } from './context';
import { repo, startProcess } from './processes';
import { ratio, summarize } from './stats';

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

/**
 * 7. Worker start: from the process's start to its first poll (the "polling" line, printed as it
 * starts polling), each way of WAYS in turn, `starts` times. The worker only polls: no task
 * reaches its queue.
 */
export async function runWorkerStart(
  ctx: BenchContext,
  sizes: { starts: number },
): Promise<Record<string, unknown>> {
  const samples: Record<keyof typeof WAYS, number[]> = {
    npmRunWorkerBefore: [],
    workerBundlingAtStart: [],
    npmRunWorkerNow: [],
  };
  for (let i = 0; i < sizes.starts; i++)
    for (const way of Object.keys(WAYS) as (keyof typeof WAYS)[]) {
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
  const p50 = (way: keyof typeof WAYS) => summarize(samples[way])?.p50;
  ctx.log(
    `  to the first poll, p50: npm run worker before ${p50('npmRunWorkerBefore')} ms, ` +
      `the worker bundling at start ${p50('workerBundlingAtStart')} ms, npm run worker now ${p50('npmRunWorkerNow')} ms`,
  );
  return {
    what: `process start to the first poll, ${sizes.starts} starts of each way, alternated`,
    ways: WAYS,
    toFirstPollMs: Object.fromEntries(Object.entries(samples).map(([way, s]) => [way, summarize(s)])),
    nowVsBefore: ratio(p50('npmRunWorkerNow'), p50('npmRunWorkerBefore')),
    nowVsBundlingAtStart: ratio(p50('npmRunWorkerNow'), p50('workerBundlingAtStart')),
  };
}
