import { randomUUID } from 'node:crypto';
import type { CanaryRun } from '../core/contracts/workflows';
import type { Sizes } from './config';
import { benchBundle, startStubWorker, type BenchContext } from './context';
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

/**
 * What a round runs: the canary (the product's canaryWorkflow), or the baseline of the same
 * timers alone (bench/workflows.ts timersOnlyWorkflow) on a worker of the same settings.
 */
type Kind = 'canary' | 'timersOnly';

interface RoundFigures {
  kind: Kind;
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
  /** Events per workflow history. */
  historyLength: number[];
  peakRssBytes?: number;
  sdk?: unknown;
}

function startRequest(kind: Kind, sizes: Sizes['concurrency'], workflowId: string) {
  return kind === 'canary'
    ? { type: 'canaryWorkflow', args: [canaryRun(workflowId, sizes.steps, sizes.holdSeconds)] }
    : { type: 'timersOnlyWorkflow', args: [sizes.steps, sizes.holdSeconds] };
}

async function runRound(
  ctx: BenchContext,
  sizes: Sizes['concurrency'],
  n: number,
  kind: Kind,
  bundlePath: string,
): Promise<RoundFigures> {
  // A fresh worker per round: its peak memory is this round's.
  const worker = await startStubWorker(ctx, 'canary', { BENCH_WORKFLOW_BUNDLE: bundlePath });
  try {
    const id = randomUUID().slice(0, 8);
    const ids = Array.from({ length: sizes.canaries }, (_, i) => `${kind}-${id}-${i}`);
    const t0 = Date.now();
    await mapLimit(ids, CLIENT_CONCURRENCY, (workflowId) => {
      const { type, args } = startRequest(kind, sizes, workflowId);
      return ctx.client.workflow.start(type, { taskQueue: worker.taskQueue, workflowId, args });
    });
    const startPhaseMs = Date.now() - t0;
    ctx.log(`  round ${n} (${kind}): ${sizes.canaries} workflows started in ${startPhaseMs} ms`);
    // They end together: waiting on them one by one costs nothing once the first has ended.
    await mapLimit(ids, 10, (workflowId) => ctx.client.workflow.getHandle(workflowId).result());
    const peakRssBytes = worker.process.peakRssBytes();
    const sdk = await worker.sdkMetrics().catch(() => undefined);
    ctx.log(
      `  round ${n} (${kind}): all ended ${Date.now() - t0} ms after the first start; reading histories`,
    );

    const figures: RoundFigures = {
      kind,
      startPhaseMs,
      wallMs: 0,
      workflowMs: [],
      timerResumedLateness: [],
      timerFiredLateness: [],
      wftScheduleToStart: [],
      wftExecution: [],
      activityScheduleToStart: [],
      historyLength: [],
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
      figures.historyLength.push(events.length);
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
    ctx.log(
      `  round ${n} (${kind}): timer lateness p99 ${summarize(figures.timerResumedLateness)?.p99} ms, ` +
        `peak RSS ${mib(peakRssBytes)} MiB`,
    );
    return figures;
  } finally {
    await worker.stop();
  }
}

/** The figures of one kind's rounds, every sample of every round together. */
function kindFigures(rounds: RoundFigures[], idealMs: number) {
  const all = (pick: (r: RoundFigures) => number[]) => rounds.flatMap(pick);
  const workflowMs = summarize(all((r) => r.workflowMs));
  const wall = summarize(rounds.map((r) => r.wallMs));
  return {
    timerLatenessMs: summarize(all((r) => r.timerResumedLateness)),
    timerFiredLatenessMs: summarize(all((r) => r.timerFiredLateness)),
    workflowMs,
    workflowVsIdeal: ratio(workflowMs?.p50, idealMs),
    startPhaseMs: summarize(rounds.map((r) => r.startPhaseMs)),
    wallMs: wall,
    wallVsIdeal: ratio(wall?.p50, idealMs),
    historyEvents: summarize(all((r) => r.historyLength)),
    workerPeakRssMiB: mib(Math.max(...rounds.map((r) => r.peakRssBytes ?? 0))),
    workerPeakRssMiBPerRound: rounds.map((r) => mib(r.peakRssBytes)),
    workflowTaskScheduleToStartMs: summarize(all((r) => r.wftScheduleToStart)),
    workflowTaskExecutionMs: summarize(all((r) => r.wftExecution)),
    activityScheduleToStartMs: summarize(all((r) => r.activityScheduleToStart)),
    workerSdkMetricsPerRound: rounds.map((r) => r.sdk),
  };
}

/**
 * Benchmark 3, concurrency: many canary workflows at once on one worker (the product's
 * createWorker), each stepping through its percentages on 2 s durable timers, scaling and
 * readiness returning at once; in alternating rounds (canary first, then baseline first), as
 * many workflows doing only the same timers on a worker of the same settings, the engine's own
 * limit on this machine. Timer lateness against that baseline, wall time against the ideal,
 * worker peak RSS and task latencies, from the histories and the SDK's metrics.
 */
export async function runConcurrency(
  ctx: BenchContext,
  sizes: Sizes['concurrency'],
): Promise<Record<string, unknown>> {
  const bundlePath = await benchBundle();
  const rounds: RoundFigures[] = [];
  for (let r = 1; r <= sizes.rounds; r++) {
    const order: Kind[] = r % 2 ? ['canary', 'timersOnly'] : ['timersOnly', 'canary'];
    for (const kind of order) rounds.push(await runRound(ctx, sizes, r, kind, bundlePath));
  }
  const idealMs = sizes.steps * sizes.holdSeconds * 1000;
  const canary = kindFigures(
    rounds.filter((r) => r.kind === 'canary'),
    idealMs,
  );
  const timersOnly = kindFigures(
    rounds.filter((r) => r.kind === 'timersOnly'),
    idealMs,
  );
  const vsTimersOnly = ratio(canary.timerLatenessMs?.p99, timersOnly.timerLatenessMs?.p99);
  const p99 = canary.timerLatenessMs?.p99;
  return {
    what: `${sizes.canaries} concurrent canaries × ${sizes.steps} steps held ${sizes.holdSeconds} s, one worker, stub activities, ${sizes.rounds} rounds; as many timers-only workflows in alternating rounds`,
    idealMs,
    ...canary,
    timerLatenessP99VsTimersOnly: vsTimersOnly,
    timersOnly,
    target: {
      timerLatenessP99Ms: 500,
      timerLatenessP99VsTimersOnly: 1.5,
      workerRssMiB: 1536,
      met:
        p99 !== undefined &&
        p99 <= 500 &&
        vsTimersOnly !== undefined &&
        vsTimersOnly <= 1.5 &&
        (canary.workerPeakRssMiB ?? 0) <= 1536,
    },
  };
}
