import { randomUUID } from 'node:crypto';
import type { CanaryRun, canaryWorkflow } from '../workflows/canary';
import type { Sizes } from './config';
import { startStubWorker, type BenchContext } from './context';
import {
  activityScheduleToStart,
  fetchEvents,
  mapLimit,
  runSpan,
  timerLateness,
  workflowTaskLatencies,
} from './history';
import { mib } from './overhead';
import { ratio, summarize } from './stats';

/** Workflow starts (and later history reads) in flight at once from the driver. */
const CLIENT_CONCURRENCY = 50;

/** A canary of `steps` steps evenly up to 100 %, each held `holdSeconds`: 5 steps → 20, 40, 60, 80, 100 %. */
export function canaryRun(namespace: string, steps: number, holdSeconds: number): CanaryRun {
  return {
    title: `bench ${namespace}`,
    namespace,
    pairs: [{ canary: 'web-new', stable: 'web-old', replicas: 10, stableReplicas: 10 }],
    steps: Array.from({ length: steps }, (_, i) => ({
      percent: Math.round(((i + 1) * 100) / steps),
      holdSeconds,
    })),
  };
}

interface RoundFigures {
  /** First start requested → last start answered, ms. */
  startPhaseMs: number;
  /** First workflow started → last one closed, ms (server times). */
  wallMs: number;
  workflowMs: number[];
  timerResumedLateness: number[];
  timerFiredLateness: number[];
  wftScheduleToStart: number[];
  wftExecution: number[];
  activityScheduleToStart: number[];
  peakRssBytes?: number;
  sdk?: unknown;
}

async function runRound(ctx: BenchContext, sizes: Sizes['concurrency'], n: number): Promise<RoundFigures> {
  // A fresh worker per round: its peak memory is this round's.
  const worker = await startStubWorker(ctx, 'canary');
  try {
    const id = randomUUID().slice(0, 8);
    const ids = Array.from({ length: sizes.canaries }, (_, i) => `canary-${id}-${i}`);
    const t0 = Date.now();
    await mapLimit(ids, CLIENT_CONCURRENCY, (workflowId) =>
      ctx.client.workflow.start<typeof canaryWorkflow>('canaryWorkflow', {
        taskQueue: worker.taskQueue,
        workflowId,
        args: [canaryRun(workflowId, sizes.steps, sizes.holdSeconds)],
      }),
    );
    const startPhaseMs = Date.now() - t0;
    ctx.log(`  round ${n}: ${sizes.canaries} canaries started in ${startPhaseMs} ms`);
    // They end together: waiting on them one by one costs nothing once the first has ended.
    await mapLimit(ids, 10, (workflowId) => ctx.client.workflow.getHandle(workflowId).result());
    const peakRssBytes = worker.process.peakRssBytes();
    const sdk = await worker.sdkMetrics().catch(() => undefined);
    ctx.log(`  round ${n}: all ended ${Date.now() - t0} ms after the first start; reading histories`);

    const figures: RoundFigures = {
      startPhaseMs,
      wallMs: 0,
      workflowMs: [],
      timerResumedLateness: [],
      timerFiredLateness: [],
      wftScheduleToStart: [],
      wftExecution: [],
      activityScheduleToStart: [],
      peakRssBytes,
      sdk,
    };
    let first = Infinity;
    let last = -Infinity;
    await mapLimit(ids, CLIENT_CONCURRENCY, async (workflowId) => {
      const events = await fetchEvents(ctx.client, workflowId);
      const span = runSpan(events);
      first = Math.min(first, span.start);
      last = Math.max(last, span.close);
      figures.workflowMs.push(span.close - span.start);
      for (const t of timerLateness(events)) {
        figures.timerResumedLateness.push(t.resumed);
        figures.timerFiredLateness.push(t.fired);
      }
      const wft = workflowTaskLatencies(events);
      figures.wftScheduleToStart.push(...wft.scheduleToStart);
      figures.wftExecution.push(...wft.execution);
      figures.activityScheduleToStart.push(...activityScheduleToStart(events));
    });
    figures.wallMs = last - first;
    return figures;
  } finally {
    await worker.stop();
  }
}

/**
 * Benchmark 3, concurrency: many canary workflows at once on one worker (the product's
 * createWorker), each stepping through its percentages on 2 s durable timers, scaling and
 * readiness returning at once. Timer lateness, wall time against the ideal, worker peak RSS and
 * task latencies, from the histories and the SDK's metrics.
 */
export async function runConcurrency(
  ctx: BenchContext,
  sizes: Sizes['concurrency'],
): Promise<Record<string, unknown>> {
  const rounds: RoundFigures[] = [];
  for (let r = 1; r <= sizes.rounds; r++) rounds.push(await runRound(ctx, sizes, r));
  const all = (pick: (r: RoundFigures) => number[]) => rounds.flatMap(pick);
  const idealMs = sizes.steps * sizes.holdSeconds * 1000;
  const lateness = summarize(all((r) => r.timerResumedLateness));
  const peakRss = Math.max(...rounds.map((r) => r.peakRssBytes ?? 0));
  const wall = summarize(rounds.map((r) => r.wallMs));
  return {
    what: `${sizes.canaries} concurrent canaries × ${sizes.steps} steps held ${sizes.holdSeconds} s, one worker, stub activities, ${sizes.rounds} rounds`,
    timerLatenessMs: lateness,
    timerFiredLatenessMs: summarize(all((r) => r.timerFiredLateness)),
    idealMs,
    workflowMs: summarize(all((r) => r.workflowMs)),
    workflowVsIdeal: ratio(summarize(all((r) => r.workflowMs))?.p50, idealMs),
    startPhaseMs: summarize(rounds.map((r) => r.startPhaseMs)),
    wallMs: wall,
    wallVsIdeal: ratio(wall?.p50, idealMs),
    workerPeakRssMiB: mib(peakRss),
    workerPeakRssMiBPerRound: rounds.map((r) => mib(r.peakRssBytes)),
    workflowTaskScheduleToStartMs: summarize(all((r) => r.wftScheduleToStart)),
    workflowTaskExecutionMs: summarize(all((r) => r.wftExecution)),
    activityScheduleToStartMs: summarize(all((r) => r.activityScheduleToStart)),
    workerSdkMetricsPerRound: rounds.map((r) => r.sdk),
    target: {
      timerLatenessP99Ms: 500,
      workerRssMiB: 1536,
      met: lateness !== undefined && lateness.p99 <= 500 && peakRss <= 1.5 * 2 ** 30,
    },
  };
}
