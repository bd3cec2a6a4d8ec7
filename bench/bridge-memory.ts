import { CoreV1Api } from '@kubernetes/client-node';
import { randomUUID } from 'node:crypto';
import { setTimeout as sleep } from 'node:timers/promises';
import { kubeConfig } from '../kube/client';
import { MANAGED_BY_LABEL, RELEASE_NAME_ANNOTATION, RELEASE_NAMESPACE_ANNOTATION } from '../core/labels';
import { installCrds } from '../test/helpers/kube';
import { roundNamespace, startBridge } from './bridge';
import type { Sizes } from './config';
import type { BenchContext } from './context';
import { mapLimit } from './history';
import { mib } from './overhead';
import { currentRss, peakRss, type BenchProcess } from './processes';
import { median, round } from './stats';

/** What the bridge prints once every watch has listed, with how many Helm objects it kept. */
const LISTED = /"message":"watches listed","driftObjectsKept":(\d+)/;

interface Memory {
  /** VmHWM once every watch has listed: the most the start (its lists) took. */
  peakRssBytes: number;
  /** VmRSS SETTLE_SECONDS after that: what the bridge holds, its lists' garbage collected. */
  settledRssBytes: number;
  driftObjectsKept: number;
}

/** How long after listing the settled RSS is read (V8 returns freed heap pages after some seconds idle). */
const SETTLE_SECONDS = 20;

/** One round: the bridge with no Helm objects, and the one with the unmanaged ones. */
interface Round {
  none: Memory;
  crowded: Memory;
}

/** Releases the unmanaged objects belong to: as many objects per release as a large chart has. */
const OBJECTS_PER_RELEASE = 50;

/**
 * `count` ConfigMaps as Helm 4 leaves them (its label and release annotations, written by field
 * manager `helm`, so with managedFields), of releases no ArmadaChart deploys.
 */
async function createUnmanaged(ctx: BenchContext, namespace: string, count: number, concurrency: number) {
  const api = kubeConfig().makeApiClient(CoreV1Api);
  const names = Array.from({ length: count }, (_, i) => `helm-${String(i).padStart(5, '0')}`);
  const t0 = Date.now();
  await mapLimit(names, concurrency, (name, i) =>
    api.createNamespacedConfigMap({
      namespace,
      fieldManager: 'helm',
      body: {
        metadata: {
          name,
          labels: { [MANAGED_BY_LABEL]: 'Helm' },
          annotations: {
            [RELEASE_NAME_ANNOTATION]: `other-${Math.floor(i / OBJECTS_PER_RELEASE)}`,
            [RELEASE_NAMESPACE_ANNOTATION]: namespace,
          },
        },
        data: { 'settings.yaml': `name: ${name}\nreplicas: 2\nimage: registry.test/app:v1\n` },
      },
    }),
  );
  ctx.log(`  ${count} unmanaged Helm ConfigMaps created in ${Date.now() - t0} ms`);
}

/** Once the bridge has listed: its peak RSS, and how many Helm objects it kept. */
async function listed(bridge: BenchProcess) {
  await bridge.printed('"message":"watches listed"');
  return {
    peakRssBytes: bytes(peakRss(bridge.child.pid!)),
    driftObjectsKept: Number(LISTED.exec(bridge.output())![1]),
  };
}

const bytes = (value: number | undefined): number => {
  if (value === undefined) throw new Error('the bridge exited');
  return value;
};

/**
 * Two bridges side by side, started at once: one watching for drift a namespace with no Helm
 * objects, the other one holding `unmanaged` Helm ConfigMaps of releases it does not manage.
 * Each watches a namespace of its own for the armada kinds (with no objects) and holds its Lease
 * there.
 */
