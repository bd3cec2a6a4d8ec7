import { randomUUID } from 'node:crypto';
import { armadaChartSpec, type ArmadaChartSpec } from '../api/chart';
import { armadaChartGroupSpec, type ArmadaChartGroupSpec } from '../api/chart-group';
import { armadaManifestSpec } from '../api/manifest';
import { manifestRun, startRun } from '../runs/requests';
import { planManifest, type ManifestDocuments } from '../core/plan/manifest';
import { releaseSteps } from '../test/helpers/release-steps';
import type { Sizes } from './config';
import { benchBundle, startStubWorker, type BenchContext } from './context';
import {
  activityDurations,
  childTimes,
  eventMs,
  fetchEvents,
  runSpan,
  summarizeByType,
  type HistoryEvent,
} from './history';
import { median, percentiles, ratio, round, summarize } from './stats';

/**
 * The delays peers publish for the same step, in ms: what one group transition (or one step)
 * costs there. Flux re-checks an unmet `dependsOn` every 30 s by default; Argo CD waits 2 s
 * between sync waves; the armada-operator's Argo Workflows example (one pod per step) took 14 s
 * for two charts.
 */
export const PEER_DELAYS_MS = {
  fluxDependsOnRequeue: 30_000,
  argoCdSyncWaveDelay: 2_000,
  argoWorkflowsTwoCharts: 14_000,
};

/**
 * A manifest of `groups` groups of `charts` charts each, every chart in its own release; the
 * manifest's name is also its release prefix, so runs under different names share no release.
 */
export function syntheticManifest(
  name: string,
  namespace: string,
  groups: number,
  charts: number,
  sequenced: boolean,
): ManifestDocuments {
  const groupNames = Array.from({ length: groups }, (_, g) => `g${g}`);
  const groupSpecs: Record<string, ArmadaChartGroupSpec> = {};
  const chartSpecs: Record<string, ArmadaChartSpec> = {};
  for (const group of groupNames) {
    const members = Array.from({ length: charts }, (_, c) => `${group}c${c}`);
    groupSpecs[group] = armadaChartGroupSpec.parse({ chart_group: members, sequenced });
    for (const chart of members)
      chartSpecs[chart] = armadaChartSpec.parse({
        release: chart,
        namespace,
        source: { type: 'local', location: 'examples/charts/settings' },
        values: { settings: { chart } },
      });
  }
  return {
    namespace,
    manifest: { name, spec: armadaManifestSpec.parse({ release_prefix: name, chart_groups: groupNames }) },
    groups: groupSpecs,
    charts: chartSpecs,
  };
}

/** Starts a manifest's run the way `armadactl apply` does and waits for it; returns its workflow ID. */
async function applyAndWait(ctx: BenchContext, taskQueue: string, docs: ManifestDocuments): Promise<string> {
  const workflowId = await startRun(ctx.client, taskQueue, manifestRun(docs));
  await ctx.client.workflow.getHandle(workflowId).result();
  return workflowId;
}

/**
 * The figures of one manifest run, read from its history: the one-workflow run (deployRun) runs
 * every chart's steps as its own activities, named by release in their summaries (releaseSteps).
 */
interface RunFigures {
  totalMs: number;
  /** A group's last chart step closed → the next group's first chart step was scheduled. */
  transitions: number[];
  /** The group's turn came (the run started, or the group before ended) → each of its charts' first step. */
  chartStarts: number[];
  /** In a sequenced group: a chart's last step closed → the next chart's first step was scheduled. */
  chartToChart: number[];
  /** Every activity of the run: scheduled → closed. */
  activities: { type: string; ms: number }[];
}

async function measureRun(
  ctx: BenchContext,
  workflowId: string,
  docs: ManifestDocuments,
): Promise<RunFigures> {
  const events = await fetchEvents(ctx.client, workflowId);
  const run = runSpan(events);
  const figures: RunFigures = {
    totalMs: run.close - run.start,
    transitions: [],
    chartStarts: [],
    chartToChart: [],
    activities: activityDurations(events),
  };
  let turn = run.start;
  for (const [g, group] of planManifest(docs).groups.entries()) {
    const charts = group.charts.map(({ release }) => {
      const steps = releaseSteps(events, release);
      if (!steps) throw new Error(`run ${workflowId}: no activity names release ${release}`);
      return steps;
    });
    for (const c of charts) figures.chartStarts.push(c.started - turn);
    for (let i = 1; i < charts.length; i++)
      if (charts[i].started >= charts[i - 1].closed)
        figures.chartToChart.push(charts[i].started - charts[i - 1].closed);
    const first = Math.min(...charts.map((c) => c.started));
    if (g > 0) figures.transitions.push(first - turn);
    turn = Math.max(...charts.map((c) => c.closed));
  }
  return figures;
}

/**
 * Benchmark 1, orchestration overhead: a manifest of groups × charts on the real dev server,
 * every activity returning at once (a stub worker), run several times. Group transitions and
 * child starts are read from the workflow histories (server timestamps).
 */
