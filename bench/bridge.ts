import { CoreV1Api, CustomObjectsApi, Watch } from '@kubernetes/client-node';
import { Client, Connection } from '@temporalio/client';
import { randomUUID } from 'node:crypto';
import { armadaChartSpec } from '../api/chart';
import { chartRun, startRun } from '../runs/requests';
import { formatSpecs } from '../core/plan/specs';
import { kubeConfig } from '../kube/client';
import { GROUP, VERSION } from '../api/common';
import { kinds } from '../api/kinds';
import { standaloneChartWorkflowId } from '../core/plan/release-lock';
import type { Sizes } from './config';
import { startStubWorker, type BenchContext } from './context';
import { mapLimit } from './history';
import { mib } from './overhead';
import { startNode, tail, until, type BenchProcess } from './processes';
import { installCrds, settingsChart } from '../test/helpers/kube';
import { grantAnyNamespace, WORKER_POLLING } from '../test/helpers/processes';
import { histogramFigures, metricValue, scrape } from './prometheus';
import { median, round, summarize } from './stats';

const plural = kinds.ArmadaChart.plural;

export interface Seen {
  firstStatus?: number;
  deployed?: number;
}

/**
 * Watches the ArmadaCharts of a namespace and notes, per object, when a status first showed
 * (the driver's clock, as the watch delivers it) and when it first read `deployed`.
 */
export async function watchStatuses(namespace: string, seen: Map<string, Seen>): Promise<() => void> {
  const watch = new Watch(kubeConfig());
  let stopped = false;
  let resourceVersion: string | undefined;
  let abort: AbortController | undefined;
  const open = async (): Promise<void> => {
    abort = await watch.watch(
      `/apis/${GROUP}/${VERSION}/namespaces/${namespace}/${plural}`,
      { allowWatchBookmarks: true, ...(resourceVersion && { resourceVersion }) },
      (
        _phase,
        obj: { metadata?: { name?: string; resourceVersion?: string }; status?: { actual_state?: string } },
      ) => {
        const now = Date.now();
        resourceVersion = obj.metadata?.resourceVersion ?? resourceVersion;
        const name = obj.metadata?.name;
        const state = obj.status?.actual_state;
        if (!name || !state) return;
        const entry = seen.get(name) ?? {};
        entry.firstStatus ??= now;
        if (state === 'deployed') entry.deployed ??= now;
        seen.set(name, entry);
      },
      () => {
        // The API server ends watches now and then: open it again from where it was.
        if (!stopped) void open().catch(() => undefined);
      },
    );
  };
  await open();
  return () => {
    stopped = true;
    abort?.abort();
  };
}

interface RoundFigures {
  createPhaseMs: number;
  /** How long each create call took to answer: the uncertainty of "created". */
  createRequests: number[];
  createdToStarted: number[];
  createdToFirstStatus: number[];
  createdToDeployed: number[];
  bridgePeakRssBytes?: number;
  bridgeEventToStartMs?: ReturnType<typeof histogramFigures>;
  bridgeReconcileMs?: ReturnType<typeof histogramFigures>;
  watchEvents?: number;
}

/**
 * A bridge process watching `namespace` (its leader Lease there too), with extra environment;
 * resolves once it leads and serves metrics.
 */
export async function startBridge(
  ctx: BenchContext,
  namespace: string,
  taskQueue: string,
  env: NodeJS.ProcessEnv = {},
) {
  grantAnyNamespace(namespace);
  const bridge = startNode('bridge/main.js', {
    TEMPORAL_ADDRESS: ctx.temporalAddress,
    ARMADA_TASK_QUEUE: taskQueue,
    ARMADA_NAMESPACES: namespace,
    ARMADA_LEASE_NAMESPACE: namespace,
    ARMADA_METRICS_PORT: '0',
    KUBECONFIG: ctx.kubeconfig,
    ...env,
  });
  await bridge.printed('"message":"leading: watching"');
  const port = /"message":"metrics listening","port":(\d+)/.exec(bridge.output())?.[1];
  if (!port) throw new Error(`the bridge did not say its metrics port:\n${tail(bridge.output())}`);
  return { bridge, metricsUrl: `http://127.0.0.1:${port}/metrics` };
}

