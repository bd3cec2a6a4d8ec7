import { CustomObjectsApi, PatchStrategy, setHeaderOptions } from '@kubernetes/client-node';
import type { WorkflowExecutionInfo } from '@temporalio/client';
import { mkdtemp, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import path from 'node:path';
import { GROUP, VERSION } from '../../api/common';
import { kinds } from '../../api/kinds';
import { objectWorkflowId } from '../../core/plan/names';
import type { RunMemo } from '../../core/plan/specs';
import { helm, kubeConfig, sharedWorker, uniqueName } from '../helpers/env';
import { applyObjects, installCrds, kubectl, settingsChart } from '../helpers/kube';
import { eventually, startBridge, type ProductProcess } from '../helpers/processes';

const CHARTS = 200;
/** Short, so a bridge started after a SIGKILL waits little for the dead one's Lease to expire. */
const LEASE_SECONDS = 3;
/** How long the runs get to settle after the last kill (2 shared cores: patient, but bounded). */
const SETTLE_MS = 360_000;

/**
 * What happens to each of the 200 charts, by its index: 20 deleted right after creation, 60
 * updated once, 20 updated twice, 20 updated then deleted, and 80 left alone, 20 of which are
 * deleted once they have deployed (the first 20 to get there).
 */
type Fate = 'deletedAtOnce' | 'updatedOnce' | 'updatedTwice' | 'updatedThenDeleted' | 'untouched';
const fates: Fate[] = [
  'deletedAtOnce',
  'updatedOnce',
  'updatedOnce',
  'updatedOnce',
  'updatedTwice',
  'updatedThenDeleted',
  'untouched',
  'untouched',
  'untouched',
  'untouched',
];
const names = Array.from({ length: CHARTS }, (_, i) => `c-${String(i).padStart(3, '0')}`);
const fated = (fate: Fate) => names.filter((_, i) => fates[i % fates.length] === fate);

interface Chart {
  metadata: { name: string; generation: number; deletionTimestamp?: string; finalizers?: string[] };
  status?: { satisfied?: boolean };
}

/** `helm list` (Helm 4 has no --all) of releases in any state. */
const everyState = ['--deployed', '--failed', '--pending', '--superseded', '--uninstalled', '--uninstalling'];

/** How often `text` occurs in a log. */
const count = (log: string, text: string) => log.split(text).length - 1;

/** Runs by workflow ID, each ID's runs in the order they started. */
function byWorkflowId(runs: WorkflowExecutionInfo[]): Map<string, WorkflowExecutionInfo[]> {
  const ids = new Map<string, WorkflowExecutionInfo[]>();
  for (const run of runs) ids.set(run.workflowId, [...(ids.get(run.workflowId) ?? []), run]);
  for (const own of ids.values()) own.sort((a, b) => a.startTime.getTime() - b.startTime.getTime());
  return ids;
}

describe('bridge churn: 200 charts created, updated and deleted while the bridge is killed twice (processes, sandbox)', () => {
  const crs = uniqueName('churn');
  const releases = uniqueName('churn-rel');
  const harness = sharedWorker();
  const api = kubeConfig().makeApiClient(CustomObjectsApi);
  const plural = kinds.ArmadaChart.plural;

  const bridges: ProductProcess[] = [];
  /** The bridge that runs now; the test kills it, and one that exits by itself is replaced. */
  let current: ProductProcess | undefined;
  /** Bridges that exited by themselves (a leader that lost its Lease does) and were replaced. */
  let replaced = 0;
  let finished = false;
  /** Starts a bridge, restarted when it exits by itself, as its Deployment would restart it. */
  const launchBridge = (): ProductProcess => {
    const bridge = startBridge(crs, {
      ARMADA_TASK_QUEUE: harness().taskQueue,
      ARMADA_LEASE_SECONDS: String(LEASE_SECONDS),
    });
    bridges.push(bridge);
    current = bridge;
    bridge.child.once('exit', () => {
      if (finished || bridge !== current) return;
      replaced++;
      launchBridge();
    });
    return bridge;
  };
  /** SIGKILL the running bridge (its Lease stays held until it expires) and start a new one. */
  const killBridge = async () => {
    const victim = current!;
    current = undefined;
    await victim.stop('SIGKILL');
    launchBridge();
  };
  const bridgeLogs = () => bridges.map((b) => b.output()).join('\n');
  /** How many log lines with this message all the bridges so far printed. */
  const logged = (message: string) => count(bridgeLogs(), `"message":"${message}"`);
  /** `eventually`, showing the bridges' last lines when it times out. */
  const until = <T>(what: string, check: () => Promise<T | undefined>, timeoutMs: number) =>
    eventually(what, check, { timeoutMs }).catch((err: Error) => {
      const tail = bridgeLogs().split('\n').slice(-30).join('\n');
      throw new Error(`${err.message.split(';')[0]}; the bridges' last lines:\n${tail}`);
    });

  /** One `kubectl apply` of them all, as a person would create or change them; `rev` ends up in each ConfigMap. */
  const applyCharts = (which: string[], rev: number) =>
    applyObjects(
      crs,
      which.map((name) => settingsChart(name, releases, { rev: String(rev) }, { delete: { timeout: 60 } })),
      { serverSide: true },
    );
  const deleteCharts = (which: string[]) => kubectl('delete', 'act', '-n', crs, '--wait=false', ...which);
  const listCharts = async () =>
    (
      (await api.listNamespacedCustomObject({ group: GROUP, version: VERSION, namespace: crs, plural })) as {
        items: Chart[];
      }
    ).items;
  /** Every run of every chart's workflow (`ArmadaChart:<crs>/<name>`), closed or not. */
  const listRuns = async () => {
    const runs: WorkflowExecutionInfo[] = [];
    for await (const run of harness().client.workflow.list({
      query: `WorkflowId STARTS_WITH 'ArmadaChart:${crs}/'`,
    }))
      runs.push(run);
    return runs;
  };
  const memoOf = (run: WorkflowExecutionInfo) => (run.memo ?? {}) as unknown as RunMemo;
  const specsOf = (name: string, generation: number) => `ArmadaChart/${name}@${generation}`;
  const describeRuns = (runs: WorkflowExecutionInfo[]) =>
    runs
      .map((r) => `${r.runId.slice(0, 8)} ${r.status.name} ${memoOf(r).mode} ${memoOf(r).specs ?? '-'}`)
      .join('; ');

  /**
   * Whether the churn has settled: no chart on its way out, none of the deleted ones left, no run
   * in flight, and every live chart's current generation deployed by a completed run. Returns what
   * is still missing (for the timeout's message): nothing once settled.
   */
  const unsettled = (charts: Chart[], runs: WorkflowExecutionInfo[], deleted: Set<string>): string[] => {
    const missing: string[] = [];
    const byId = byWorkflowId(runs);
    for (const c of charts) {
      const { name, generation } = c.metadata;
      if (deleted.has(name))
        missing.push(`${name}: deleted but still there (finalizers ${c.metadata.finalizers})`);
      const own = byId.get(objectWorkflowId('ArmadaChart', crs, name)) ?? [];
      const done = own.some(
        (r) =>
          memoOf(r).specs === specsOf(name, generation) &&
          memoOf(r).mode === 'deploy' &&
          r.status.name === 'COMPLETED',
      );
      if (!done)
        missing.push(`${name}@${generation}: no completed deploy run yet; runs: ${describeRuns(own)}`);
    }
    for (const r of runs)
      if (r.status.name === 'RUNNING') missing.push(`${r.workflowId}: still running (${describeRuns([r])})`);
    return missing;
  };

  /** Polls the objects and the runs until the churn has settled; throws at `deadline`. */
  const settled = async (deleted: Set<string>, deadline: number) => {
    for (;;) {
      const [charts, runs] = await Promise.all([listCharts(), listRuns()]);
      const missing = unsettled(charts, runs, deleted);
      if (missing.length === 0) return { charts, runs };
      if (Date.now() > deadline) {
        const file = path.join(await mkdtemp(path.join(tmpdir(), 'armada-churn-')), 'bridges.log');
        await writeFile(file, bridgeLogs());
        throw new Error(
          `the churn did not settle in time; ${missing.length} things left, e.g.:\n` +
            `${missing.slice(0, 15).join('\n')}\nthe bridges' logs: ${file}`,
        );
      }
      await new Promise((resolve) => setTimeout(resolve, 1000));
    }
  };

  beforeAll(async () => {
    await installCrds();
    await kubectl('create', 'namespace', crs);
    await kubectl('create', 'namespace', releases);
  });
  afterAll(async () => {
    finished = true;
    await Promise.all(bridges.map((b) => b.stop()));
    // Nobody is left to finalize the live charts: let their namespace go without them.
    const left = await listCharts().catch(() => []);
    await Promise.all(
      left.map((c) =>
        api
          .patchNamespacedCustomObject(
            {
              group: GROUP,
              version: VERSION,
              namespace: crs,
              plural,
              name: c.metadata.name,
              body: { metadata: { finalizers: null } },
            },
            setHeaderOptions('Content-Type', PatchStrategy.MergePatch),
          )
          .catch(() => undefined),
      ),
    );
    await kubectl('delete', 'namespace', crs, releases, '--wait=false');
  });

  it('every live chart ends with one completed run of its latest generation, every deleted one uninstalled and gone, and no workflow ID ever had two runs at once', async () => {
    const began = Date.now();

    // Create all 200 and delete 20 of them at once; meanwhile, kill the bridge once it has
    // started 30 runs (objects still arriving).
    await launchBridge().printed('"leading: watching"');
    const deletedAtOnce = fated('deletedAtOnce');
    let createdIn = 0;
    let startsBeforeFirstKill = 0;
    await Promise.all([
      until(
        'the first bridge starting runs',
        async () => logged('started run') >= 30 || undefined,
        180_000,
      ).then(() => {
        startsBeforeFirstKill = logged('started run');
        return killBridge();
      }),
      (async () => {
        const applying = Date.now();
        await applyCharts(names, 1);
        createdIn = Date.now() - applying;
        await deleteCharts(deletedAtOnce);
      })(),
    ]);

    // A new bridge; meanwhile 100 charts change (some of them with runs in flight).
    const updatedOnce = fated('updatedOnce');
    const updatedTwice = fated('updatedTwice');
    const updatedThenDeleted = fated('updatedThenDeleted');
    await applyCharts([...updatedOnce, ...updatedTwice, ...updatedThenDeleted], 2);

    // Once 20 untouched charts have deployed, delete them and the 20 just updated, and update
    // 20 charts a second time; kill the bridge again while it finalizes the deleted ones.
    const untouched = new Set(fated('untouched'));
    const deletedAfterDeploy = await until(
      '20 untouched charts deployed',
      async () => {
        const deployed = (await listCharts())
          .filter((c) => untouched.has(c.metadata.name) && c.status?.satisfied)
          .map((c) => c.metadata.name);
        return deployed.length >= 20 ? deployed.slice(0, 20) : undefined;
      },
      240_000,
    );
    const finalizedBefore = logged('finalizer removed');
    await deleteCharts([...deletedAfterDeploy, ...updatedThenDeleted]);
    await applyCharts(updatedTwice, 3);
    await until(
      'the bridge removing finalizers',
      async () => logged('finalizer removed') - finalizedBefore >= 10 || undefined,
      240_000,
    );
    await killBridge();
    const lastKill = Date.now();

    // Then wait until nothing is left to do.
    const deleted = new Set([...deletedAtOnce, ...deletedAfterDeploy, ...updatedThenDeleted]);
    const live = names.filter((n) => !deleted.has(n));
    const { charts, runs } = await settled(deleted, lastKill + SETTLE_MS);
    const settledIn = Date.now() - lastKill;

    // 4. The objects left are the 200 minus the deleted ones.
    expect(charts.map((c) => c.metadata.name).sort()).toEqual(live);
    expect(charts).toHaveLength(CHARTS - deleted.size);

    // 1. Each live chart: one run for its current generation's specs, a deploy that completed,
    // and that run is the latest of its workflow ID.
    const byId = byWorkflowId(runs);
    const generation = new Map(charts.map((c) => [c.metadata.name, c.metadata.generation]));
    const notOnce = live.flatMap((name) => {
      const own = byId.get(objectWorkflowId('ArmadaChart', crs, name)) ?? [];
      const mine = own.filter((r) => memoOf(r).specs === specsOf(name, generation.get(name)!));
      return mine.length === 1 && memoOf(mine[0]).mode === 'deploy' && mine[0].status.name === 'COMPLETED'
        ? []
        : [`${name}@${generation.get(name)}: ${describeRuns(own)}`];
    });
    expect(notOnce).toEqual([]);
    const latest = await Promise.all(
      live.map(async (name) => {
        const d = await harness()
          .client.workflow.getHandle(objectWorkflowId('ArmadaChart', crs, name))
          .describe();
        const memo = d.memo as unknown as RunMemo;
        return `${name} ${d.status.name} ${memo.mode} ${memo.specs}`;
      }),
    );
    expect(latest).toEqual(
      live.map((name) => `${name} COMPLETED deploy ${specsOf(name, generation.get(name)!)}`),
    );
    // Their releases carry the values of that generation.
    const configMaps = JSON.parse(await kubectl('get', 'configmaps', '-n', releases, '-o', 'json')) as {
      items: { metadata: { name: string }; data?: Record<string, string> }[];
    };
    const revs = new Map(configMaps.items.map((cm) => [cm.metadata.name, cm.data?.rev]));
    const rev = (name: string) =>
      updatedTwice.includes(name) ? '3' : updatedOnce.includes(name) ? '2' : '1';
    expect(live.map((name) => `${name} ${revs.get(name)}`)).toEqual(
      live.map((name) => `${name} ${rev(name)}`),
    );

    // 2. Each deleted chart: no release (in any state) and no ConfigMap.
    const releasesLeft = JSON.parse(
      await helm('list', '-n', releases, ...everyState, '--max', '1000', '-o', 'json'),
    ) as { name: string; status: string }[];
    expect(releasesLeft.filter((r) => deleted.has(r.name)).map((r) => `${r.name} ${r.status}`)).toEqual([]);
    expect(releasesLeft.map((r) => `${r.name} ${r.status}`).sort()).toEqual(
      live.map((name) => `${name} deployed`),
    );
    expect([...revs.keys()].filter((name) => deleted.has(name))).toEqual([]);

    // 3. No workflow ID had two runs at once (a run continued as new closes as the next starts).
    const overlaps: string[] = [];
    for (const [id, own] of byId) {
      own.forEach((a, i) => {
        for (const b of own.slice(i + 1))
          if (b.startTime.getTime() < (a.closeTime?.getTime() ?? Infinity))
            overlaps.push(
              `${id}: ${describeRuns([a])} [${a.startTime.toISOString()}, ${a.closeTime?.toISOString()}] ` +
                `and ${describeRuns([b])} from ${b.startTime.toISOString()}`,
            );
      });
    }
    expect(overlaps).toEqual([]);

    const tally = new Map<string, number>();
    for (const r of runs) tally.set(r.status.name, (tally.get(r.status.name) ?? 0) + 1);
    const statuses = [...tally].map(([status, n]) => `${n} ${status.toLowerCase()}`).join(', ');
    console.log(
      `churn: ${CHARTS} charts created (apply ${(createdIn / 1000).toFixed(1)} s), ` +
        `${updatedOnce.length + updatedTwice.length + updatedThenDeleted.length} updated ` +
        `(${updatedOnce.length + 2 * updatedTwice.length + updatedThenDeleted.length} updates), ${deleted.size} deleted; ` +
        `bridge killed twice (first after ${startsBeforeFirstKill} starts), ${replaced} replaced after exiting by itself; ` +
        `${runs.length} runs (${statuses}), ${logged('started run')} "started run" and ${logged('re-plan sent')} "re-plan sent" log lines; ` +
        `settled ${(settledIn / 1000).toFixed(1)} s after the last kill, ${((Date.now() - began) / 1000).toFixed(1)} s in all`,
    );
  }, 900_000);
});