async function runRound(
  ctx: BenchContext,
  drift: { none: string; crowded: string },
  n: number,
): Promise<Round> {
  const taskQueue = `bench-bridge-memory-${randomUUID().slice(0, 8)}`;
  const start = async (driftNamespace: string, what: string) =>
    (
      await startBridge(ctx, await roundNamespace(`memory-${what}`, n), taskQueue, {
        ARMADA_DRIFT_NAMESPACES: driftNamespace,
      })
    ).bridge;
  const bridges = await Promise.all([start(drift.none, 'none'), start(drift.crowded, 'crowded')]);
  try {
    const [noneListed, crowdedListed] = await Promise.all(bridges.map(listed));
    await sleep(SETTLE_SECONDS * 1000);
    const [none, crowded] = [noneListed, crowdedListed].map((m, i) => ({
      ...m,
      settledRssBytes: bytes(currentRss(bridges[i].child.pid!)),
    }));
    ctx.log(
      `  round ${n}: RSS settled ${mib(none.settledRssBytes)} / ${mib(crowded.settledRssBytes)} MiB, peak ${mib(none.peakRssBytes)} / ${mib(crowded.peakRssBytes)} MiB (none / unmanaged objects)`,
    );
    return { none, crowded };
  } finally {
    await Promise.all(bridges.map((b) => b.stop()));
  }
}

/**
 * Benchmark 9, bridge memory: the bridge's RSS with `unmanaged` Helm-labelled objects of releases
 * it does not manage in the namespace it watches for drift, ÷ its RSS with none, the two bridges
 * side by side in each round; medians of the rounds. The target is on the settled RSS (what the
 * bridge keeps); the peak (what listing took) is beside it.
 */
export async function runBridgeMemory(
  ctx: BenchContext,
  sizes: Sizes['bridgeMemory'],
): Promise<Record<string, unknown>> {
  if (!ctx.kubeconfig) throw new Error('benchmark 9 needs the sandbox cluster (KUBECONFIG)');
  await installCrds();
  const drift = {
    none: await roundNamespace('drift-none', 0),
    crowded: await roundNamespace('drift-helm', 0),
  };
  try {
    await createUnmanaged(ctx, drift.crowded, sizes.unmanaged, sizes.createConcurrency);
    const rounds: Round[] = [];
    for (let n = 1; n <= sizes.rounds; n++) rounds.push(await runRound(ctx, drift, n));
    const medianOf = (pick: (r: Round) => number) => median(rounds.map(pick));
    const peak = {
      none: medianOf((r) => r.none.peakRssBytes),
      crowded: medianOf((r) => r.crowded.peakRssBytes),
    };
    const settled = {
      none: medianOf((r) => r.none.settledRssBytes),
      crowded: medianOf((r) => r.crowded.settledRssBytes),
    };
    const settledRatio = round(settled.crowded / settled.none, 2);
    return {
      what: `${sizes.unmanaged} Helm-labelled ConfigMaps of releases no ArmadaChart deploys (${OBJECTS_PER_RELEASE} per release) in the namespace the bridge watches for drift, against a bridge whose drift namespace is empty; both side by side, ${sizes.rounds} rounds; RSS ${SETTLE_SECONDS} s after every watch listed (settled), and peak RSS at that point`,
      settledRssMiB: { none: mib(settled.none), unmanaged: mib(settled.crowded) },
      peakRssMiB: { none: mib(peak.none), unmanaged: mib(peak.crowded) },
      settledRssRatio: settledRatio,
      peakRssRatio: round(peak.crowded / peak.none, 2),
      driftObjectsKept: rounds.map((r) => r.crowded.driftObjectsKept),
      perRound: rounds.map((r) => ({
        none: { settledRssMiB: mib(r.none.settledRssBytes), peakRssMiB: mib(r.none.peakRssBytes) },
        unmanaged: {
          settledRssMiB: mib(r.crowded.settledRssBytes),
          peakRssMiB: mib(r.crowded.peakRssBytes),
        },
      })),
      target: { settledRssRatio: 1.2, met: settledRatio <= 1.2 },
    };
  } finally {
    const api = kubeConfig().makeApiClient(CoreV1Api);
    await Promise.all(
      Object.values(drift).map((name) => api.deleteNamespace({ name }).catch(() => undefined)),
    );
  }
}
