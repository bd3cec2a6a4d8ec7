import { randomUUID } from 'node:crypto';
import { armadaChartSpec, type ArmadaChartSpec } from '../api/chart';
import { armadaChartGroupSpec, type ArmadaChartGroupSpec } from '../api/chart-group';
import { armadaManifestSpec } from '../api/manifest';
import { manifestRun, startRun } from '../runs/requests';
import type { ManifestDocuments } from '../core/plan/manifest';
import type { Sizes } from './config';
import { benchBundle, startStubWorker, type BenchContext } from './context';
import {
  activityDurations,
  childTimes,
  eventMs,
  fetchEvents,
  mapLimit,
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

/** The figures of one manifest run, read from the histories of the manifest and its groups and charts. */
interface RunFigures {
  totalMs: number;
  /** Last chart of a group closed → first chart of the next group started. */
  transitions: number[];
  /** The manifest saw a group close → it saw the next group start. */
  manifestSteps: number[];
  /** A group started → its first chart started. */
  groupStartups: number[];
  /** A group's last chart closed → the group closed (as the manifest saw it). */
  groupWindups: number[];
  /** A group asked for a chart's child workflow → the child had started. */
  childStarts: number[];
  /** A group started → each of its charts started. */
  chartStarts: number[];
  /** In a sequenced group: a chart closed → the next one started. */
  chartToChart: number[];
  /** Every activity of the manifest, its groups and charts: scheduled → closed. */
  activities: { type: string; ms: number }[];
}

async function measureRun(ctx: BenchContext, workflowId: string): Promise<RunFigures> {
  const { client } = ctx;
  const manifestEvents = await fetchEvents(client, workflowId);
  const groups = [...childTimes(manifestEvents)];
  const figures: RunFigures = {
    totalMs: runSpan(manifestEvents).close - runSpan(manifestEvents).start,
    transitions: [],
    manifestSteps: [],
    groupStartups: [],
    groupWindups: [],
    childStarts: [],
    chartStarts: [],
    chartToChart: [],
    activities: activityDurations(manifestEvents),
  };
  const spans: { first: number; last: number }[] = [];
  for (const [groupId, group] of groups) {
    const groupEvents = await fetchEvents(client, groupId);
    figures.activities.push(...activityDurations(groupEvents));
    const charts = [...childTimes(groupEvents)];
    const times = await mapLimit(charts, 10, async ([chartId, child]) => {
      const events = await fetchEvents(client, chartId);
      figures.childStarts.push(child.started! - child.initiated);
      figures.activities.push(...activityDurations(events));
      return runSpan(events);
    });
    for (const t of times) figures.chartStarts.push(t.start - group.started!);
    for (let i = 1; i < times.length; i++)
      if (times[i].start >= times[i - 1].close)
        figures.chartToChart.push(times[i].start - times[i - 1].close);
    const first = Math.min(...times.map((t) => t.start));
    const last = Math.max(...times.map((t) => t.close));
    figures.groupStartups.push(first - group.started!);
    figures.groupWindups.push(group.closed! - last);
    spans.push({ first, last });
  }
  for (let g = 1; g < groups.length; g++) {
    figures.transitions.push(spans[g].first - spans[g - 1].last);
    figures.manifestSteps.push(groups[g][1].started! - groups[g - 1][1].closed!);
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
      const figures = await measureRun(ctx, await applyAndWait(ctx, worker.taskQueue, docs));
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
      groupTransitionParts: {
        groupWindupMs: summarize(all((r) => r.groupWindups)),
        manifestStepMs: summarize(all((r) => r.manifestSteps)),
        groupStartupMs: summarize(all((r) => r.groupStartups)),
      },
      transitionsPerRunMs: summarize(runs.map((r) => r.transitions.reduce((s, x) => s + x, 0))),
      totalMs: summarize(totals),
      perChartMs: round(median(totals) / (sizes.groups * sizes.charts)),
      chartChildStartMs: summarize(all((r) => r.childStarts)),
      groupStartToChartStartMs: summarize(all((r) => r.chartStarts)),
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