/** A fresh namespace for one round. */
export async function roundNamespace(what: string, n: number): Promise<string> {
  const namespace = `${what}-${randomUUID().slice(0, 6)}-${n}`;
  await kubeConfig()
    .makeApiClient(CoreV1Api)
    .createNamespace({ body: { metadata: { name: namespace } } });
  return namespace;
}

/** The names of one round's objects: c-0000, c-0001, ... */
const objectNames = (sizes: Sizes['bridge']) =>
  Array.from({ length: sizes.objects }, (_, i) => `c-${String(i).padStart(4, '0')}`);

/** When Temporal started the run of the ArmadaChart `name` (its server's clock), by describe. */
const workflowStart = async (ctx: BenchContext, namespace: string, name: string) =>
  (
    await ctx.client.workflow.getHandle(standaloneChartWorkflowId({ namespace, name })).describe()
  ).startTime.getTime();

/**
 * The engine's own limit beside the bridge: the same chart workflows (type, task queue, ID, input
 * and memo as the bridge starts them for the same ArmadaCharts) started by a bare client loop,
 * `createConcurrency` start calls in flight, from a connection of its own as the bridge has.
 * Request (the start call sent) → workflow started (Temporal's start time). No object exists,
 * so the runs' status writes find none and return.
 */
async function runBaselineRound(
  ctx: BenchContext,
  sizes: Sizes['bridge'],
  taskQueue: string,
  n: number,
): Promise<number[]> {
  const namespace = await roundNamespace('baseline', n);
  const connection = await Connection.connect({ address: ctx.temporalAddress });
  try {
    const client = new Client({ connection, namespace: ctx.client.options.namespace });
    const names = objectNames(sizes);
    const requestedAt = new Map<string, number>();
    const t0 = Date.now();
    await mapLimit(names, sizes.createConcurrency, async (name) => {
      const spec = armadaChartSpec.parse(settingsChart(name, namespace, { name }).spec);
      const run = chartRun(
        { kind: 'ArmadaChart', name, namespace, spec },
        'deploy',
        formatSpecs([{ kind: 'ArmadaChart', name, generation: 1 }]),
      );
      requestedAt.set(name, Date.now());
      await startRun(client, taskQueue, run);
    });
    ctx.log(`  round ${n}: baseline: ${sizes.objects} chart workflows started in ${Date.now() - t0} ms`);
    const startedAt = await mapLimit(names, 20, (name) => workflowStart(ctx, namespace, name));
    // Finished before the next round, as a bridge round waits for its objects to read deployed.
    await mapLimit(names, sizes.createConcurrency, (name) =>
      client.workflow.getHandle(standaloneChartWorkflowId({ namespace, name })).result(),
    );
    return names.map((name, i) => startedAt[i] - requestedAt.get(name)!);
  } finally {
    await connection.close();
  }
}

