import { Client, Connection } from '@temporalio/client';
import { randomInt } from 'node:crypto';
import { mkdtemp, readFile, rm } from 'node:fs/promises';
import { hostname, tmpdir } from 'node:os';
import path from 'node:path';
import { parseAllDocuments } from 'yaml';
import { helm, uniqueName } from '../helpers/env';
import {
  SHOWN_DEADLINE_TOLERANCE_MS,
  TIMER_FIRING_TOLERANCE_MS,
  historyTimers,
  type HistoryEvent,
  type HistoryTimer,
} from '../helpers/histories';
import { applyObjects, installCrds, kubectl } from '../helpers/kube';
import { deployerRolloutWorkflowId } from '../../core/plan/names';
import {
  serveExampleCharts,
  type ExampleChartSources,
  type RemoteSourceType,
} from '../helpers/chart-servers';
import {
  WORKER_POLLING,
  eventually,
  grantAnyNamespace,
  startProcess,
  type ProductProcess,
} from '../helpers/processes';

/**
 * The cluster lane: the product in its production shape, on the Temporal cluster on PostgreSQL
 * that test/run.sh starts (deploy/temporal-cluster): three worker processes on one task queue,
 * each with a chart cache and helm homes of its own (a pod's disk), and two bridge replicas.
 *
 * One scenario, run twice in namespaces of their own: the example manifest (its four charts from
 * a tar archive, a Helm repository, an OCI registry and git), a chart canary and a Deployer are
 * applied, and once deployed, changed, so that every chart is upgraded and both canaries step
 * through a hold. The first run is the crash-free twin. During the second, the fault drill
 * SIGKILLs a random worker every few seconds, deletes its disk and starts a replacement with an
 * empty one; once, the worker killed is the one that has just prepared a chart. Every object and
 * every release must end as the twin's did, and each hold must end on the deadline the canary
 * showed for it (±1 s).
 */

const TEMPORAL = process.env.ARMADA_TEST_CLUSTER_TEMPORAL;
const WORKERS = 3;
const HOLD_SECONDS = 6;
/** The fault drill's pause between a replacement's first poll and the next kill. */
const KILL_EVERY_MS = 4_000;
/** Where each chart of the example manifest comes from. */
const SOURCES: Record<string, RemoteSourceType> = {
  settings: 'tar',
  backend: 'repo',
  web: 'oci',
  admin: 'git',
};
/** How a killed pod's disk is removed while its orphaned children may still write into it. */
const ORPHANS_MAY_WRITE = { recursive: true, force: true, maxRetries: 10, retryDelay: 100 };
const example = (file: string) => path.resolve(__dirname, '../../examples', file);

type K8sObject = {
  kind: string;
  metadata: { name: string; generation?: number; namespace?: string };
  spec: Record<string, any>; // eslint-disable-line @typescript-eslint/no-explicit-any
  status?: Record<string, any>; // eslint-disable-line @typescript-eslint/no-explicit-any
};

/** A worker process as a pod: its own chart cache and helm homes, gone when it is killed. */
class WorkerPod {
  readonly process: ProductProcess;
  readonly identity: string;
  constructor(
    readonly disk: string,
    env: NodeJS.ProcessEnv,
  ) {
    this.process = startProcess('dist/worker/main.js', {
      ...env,
      ARMADA_CHART_CACHE: path.join(disk, 'charts'),
      HELM_CACHE_HOME: path.join(disk, 'helm', 'cache'),
      HELM_CONFIG_HOME: path.join(disk, 'helm', 'config'),
      HELM_DATA_HOME: path.join(disk, 'helm', 'data'),
    });
    // The worker identity the SDK gives by default, as history events record it.
    this.identity = `${this.process.child.pid}@${hostname()}`;
  }

  /**
   * SIGKILL (its helm and git children live on, as orphans, as in the worker crash drill) and the
   * disk goes. An orphan may still be writing into it, so removal retries on ENOTEMPTY (CI saw a
   * git clone's `.git` refill between the listing and the rmdir).
   */
  async kill(): Promise<void> {
    await this.process.stop('SIGKILL');
    await rm(this.disk, ORPHANS_MAY_WRITE);
  }
}

