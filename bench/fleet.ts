import { CustomObjectsApi } from '@kubernetes/client-node';
import { randomUUID } from 'node:crypto';
import { mkdtemp } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import path from 'node:path';
import { armadaChartSpec } from '../api/chart';
import { GROUP, VERSION } from '../api/common';
import { kinds } from '../api/kinds';
import { kubeConfig } from '../kube/client';
import type { ChartPlan, ManifestPlan } from '../core/plan/plans';
import { installCrds, settingsChart } from '../test/helpers/kube';
import { roundNamespace, startBridge, startRealWorker, watchStatuses, type Seen } from './bridge';
import type { Sizes } from './config';
import type { BenchContext } from './context';
import { rotation } from './deploy-forms';
import { startFlux, type FluxForm } from './flux';
import { tail, until } from './processes';
import { median, round, summarize } from './stats';

/** Flux's helm-controller at its defaults; no HelmRelease here depends on another. */
const FLUX_REQUEUE = '30s';

/**
 * One size's ArmadaCharts (or HelmReleases): release c-NNNN of examples/charts/settings (one
 * ConfigMap) in `releases`. Not `hello`: its Service each would exhaust the sandbox's /24 of
 * Service IPs past ~250 releases.
 */
function fleet(size: number, releases: string): ChartPlan[] {
  return Array.from({ length: size }, (_, i) => {
    const name = `c-${String(i).padStart(4, '0')}`;
    const spec = armadaChartSpec.parse(settingsChart(name, releases, { name }).spec);
    return { chart: name, release: name, namespace: releases, workflowId: '', spec };
  });
}

/** The charts as a plan of one parallel group: what Flux's HelmReleases are made from. */
const planOf = (charts: ChartPlan[], namespace: string): ManifestPlan => ({
  manifest: 'fleet',
  namespace,
  onFailure: 'stop',
  targetState: 'deployed',
  groups: [{ name: 'fleet', sequenced: false, charts }],
});

/**
 * Our side of a round: a fresh namespace and bridge, `size` ArmadaCharts created one after
 * another (as `kubectl apply -f` of one file sends them), and the ms from the first create until a
 * watch has seen every one read `deployed`; then they are deleted, as Flux's are.
 */
async function armadaRound(ctx: BenchContext, taskQueue: string, size: number, n: number): Promise<number> {
  const namespace = await roundNamespace('fleet', n);
  const seen = new Map<string, Seen>();
  const stopWatch = await watchStatuses(namespace, seen);
  const { bridge } = await startBridge(ctx, namespace, taskQueue);
  try {
    const api = kubeConfig().makeApiClient(CustomObjectsApi);
    const charts = fleet(size, namespace);
    const t0 = Date.now();
    for (const chart of charts)
      await api.createNamespacedCustomObject({
        group: GROUP,
        version: VERSION,
        namespace,
        plural: kinds.ArmadaChart.plural,
        body: settingsChart(chart.chart, namespace, { name: chart.chart }),
      });
    await until(
      `every ArmadaChart of ${namespace} to read deployed`,
      async () => (charts.every((c) => seen.get(c.chart)?.deployed !== undefined) ? true : undefined),
      { timeoutMs: 30 * 60_000, intervalMs: 200 },
    ).catch((err: Error) => {
      throw new Error(`${err.message}; the bridge's last lines:\n${tail(bridge.output())}`, { cause: err });
    });
    const ms = Math.max(...charts.map((c) => seen.get(c.chart)!.deployed!)) - t0;
    await removeFleet(api, namespace);
    return ms;
  } finally {
    stopWatch();
    await bridge.stop();
  }
}

/** Deletes a round's ArmadaCharts and waits until the bridge has uninstalled them (untimed). */
async function removeFleet(api: CustomObjectsApi, namespace: string): Promise<void> {
  const kind = { group: GROUP, version: VERSION, namespace, plural: kinds.ArmadaChart.plural };
  await api.deleteCollectionNamespacedCustomObject(kind);
  await until(
    `the ArmadaCharts of ${namespace} to be uninstalled and gone`,
    async () =>
      ((await api.listNamespacedCustomObject(kind)) as { items: unknown[] }).items.length ? undefined : true,
    { timeoutMs: 30 * 60_000, intervalMs: 500 },
  );
}

/** Flux's side of a round: the same charts as HelmReleases, timed until all are Ready, then removed. */
async function fluxRound(form: FluxForm, size: number, n: number): Promise<number> {
  const releases = `flux-fleet-${randomUUID().slice(0, 6)}-${n}`;
  try {
    return await form.deploy(planOf(fleet(size, releases), form.namespace));
  } finally {
    await form.remove();
  }
}

/**
 * Benchmark 10, a fleet against Flux: at each size, `size` standalone ArmadaCharts (one release of
 * examples/charts/settings each) created → all deployed, through the bridge and the product's
 * worker, beside the same releases as Flux HelmReleases (source- and helm-controller at their
 * defaults) created → all Ready, in alternating rounds.
 */
export async function runFleet(ctx: BenchContext, sizes: Sizes['fleet']): Promise<Record<string, unknown>> {
  const kubeconfig = ctx.kubeconfig;
  if (!kubeconfig) throw new Error('benchmark 10 needs the sandbox cluster (KUBECONFIG)');
  await installCrds();
  const worker = await startRealWorker(ctx, `bench-fleet-${randomUUID().slice(0, 8)}`);
  const dir = await mkdtemp(path.join(tmpdir(), 'armada-bench-fleet-'));
  const flux = await startFlux(dir, planOf(fleet(1, 'unused'), 'unused'), [FLUX_REQUEUE], {
    kubeconfig,
    log: ctx.log,
  });
  try {
    const bySize: Record<string, unknown> = {};
    for (const size of sizes.sizes) {
      const timings = { armada: [] as number[], flux: [] as number[] };
      const forms = [
        { name: 'armada' as const, run: (n: number) => armadaRound(ctx, worker.taskQueue, size, n) },
        { name: 'flux' as const, run: (n: number) => fluxRound(flux.forms[0], size, n) },
      ];
      for (let r = 0; r < sizes.rounds; r++) {
        for (const form of rotation(forms, r)) timings[form.name].push(await form.run(r + 1));
        ctx.log(
          `  ${size} charts, round ${r + 1}/${sizes.rounds}: armada ${timings.armada.at(-1)} ms, flux ${round(timings.flux.at(-1)!)} ms`,
        );
      }
      bySize[size] = {
        armadaMs: summarize(timings.armada),
        fluxMs: summarize(timings.flux),
        armadaVsFlux: round(median(timings.armada) / median(timings.flux), 2),
      };
    }
    return {
      what: `ArmadaCharts (examples/charts/settings, each its own release) created one after another → all deployed, bridge process + the product's worker, against the same releases as Flux HelmReleases (helm-controller --requeue-dependency=${FLUX_REQUEUE}, its defaults otherwise) → all Ready; ${sizes.rounds} rounds per size, order alternating`,
      sizes: bySize,
      target: { armadaVsFluxBelow: 1 },
    };
  } finally {
    await flux.stop();
    await worker.stop();
  }
}