export async function runOverhead(
  ctx: BenchContext,
  sizes: Sizes['overhead'],
  workerEnv: NodeJS.ProcessEnv = {},
): Promise<Record<string, unknown>> {
  const worker = await startStubWorker(ctx, 'helm', {
    ...workerEnv,
    BENCH_WORKFLOW_BUNDLE: await benchBundle(),
  });
  try {
    const id = randomUUID().slice(0, 6);
    // Warm-up, not measured: the worker's first workflows load the bundle into fresh isolates.
    await applyAndWait(
      ctx,
      worker.taskQueue,
      syntheticManifest(`warm-${id}`, `warm-${id}`, 2, 2, sizes.sequenced),
    );

    const runs: RunFigures[] = [];
    const twoCharts: number[] = [];
    for (let r = 1; r <= sizes.runs; r++) {
      const ns = `ovh-${id}-${r}`;
      const docs = syntheticManifest(`m${r}-${id}`, ns, sizes.groups, sizes.charts, sizes.sequenced);
      const started = Date.now();
      const figures = await measureRun(ctx, await applyAndWait(ctx, worker.taskQueue, docs), docs);
      runs.push(figures);
      // Two charts, one per group: the armada-operator example's shape (14 s with a pod per step).
      const pair = syntheticManifest(`two${r}-${id}`, ns, 2, 1, true);
      const pairEvents = await fetchEvents(ctx.client, await applyAndWait(ctx, worker.taskQueue, pair));
      twoCharts.push(runSpan(pairEvents).close - runSpan(pairEvents).start);
      ctx.log(
        `  run ${r}/${sizes.runs}: ${round(figures.totalMs)} ms for ${sizes.groups}×${sizes.charts} charts, ` +
          `transition p50 ${round(median(figures.transitions.length ? figures.transitions : [NaN]))} ms ` +
          `(driver saw ${Date.now() - started} ms)`,
      );
    }

    // The engine's own step on this machine, in the same run and on the same worker: a bare
    // workflow's task-to-task round trips, ROUND_TRIPS per run.
    const roundTrips: number[] = [];
    const bareSteps: number[] = [];
    for (let r = 1; r <= sizes.runs; r++) {
      const handle = await ctx.client.workflow.start('roundTripsWorkflow', {
        taskQueue: worker.taskQueue,
        workflowId: `round-trips-${id}-${r}`,
        args: [ROUND_TRIPS],
      });
      await handle.result();
      const events = await fetchEvents(ctx.client, handle.workflowId);
      roundTrips.push(...taskRoundTrips(events));
      const children = [...childTimes(events).values()];
      for (let c = 1; c < children.length; c++)
        bareSteps.push(children[c].started! - children[c - 1].closed!);
    }
    const roundTrip = summarize(roundTrips);

    const all = (pick: (r: RunFigures) => number[]) => runs.flatMap(pick);
    const transition = summarize(all((r) => r.transitions));
    const totals = runs.map((r) => r.totalMs);
    const twoChartMedian = median(twoCharts);
    return {
      what: `${sizes.groups} groups × ${sizes.charts} charts (${sizes.sequenced ? 'sequenced' : 'parallel'} groups), activities return at once, ${sizes.runs} runs`,
      groupTransitionMs: transition,
      workflowTaskRoundTripMs: roundTrip,
      bareChildToChildMs: summarize(bareSteps),
      groupTransitionInRoundTrips: ratio(transition?.p50, roundTrip?.p50),
      // Kept for the CDF of bench/plot.ts (transitions.png).
      groupTransitionPercentilesMs: percentiles(all((r) => r.transitions)),
      transitionsPerRunMs: summarize(runs.map((r) => r.transitions.reduce((s, x) => s + x, 0))),
      totalMs: summarize(totals),
      perChartMs: round(median(totals) / (sizes.groups * sizes.charts)),
      turnToChartStartMs: summarize(all((r) => r.chartStarts)),
      ...(sizes.sequenced && { chartToChartMs: summarize(all((r) => r.chartToChart)) }),
      twoChartManifestMs: summarize(twoCharts),
      activityRoundTripMs: summarizeByType(runs.flatMap((r) => r.activities)),
      peerRatios: {
        note: 'how many times the peer’s published delay our measured figure is (higher: we add less)',
        fluxDependsOn30sVsTransitionP50: ratio(PEER_DELAYS_MS.fluxDependsOnRequeue, transition?.p50),
        argoCdWave2sVsTransitionP50: ratio(PEER_DELAYS_MS.argoCdSyncWaveDelay, transition?.p50),
        argoWorkflows14sVsTwoChartManifest: ratio(PEER_DELAYS_MS.argoWorkflowsTwoCharts, twoChartMedian),
      },
      target: {
        groupTransitionInRoundTripsAtMost: 1.5,
        met: transition !== undefined && roundTrip !== undefined && transition.p50 <= 1.5 * roundTrip.p50,
      },
      worker: {
        peakRssMiB: mib(worker.process.peakRssBytes()),
        sdk: await worker.sdkMetrics().catch(() => undefined),
      },
    };
  } finally {
    await worker.stop();
  }
}

/** How many children benchmark 1's bare workflow starts one after another, per run. */
const ROUND_TRIPS = 20;

/**
 * A bare workflow's workflow-task round trips (ms): each task from scheduled (by the server, on
 * a child's start or close) to completed (the worker ran it and the server recorded it).
 */
export function taskRoundTrips(events: readonly HistoryEvent[]): number[] {
  const byId = new Map(events.map((e) => [Number(e.eventId), e]));
  return events.flatMap((e) => {
    const started = byId.get(Number(e.workflowTaskCompletedEventAttributes?.startedEventId));
    const scheduled = byId.get(Number(started?.workflowTaskStartedEventAttributes?.scheduledEventId));
    return scheduled ? [eventMs(e) - eventMs(scheduled)] : [];
  });
}

export const mib = (bytes: number | undefined) => (bytes === undefined ? undefined : round(bytes / 2 ** 20));