async function runRound(
  ctx: BenchContext,
  sizes: Sizes['bridge'],
  taskQueue: string,
  n: number,
): Promise<RoundFigures> {
  const namespace = await roundNamespace('bridge', n);
  const api = kubeConfig().makeApiClient(CustomObjectsApi);
  const seen = new Map<string, Seen>();
  const stopWatch = await watchStatuses(namespace, seen);
  let bridge: BenchProcess | undefined;
  try {
    const started = await startBridge(ctx, namespace, taskQueue);
    bridge = started.bridge;
    const create = (name: string) =>
      api.createNamespacedCustomObject({
        group: GROUP,
        version: VERSION,
        namespace,
        plural,
        // With the stub worker nothing is installed; with BENCH_BRIDGE_HELM=real, in seconds.
        body: settingsChart(name, namespace, { name }),
      });
    // A probe first: once its run starts, the bridge has listed and watches.
    await create('probe');
    await until('the bridge to start the probe chart’s run', () => workflowStart(ctx, namespace, 'probe'), {
      timeoutMs: 120_000,
    });

    const names = objectNames(sizes);
    // "Created" is when the create call answered: the object was stored between the request
    // and the answer, so latencies from here are at most understated by the request's time.
    const createdAt = new Map<string, number>();
    const createRequests: number[] = [];
    const t0 = Date.now();
    await mapLimit(names, sizes.createConcurrency, async (name) => {
      const sent = Date.now();
      await create(name);
      createdAt.set(name, Date.now());
      createRequests.push(Date.now() - sent);
    });
    const createPhaseMs = Date.now() - t0;
    ctx.log(`  round ${n}: ${sizes.objects} ArmadaCharts created in ${createPhaseMs} ms`);
    await until(
      `every ArmadaChart of ${namespace} to read deployed`,
      async () => (names.every((name) => seen.get(name)?.deployed !== undefined) ? true : undefined),
      { timeoutMs: 30 * 60_000, intervalMs: 500 },
    ).catch((err: Error) => {
      const done = names.filter((name) => seen.get(name)?.deployed !== undefined).length;
      throw new Error(
        `${err.message} (${done}/${names.length} did); the bridge's last lines:\n${tail(bridge!.output())}`,
      );
    });
    ctx.log(`  round ${n}: all deployed ${Date.now() - t0} ms after the first create; reading start times`);
    const startedAt = await mapLimit(names, 20, (name) => workflowStart(ctx, namespace, name));
    const metrics = await scrape(started.metricsUrl);
    const toMs = (h: ReturnType<typeof histogramFigures>) =>
      h && {
        count: h.count,
        mean: h.mean && round(h.mean * 1000),
        p50: h.p50 && round(h.p50 * 1000),
        p95: h.p95 && round(h.p95 * 1000),
        p99: h.p99 && round(h.p99 * 1000),
      };
    return {
      createPhaseMs,
      createRequests,
      createdToStarted: names.map((name, i) => startedAt[i] - createdAt.get(name)!),
      createdToFirstStatus: names.map((name) => seen.get(name)!.firstStatus! - createdAt.get(name)!),
      createdToDeployed: names.map((name) => seen.get(name)!.deployed! - createdAt.get(name)!),
      bridgePeakRssBytes: metricValue(metrics, 'process_max_resident_memory_bytes') ?? bridge.peakRssBytes(),
      bridgeEventToStartMs: toMs(histogramFigures(metrics, 'armada_bridge_event_to_start_seconds')),
      bridgeReconcileMs: toMs(histogramFigures(metrics, 'armada_bridge_reconcile_duration_seconds')),
      watchEvents: metricValue(metrics, 'armada_bridge_watch_events_total'),
    };
  } finally {
    stopWatch();
    await bridge?.stop();
  }
}

/**
 * Benchmark 2, bridge latency: ArmadaCharts created as fast as the API server takes them, the
 * bridge process turning each into a run on a real worker process. Created (the create call
 * answered) → workflow started (Temporal's start time) → first status written and → deployed
 * (as a watch on the objects delivers them); the bridge's peak RSS from its /metrics.
 */