/** What one run of the scenario ends with, with its namespace's name taken out. */
interface Outcome {
  objects: Record<string, unknown>;
  releases: Record<string, string[]>;
  deployments: string[];
}

describe('cluster lane: 3 workers and 2 bridges on a Temporal cluster on PostgreSQL, under worker kills', () => {
  const taskQueue = uniqueName('cluster');
  const twin = uniqueName('prod-twin');
  const drill = uniqueName('prod-drill');
  const leases = uniqueName('prod-lease');
  let work: string;
  let charts: ExampleChartSources;
  let connection: Connection;
  let client: Client;
  const bridges: ProductProcess[] = [];
  const pods: WorkerPod[] = [];
  let podCount = 0;

  async function startPod(): Promise<WorkerPod> {
    const pod = new WorkerPod(path.join(work, 'pods', String(podCount++)), {
      TEMPORAL_ADDRESS: TEMPORAL,
      ARMADA_TASK_QUEUE: taskQueue,
      ...charts.helmEnv,
    });
    pods.push(pod);
    await pod.process.printed(WORKER_POLLING);
    return pod;
  }

  /** The workers alive now. */
  const live = () =>
    pods.filter((p) => p.process.child.exitCode === null && p.process.child.signalCode === null);

  beforeAll(async () => {
    if (!TEMPORAL) throw new Error('ARMADA_TEST_CLUSTER_TEMPORAL is not set: run the suite with `npm test`');
    work = await mkdtemp(path.join(tmpdir(), 'armada-cluster-'));
    await installCrds();
    await kubectl('create', 'namespace', twin);
    await kubectl('create', 'namespace', drill);
    await kubectl('create', 'namespace', leases);
    charts = await serveExampleCharts(path.join(work, 'sources'), ['settings', 'backend', 'hello']);
    connection = await Connection.connect({ address: TEMPORAL });
    client = new Client({ connection });
    await Promise.all(Array.from({ length: WORKERS }, startPod));
    for (const namespace of [twin, drill]) grantAnyNamespace(namespace);
    for (let i = 0; i < 2; i++)
      bridges.push(
        startProcess('dist/bridge/main.js', {
          TEMPORAL_ADDRESS: TEMPORAL,
          ARMADA_TASK_QUEUE: taskQueue,
          ARMADA_NAMESPACES: `${twin},${drill}`,
          ARMADA_LEASE_NAMESPACE: leases,
        }),
      );
  }, 180_000);

  afterAll(async () => {
    await Promise.all([...bridges.map((b) => b.stop()), ...live().map((p) => p.kill())]);
    await charts?.close();
    await connection?.close();
    await kubectl('delete', 'namespace', twin, drill, leases, '--wait=false').catch(() => '');
    if (work) await rm(work, ORPHANS_MAY_WRITE);
  });

  /**
   * The example manifest with its releases in `namespace` and each chart from its remote source,
   * the example chart canary and the example Deployer, at `version` 1 or 2 (replicas, a value or
   * an image tag changed in every object), with short holds.
   */
  async function objects(namespace: string, version: 1 | 2): Promise<K8sObject[]> {
    const manifest = parseAllDocuments(await readFile(example('sequenced-manifest.yaml'), 'utf8')).map(
      (d) => d.toJS() as K8sObject,
    );
    for (const o of manifest.filter((o) => o.kind === 'ArmadaChart')) {
      o.spec.namespace = namespace;
      o.spec.source = charts.source(SOURCES[o.metadata.name], o.spec.chart_name);
      o.spec.values = { ...o.spec.values, version: `v${version}` };
    }
    const canary = parseAllDocuments(
      await readFile(example('canary-chart.yaml'), 'utf8'),
    )[0].toJS() as K8sObject;
    Object.assign(canary.spec, {
      namespace,
      source: charts.source('oci', 'hello'),
      values: { replicaCount: 4, image: { tag: `1.${version}.0` } },
      wait: { timeout: 120 },
      canary: { steps: [{ percent: 50, sleep: HOLD_SECONDS }, { percent: 100 }] },
    });
    const deployer = parseAllDocuments(
      await readFile(example('deployer.yaml'), 'utf8'),
    )[0].toJS() as K8sObject;
    Object.assign(deployer.spec.deployment, { namespace, replicas: 3, version: `1.2${version}.0` });
    deployer.spec.steps = [
      { percent: 33, sleep: HOLD_SECONDS },
      { percent: 66, sleep: HOLD_SECONDS },
      { percent: 100 },
    ];
    return [...manifest, canary, deployer];
  }

  const list = async (namespace: string): Promise<K8sObject[]> =>
    (
      JSON.parse(await kubectl('get', 'amf,acg,act,dpl', '-n', namespace, '-o', 'json')) as {
        items: K8sObject[];
      }
    ).items;

  /** Whether every object of `namespace` has finished with its current spec. */
  const finished = (items: K8sObject[], version: 1 | 2) =>
    items.length === 9 &&
    items.every((o) =>
      o.kind === 'Deployer'
        ? o.status?.phase === 'Completed' && o.status?.current_version === `1.2${version}.0`
        : o.status?.satisfied === true && o.status?.observedGeneration === o.metadata.generation,
    );

  /** Applies the scenario at `version` and waits until every object has finished with it. */
  async function deploy(namespace: string, version: 1 | 2, watch?: () => Promise<void>): Promise<void> {
    await applyObjects(namespace, await objects(namespace, version));
    await eventually(
      `every object of ${namespace} finished at version ${version}`,
      async () => {
        await watch?.();
        return finished(await list(namespace), version) || undefined;
      },
      { timeoutMs: 600_000 },
    );
  }

  async function outcome(namespace: string): Promise<Outcome> {
    const strip = (text: string) => text.replaceAll(namespace, 'NS');
    // `kubectl apply` updates the List's objects one by one, and the bridge starts a manifest's
    // run at its first changed chart: that run upgrades it, or, re-planned once the rest arrive,
    // starts over and finds it unchanged (previous_revision then the new one). Either ends on the
    // same revision; the release histories below would show an extra one.
    const settled = (reason: string) => reason.replace(/ (upgraded|unchanged)$/, ' at the new revision');
    const objects = Object.fromEntries(
      (await list(namespace)).map((o) => [
        `${o.kind}/${o.metadata.name}`,
        o.kind === 'Deployer'
          ? { phase: o.status?.phase, version: o.status?.current_version }
          : {
              state: o.status?.actual_state,
              satisfied: o.status?.satisfied,
              reason: o.status?.reason && settled(strip(String(o.status.reason))),
              revision: o.status?.helm?.revision,
            },
      ]),
    );
    const releases: Record<string, string[]> = {};
    for (const r of JSON.parse(await helm('list', '-n', namespace, '-o', 'json')) as {
      name: string;
    }[]) {
      const history = JSON.parse(await helm('history', r.name, '-n', namespace, '-o', 'json')) as {
        revision: number;
        status: string;
        chart: string;
        description: string;
      }[];
      releases[r.name] = history.map((h) => `${h.revision} ${h.status} ${h.chart} ${h.description}`);
    }
    const deployments = (
      JSON.parse(await kubectl('get', 'deployments', '-n', namespace, '-o', 'json')) as {
        items: { metadata: { name: string }; spec: { replicas: number; template: any } }[]; // eslint-disable-line @typescript-eslint/no-explicit-any
      }
    ).items
      .map(
        (d) =>
          `${d.metadata.name} ${d.spec.replicas} ${d.spec.template.spec.containers.map((c: { image: string }) => c.image).join(',')}`,
      )
      .sort();
    return { objects, releases, deployments };
  }

  /**
   * Each canary hold's deadline as its object's status last showed it, by object and percentage.
   * A deadline is durable once the workflow task that shows it completes (its timer starts
   * then); a worker killed inside that task takes it along, and the task's retry shows a new
   * deadline, which the hold keeps. Replaced deadlines are logged.
   */
  const shownDeadlines = new Map<string, number>();
  const replacedDeadlines: string[] = [];
  async function recordDeadlines(namespace: string): Promise<void> {
    for (const o of await list(namespace)) {
      const p = o.status?.progress;
      const deadline = p?.next_step_at ?? p?.wait;
      if (!deadline) continue;
      const key = `${o.kind}/${o.metadata.name} ${p?.percent ?? p?.percentage} %`;
      const before = shownDeadlines.get(key);
      if (before !== undefined && before !== Date.parse(deadline))
        replacedDeadlines.push(`${key}: ${new Date(before).toISOString()} → ${deadline}`);
      shownDeadlines.set(key, Date.parse(deadline));
    }
  }

  /** Each hold timer of the canary workflows in `namespace`, by object and percentage. */
  async function holdTimers(namespace: string): Promise<Map<string, HistoryTimer>> {
    const timers = new Map<string, HistoryTimer>();
    const canaries = [
      { key: 'ArmadaChart/shop', id: `ArmadaChart:${namespace}/shop/canary` },
      // A Deployer's canary is its run's child, its rollout (deployRun over its plan of one).
      { key: 'Deployer/podinfo', id: deployerRolloutWorkflowId(namespace, 'podinfo') },
    ];
    for (const { key, id } of canaries) {
      // Every run of the workflow ID (the first install's too), oldest first.
      const runs: string[] = [];
      for await (const r of client.workflow.list({ query: `WorkflowId = '${id}'` })) runs.push(r.runId);
      for (const runId of runs) {
        const events = (await client.workflow.getHandle(id, runId).fetchHistory()).events ?? [];
        for (const timer of historyTimers(events, ' — hold')) {
          const percent = /canary (\d+) %/.exec(timer.summary)?.[1];
          if (percent && timer.fired) timers.set(`${key} ${percent} %`, timer);
        }
      }
    }
    return timers;
  }

  it('the twin, crash-free, deploys and upgrades everything', async () => {
    const leaderIndex = await Promise.race(
      bridges.map((b, i) => b.printed('"started leading"').then(() => i)),
    );
    await deploy(twin, 1);
    await deploy(twin, 2);
    expect(bridges[1 - leaderIndex].output()).not.toContain('"started run"');
    const result = await outcome(twin);
    expect(Object.keys(result.releases).sort()).toEqual([
      'demo-admin',
      'demo-backend',
      'demo-settings',
      'demo-web',
      'shop',
    ]);
    for (const history of Object.values(result.releases)) expect(history).toHaveLength(2);
    // The workers share the task queue: activities ran on more than one of them.
    const identities = new Set<string>();
    for await (const run of client.workflow.list()) {
      if (!run.workflowId.includes(twin)) continue; // the server is shared with the upgrade drill
      for (const e of (await client.workflow.getHandle(run.workflowId, run.runId).fetchHistory()).events ??
        [])
        if (e.activityTaskStartedEventAttributes)
          identities.add(e.activityTaskStartedEventAttributes.identity!);
    }
    expect([...identities].every((id) => pods.some((p) => p.identity === id))).toBe(true);
    expect(identities.size).toBeGreaterThan(1);
  }, 900_000);

  it('under worker kills, every run ends as the twin’s, and holds keep their deadlines (±1 s)', async () => {
    const kills: string[] = [];
    let preparedAndKilled: { identity: string; workflowId: string; runId: string } | undefined;
    let stop = false;

    /** The worker that has just completed a prepareChart, if one is alive. */
    async function justPrepared(): Promise<
      { pod: WorkerPod; workflowId: string; runId: string } | undefined
    > {
      for await (const run of client.workflow.list({ query: `ExecutionStatus = 'Running'` })) {
        if (!run.workflowId.includes(drill)) continue; // the twin's workflows are not the drill's
        const events =
          (await client.workflow.getHandle(run.workflowId, run.runId).fetchHistory()).events ?? [];
        const prepare = new Set(
          events
            .filter((e) => e.activityTaskScheduledEventAttributes?.activityType?.name === 'prepareChart')
            .map((e) => String(e.eventId)),
        );
        const started = events.find(
          (e: HistoryEvent) =>
            e.activityTaskStartedEventAttributes &&
            prepare.has(String(e.activityTaskStartedEventAttributes.scheduledEventId)),
        );
        const pod = live().find((p) => p.identity === started?.activityTaskStartedEventAttributes?.identity);
        if (pod) return { pod, workflowId: run.workflowId, runId: run.runId };
      }
      return undefined;
    }

    async function replace(pod: WorkerPod, why: string): Promise<void> {
      await pod.kill();
      kills.push(why);
      await startPod();
    }

    const killer = (async () => {
      // First the worker that prepares the first chart, as soon as it has: the random kills that
      // follow wait for their replacements to poll, and on a loaded machine they could miss it.
      while (!stop && !preparedAndKilled) {
        const prepared = await justPrepared();
        if (prepared) {
          preparedAndKilled = {
            identity: prepared.pod.identity,
            workflowId: prepared.workflowId,
            runId: prepared.runId,
          };
          await replace(prepared.pod, `${prepared.pod.identity}, just after prepareChart`);
        } else await new Promise((resolve) => setTimeout(resolve, 250));
      }
      while (!stop) {
        const next = Date.now() + KILL_EVERY_MS;
        while (!stop && Date.now() < next) await new Promise((resolve) => setTimeout(resolve, 250));
        const alive = live();
        if (!stop) await replace(alive[randomInt(alive.length)], 'at random');
      }
    })();

    try {
      await deploy(drill, 1);
      await deploy(drill, 2, () => recordDeadlines(drill));
    } finally {
      stop = true;
      await killer;
    }

    const timers = await holdTimers(drill);
    // A hold without a fired timer gets NaN, which fails the bounds below.
    const lateness = [...shownDeadlines].map(([key, shown]) => {
      const { firedAt = NaN, deadline = NaN } = timers.get(key) ?? {};
      return { key, firing: firedAt - deadline, shown: deadline - shown };
    });
    console.log(
      `cluster lane drill: ${kills.length} kills (${kills.join('; ')}); holds fired ${lateness
        .map((l) => `${l.key}: ${l.firing} ms from its deadline, which lay ${l.shown} ms from the one shown`)
        .join(', ')}; deadlines replaced: ${replacedDeadlines.join(', ') || 'none'}`,
    );

    expect(await outcome(drill)).toEqual(await outcome(twin));
    // Every 4 s after a replacement polls: 5 to 8 kills on a quiet machine, 4 in a full suite.
    expect(kills.length).toBeGreaterThanOrEqual(3);

    // The worker that prepared a chart was killed, and a live one deployed it.
    expect(preparedAndKilled).toBeDefined();
    const { workflowId, runId } = preparedAndKilled!;
    const events = (await client.workflow.getHandle(workflowId, runId).fetchHistory()).events ?? [];
    const identities = events
      .filter((e) => e.activityTaskStartedEventAttributes)
      .map((e) => e.activityTaskStartedEventAttributes!.identity);
    expect(identities).toContain(preparedAndKilled!.identity);
    expect(identities[identities.length - 1]).not.toBe(preparedAndKilled!.identity);

    expect(lateness.map((l) => l.key).sort()).toEqual([
      'ArmadaChart/shop 50 %',
      'Deployer/podinfo 33 %',
      'Deployer/podinfo 66 %',
    ]);
    // Each hold is a server-side timer: it fired on its deadline whatever happened to the worker,
    for (const { firing } of lateness)
      expect(Math.abs(firing)).toBeLessThanOrEqual(TIMER_FIRING_TOLERANCE_MS);
    // the deadline its object showed last, but for the showing task's processing time.
    for (const { shown } of lateness)
      expect(Math.abs(shown)).toBeLessThanOrEqual(SHOWN_DEADLINE_TOLERANCE_MS);
  }, 900_000);
});