export async function runBridge(ctx: BenchContext, sizes: Sizes['bridge']): Promise<Record<string, unknown>> {
  if (!ctx.kubeconfig) throw new Error('benchmark 2 needs the sandbox cluster (KUBECONFIG)');
  await installCrds();
  const worker =
    sizes.helm === 'stub'
      ? await startStubWorker(ctx, 'kube', { KUBECONFIG: ctx.kubeconfig })
      : await startRealWorker(ctx, `bench-bridge-${randomUUID().slice(0, 8)}`);
  try {
    const rounds: RoundFigures[] = [];
    const baselineRounds: number[][] = [];
    const workerPeakRssBytes: (number | undefined)[] = [];
    for (let n = 1; n <= sizes.rounds; n++) {
      // Alternated, so neither side always runs on a server and worker the other just warmed.
      const bridgeRound = async () => rounds.push(await runRound(ctx, sizes, worker.taskQueue, n));
      const baselineRound = async () =>
        baselineRounds.push(await runBaselineRound(ctx, sizes, worker.taskQueue, n));
      if (n % 2 === 1) {
        await baselineRound();
        await bridgeRound();
      } else {
        await bridgeRound();
        await baselineRound();
      }
      workerPeakRssBytes.push(worker.process.peakRssBytes());
    }
    const all = (pick: (r: RoundFigures) => number[]) => rounds.flatMap(pick);
    const started = summarize(all((r) => r.createdToStarted));
    const perRound = (pick: (r: RoundFigures) => number[]) =>
      rounds.map((r) => {
        const s = summarize(pick(r));
        return s && { p50: s.p50, p99: s.p99 };
      });
    const medianOfP99s = (samples: number[][]) => round(median(samples.map((r) => summarize(r)!.p99)));
    const startedP99 = medianOfP99s(rounds.map((r) => r.createdToStarted));
    const baselineP99 = medianOfP99s(baselineRounds);
    const ratio = round(startedP99 / Math.max(baselineP99, 1), 2);
    const peak = Math.max(...rounds.map((r) => r.bridgePeakRssBytes ?? 0));
    return {
      what: `${sizes.objects} ArmadaCharts created ${sizes.createConcurrency} at a time, bridge process + ${sizes.helm === 'stub' ? 'worker process with Helm stubbed (status written for real)' : 'the product’s worker (real helm)'}, ${sizes.rounds} rounds, each beside a baseline round (the same workflows started by a bare client loop), alternating`,
      createdToStartedMs: started,
      createdToFirstStatusMs: summarize(all((r) => r.createdToFirstStatus)),
      createdToDeployedMs: summarize(all((r) => r.createdToDeployed)),
      baselineRequestToStartedMs: summarize(baselineRounds.flat()),
      perRound: {
        createdToStartedMs: perRound((r) => r.createdToStarted),
        createdToFirstStatusMs: perRound((r) => r.createdToFirstStatus),
        baselineRequestToStartedMs: baselineRounds.map((r) => {
          const s = summarize(r)!;
          return { p50: s.p50, p99: s.p99 };
        }),
        medianOfRoundP99s: {
          createdToStartedMs: startedP99,
          createdToFirstStatusMs: medianOfP99s(rounds.map((r) => r.createdToFirstStatus)),
          baselineRequestToStartedMs: baselineP99,
        },
      },
      startedP99VsBaseline: ratio,
      createPhaseMs: summarize(rounds.map((r) => r.createPhaseMs)),
      createRequestMs: summarize(all((r) => r.createRequests)),
      createsPerSecond: round(median(rounds.map((r) => (sizes.objects * 1000) / r.createPhaseMs))),
      bridgePeakRssMiB: mib(peak),
      bridgeMetricsPerRound: rounds.map((r) => ({
        peakRssMiB: mib(r.bridgePeakRssBytes),
        eventToStartMs: r.bridgeEventToStartMs,
        reconcileMs: r.bridgeReconcileMs,
        watchEvents: r.watchEvents,
      })),
      workerPeakRssMiB: mib(Math.max(...workerPeakRssBytes.map((b) => b ?? 0))),
      workerPeakRssMiBPerRound: workerPeakRssBytes.map(mib),
      target: {
        createdToStartedP99Ms: 250,
        met: started !== undefined && started.p99 <= 250,
        startedP99VsBaseline: 1.5,
        baselineMet: ratio <= 1.5,
      },
    };
  } finally {
    await worker.stop();
  }
}

/**
 * The product's worker process (dist/worker/main.js) on a task queue of its own, polling when
 * this resolves; it runs the build's workflow bundle unless given another.
 */
export async function startRealWorker(
  ctx: BenchContext,
  taskQueue: string,
  bundlePath = ctx.bundlePath,
): Promise<{ taskQueue: string; process: BenchProcess; stop(): Promise<void> }> {
  const worker = startNode('worker/main.js', {
    TEMPORAL_ADDRESS: ctx.temporalAddress,
    ARMADA_TASK_QUEUE: taskQueue,
    ARMADA_METRICS_PORT: '0',
    ARMADA_WORKFLOW_BUNDLE: bundlePath,
    KUBECONFIG: ctx.kubeconfig,
  });
  await worker.printed(WORKER_POLLING);
  return { taskQueue, process: worker, stop: () => worker.stop() };
}
