import { Client, Connection, type WorkflowExecutionInfo } from '@temporalio/client';
import { execFile, spawn, type ChildProcess } from 'node:child_process';
import { readFileSync } from 'node:fs';
import { mkdtemp, open, readFile, readlink, rm, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import path from 'node:path';
import { setTimeout as sleep } from 'node:timers/promises';
import { promisify } from 'node:util';
import { toolPath } from '../../activities/tools';
import { approveSignal, progressQuery } from '../../workflows/messages';
import { objectWorkflowId } from '../../core/plan/names';
import type { RunMemo } from '../../core/plan/specs';
import { helm, uniqueName } from '../helpers/env';
import {
  WORKER_POLLING,
  eventually,
  startBridge,
  startProcess,
  type ProductProcess,
} from '../helpers/processes';

const repo = path.resolve(__dirname, '../..');
const run = promisify(execFile);
/** How long kube-apiserver stays down. */
const OUTAGE_MS = 30_000;

/** How a stopped kube-apiserver is started again: exactly as kwokctl started it. */
interface SavedProcess {
  argv: string[];
  cwd: string;
  env: NodeJS.ProcessEnv;
}

/**
 * A sandbox cluster of the drill's own (deploy/sandbox/cluster.sh with its own directory and
 * name), so stopping its kube-apiserver and compacting its etcd touch no other test.
 */
class OwnSandbox {
  readonly name = uniqueName('outage');
  dir = '';

  get kubeconfig(): string {
    return path.join(this.dir, 'kubeconfig');
  }
  private get clusterDir(): string {
    return path.join(this.dir, 'kwok', 'clusters', this.name);
  }
  private pidFile(component: string): string {
    return path.join(this.clusterDir, 'pids', `${component}.pid`);
  }

  async cluster(command: 'up' | 'down'): Promise<void> {
    this.dir ||= await mkdtemp(path.join(tmpdir(), 'armada-outage-'));
    await run('bash', ['deploy/sandbox/cluster.sh', command], {
      cwd: repo,
      env: { ...process.env, SANDBOX_DIR: this.dir, SANDBOX_NAME: this.name },
    });
  }

  async kubectl(...args: string[]): Promise<string> {
    return (await run(toolPath('kubectl'), ['--kubeconfig', this.kubeconfig, ...args], { cwd: repo })).stdout;
  }

  async helm(...args: string[]): Promise<string> {
    return helm('--kubeconfig', this.kubeconfig, ...args);
  }

  /** How a control-plane process of the sandbox was started: its argv, cwd and environment. */
  async noteProcess(component: string): Promise<SavedProcess & { pid: number }> {
    const pid = Number(await readFile(this.pidFile(component), 'utf8'));
    const proc = `/proc/${pid}`;
    const argv = (await readFile(`${proc}/cmdline`, 'utf8')).split('\0').filter(Boolean);
    const env = Object.fromEntries(
      (await readFile(`${proc}/environ`, 'utf8'))
        .split('\0')
        .filter(Boolean)
        .map((kv) => [kv.slice(0, kv.indexOf('=')), kv.slice(kv.indexOf('=') + 1)]),
    );
    return { pid, argv, cwd: await readlink(`${proc}/cwd`), env };
  }

  /** Starts a control-plane process again as it was (its pid where kwokctl and cluster.sh look). */
  private async startAgain(component: string, saved: SavedProcess): Promise<ChildProcess> {
    const log = await open(path.join(this.clusterDir, 'logs', `${component}.log`), 'a');
    const child = spawn(saved.argv[0], saved.argv.slice(1), {
      cwd: saved.cwd,
      env: saved.env,
      detached: true,
      stdio: ['ignore', log.fd, log.fd],
    });
    child.unref();
    await log.close();
    await writeFile(this.pidFile(component), String(child.pid));
    return child;
  }

  /** SIGKILLs kube-apiserver, after noting how it was started. */
  async stopApiServer(): Promise<SavedProcess> {
    const { pid, ...saved } = await this.noteProcess('kube-apiserver');
    process.kill(pid, 'SIGKILL');
    await eventually(
      'kube-apiserver gone',
      async () =>
        await this.kubectl('get', '--raw', '/readyz', '--request-timeout=5s').then(
          () => undefined,
          () => true,
        ),
    );
    return saved;
  }

  /** Starts kube-apiserver as it was and waits until it serves. */
  async startApiServer(saved: SavedProcess): Promise<void> {
    const child = await this.startAgain('kube-apiserver', saved);
    // Its log shows why, if it exits or never gets ready (one run waited 120 s in vain).
    const logPath = path.join(this.clusterDir, 'logs', 'kube-apiserver.log');
    const output = () => readFileSync(logPath, 'utf8').slice(-6000);
    await eventually(
      'kube-apiserver ready again',
      async () =>
        (await this.kubectl('get', '--raw', '/readyz', '--request-timeout=5s')) === 'ok' ? true : undefined,
      { process: { child, output } },
    );
  }

  /**
   * Starts again each noted process that has exited, as its supervisor (the kubelet of a static
   * pod, systemd) would: kube-controller-manager and kube-scheduler exit when they cannot renew
   * their leader lease through an outage longer than its renew deadline (10 s). Returns which.
   */
  async restartExited(noted: Map<string, SavedProcess & { pid: number }>): Promise<string[]> {
    const restarted: string[] = [];
    for (const [component, { pid, ...saved }] of noted) {
      const running = await readFile(`/proc/${pid}/cmdline`, 'utf8').then(
        (cmdline) => cmdline.startsWith(saved.argv[0]),
        () => false,
      );
      if (running) continue;
      await this.startAgain(component, saved);
      restarted.push(component);
    }
    return restarted;
  }

  /** Compacts etcd's history up to its current revision: every older resourceVersion is gone. */
  async compactEtcd(saved: SavedProcess): Promise<number> {
    const endpoints = saved.argv.find((a) => a.startsWith('--etcd-servers='))!.split('=')[1];
    const etcdctl = (...args: string[]) => run(toolPath('etcdctl'), [`--endpoints=${endpoints}`, ...args]);
    const status = JSON.parse((await etcdctl('endpoint', 'status', '-w', 'json')).stdout) as {
      Status: { header: { revision: number } };
    }[];
    const revision = status[0].Status.header.revision;
    await etcdctl('compact', String(revision));
    return revision;
  }
}

interface ChartObject {
  metadata: { name: string; generation: number };
  status?: { satisfied?: boolean; observedGeneration?: number; actual_state?: string };
}

/**
 * Drill 4 (and drill 2's watch expiry): kube-apiserver goes away for 30 s in the middle of a
 * manifest run, while the bridge is frozen (SIGSTOP). The run waits at its approval gate when
 * the API server stops; it is approved during the outage, so its next group's activities meet
 * the dead API server and retry. Once the API server is back, charts are created, changed and
 * deleted while the bridge is still frozen, etcd is compacted, and the bridge resumes: its
 * watches, broken by the restart, come back with resourceVersions etcd no longer has (410 Gone),
 * and it must list again and act on every change exactly once.
 */
describe('drill: kube-apiserver down for 30 s mid-run; the bridge frozen through it, its watches expired by an etcd compaction', () => {
  const sandbox = new OwnSandbox();
  const crs = 'outage-crs';
  const releases = 'outage-releases';
  const taskQueue = uniqueName('outage-queue');
  let connection: Connection;
  let client: Client;
  let worker: ProductProcess | undefined;
  let bridge: ProductProcess | undefined;

  beforeAll(async () => {
    await sandbox.cluster('up');
    await sandbox.kubectl('apply', '--server-side', '--force-conflicts', '-f', 'deploy/crds/');
    await sandbox.kubectl('wait', '--for=condition=Established', '--timeout=60s', '-f', 'deploy/crds/');
    await sandbox.kubectl('apply', '--server-side', '--force-conflicts', '-f', 'deploy/admission/');
    await sandbox.kubectl('create', 'namespace', crs);
    await sandbox.kubectl('create', 'namespace', releases);
    connection = await Connection.connect({ address: process.env.TEMPORAL_ADDRESS! });
    client = new Client({ connection });
  }, 300_000);
  afterAll(async () => {
    if (bridge?.child.pid) process.kill(bridge.child.pid, 'SIGCONT');
    await bridge?.stop('SIGKILL');
    await worker?.stop('SIGKILL');
    await connection?.close();
    await sandbox.cluster('down');
    await rm(sandbox.dir, { recursive: true, force: true });
  }, 120_000);

  const chart = (name: string, location: string, values: Record<string, unknown>) => ({
    apiVersion: 'armada.airshipit.org/v1alpha1',
    kind: 'ArmadaChart',
    metadata: { name },
    spec: { release: name, namespace: releases, source: { type: 'local', location }, values },
  });
  /** A standalone chart of one ConfigMap; `rev` is in its data. */
  const standalone = (name: string, rev: number) =>
    chart(name, 'examples/charts/settings', { settings: { rev } });
  const apply = async (objects: object[]) => {
    const file = path.join(sandbox.dir, `${uniqueName('objects')}.json`);
    await writeFile(file, JSON.stringify({ apiVersion: 'v1', kind: 'List', items: objects }));
    // A kube-apiserver just started answers 503 (`Resource kind ... not found`) for the armada
    // kinds until its admission policies (deploy/admission/) can resolve them: the readiness
    // this write needs is a server-side dry run of it going through.
    await eventually('the API server admitting armada objects', () =>
      sandbox.kubectl('apply', '--dry-run=server', '-n', crs, '-f', file).then(() => true),
    );
    await sandbox.kubectl('apply', '-n', crs, '-f', file);
  };
  const charts = async () =>
    (JSON.parse(await sandbox.kubectl('get', 'act', '-n', crs, '-o', 'json')) as { items: ChartObject[] })
      .items;

  it('the run completes, statuses catch up, and the bridge lists again and acts on every change once', async () => {
    worker = startProcess('dist/worker/main.js', {
      ARMADA_TASK_QUEUE: taskQueue,
      ARMADA_KUBECONFIG: sandbox.kubeconfig,
    });
    await worker.printed(WORKER_POLLING);
    // A long Lease, so the bridge frozen through the outage is still the leader when it wakes.
    bridge = startBridge(crs, {
      ARMADA_TASK_QUEUE: taskQueue,
      ARMADA_KUBECONFIG: sandbox.kubeconfig,
      ARMADA_LEASE_NAMESPACE: crs,
      ARMADA_LEASE_SECONDS: '300',
    });
    await bridge.printed('"leading: watching"');

    // The manifest: platform (o1, o2), then apps (o3, o4) behind an approval gate.
    const manifestCharts = ['o1', 'o2', 'o3', 'o4'];
    await apply([
      {
        apiVersion: 'armada.airshipit.org/v1alpha1',
        kind: 'ArmadaManifest',
        metadata: { name: 'outage' },
        spec: { release_prefix: 'm', chart_groups: ['platform', 'apps'], approval: { before: ['apps'] } },
      },
      ...[
        ['platform', ['o1', 'o2']],
        ['apps', ['o3', 'o4']],
      ].map(([name, list]) => ({
        apiVersion: 'armada.airshipit.org/v1alpha1',
        kind: 'ArmadaChartGroup',
        metadata: { name },
        spec: { sequenced: true, chart_group: list },
      })),
      ...manifestCharts.map((name) => chart(name, 'examples/charts/hello', { replicaCount: 1 })),
      ...['s1', 's2', 's3', 's4', 's5', 's6'].map((name) => standalone(name, 1)),
    ]);
    const manifest = client.workflow.getHandle(objectWorkflowId('ArmadaManifest', crs, 'outage'));
    await eventually(
      'the manifest at its gate and the standalone charts deployed',
      async () => {
        const progress = await manifest.query(progressQuery);
        const deployed = (await charts()).filter(
          (c) => c.metadata.name.startsWith('s') && c.status?.satisfied,
        );
        return progress.phase === 'WaitingApproval' && deployed.length === 6 ? true : undefined;
      },
      { process: bridge, timeoutMs: 240_000 },
    );

    // The outage, with the bridge frozen through it.
    process.kill(bridge.child.pid!, 'SIGSTOP');
    const outageStart = Date.now();
    const supervised = new Map(
      await Promise.all(
        ['kube-controller-manager', 'kube-scheduler'].map(
          async (c) => [c, await sandbox.noteProcess(c)] as const,
        ),
      ),
    );
    const apiServer = await sandbox.stopApiServer();
    const workerLogBefore = worker.output().length;
    await manifest.signal(approveSignal, { by: 'the outage drill' });
    // The apps group's activities meet the dead API server, fail, and are retried.
    await eventually(
      'an activity failing on the dead API server',
      async () =>
        /ECONNREFUSED|connection refused/.test(worker!.output().slice(workerLogBefore)) || undefined,
      { process: worker },
    );
    expect((await manifest.describe()).status.name).toBe('RUNNING');
    await sleep(Math.max(0, outageStart + OUTAGE_MS - Date.now()));
    await sandbox.startApiServer(apiServer);
    const outageMs = Date.now() - outageStart;
    const restarted = await sandbox.restartExited(supervised);

    // While the bridge still sleeps: two charts change, two are deleted, two are new. Then etcd
    // forgets the history the bridge's watches would resume from.
    await apply([standalone('s1', 2), standalone('s2', 2), standalone('s7', 1), standalone('s8', 1)]);
    await sandbox.kubectl('delete', 'act', 's3', 's4', '-n', crs, '--wait=false');
    const compactedAt = await sandbox.compactEtcd(apiServer);
    process.kill(bridge.child.pid!, 'SIGCONT');

    const live = ['o1', 'o2', 'o3', 'o4', 's1', 's2', 's5', 's6', 's7', 's8'];
    const settled = await eventually(
      'every chart deployed at its generation, the deleted ones gone, the manifest done',
      async () => {
        const now = await charts();
        const done = now.filter(
          (c) => c.status?.satisfied && c.status.observedGeneration === c.metadata.generation,
        );
        const state = (await manifest.describe()).status.name;
        return now.length === live.length && done.length === live.length && state === 'COMPLETED'
          ? now
          : undefined;
      },
      { process: bridge, timeoutMs: 300_000 },
    );
    console.log(
      `api-outage drill: kube-apiserver down ${outageMs} ms; restarted after it: ${restarted.join(', ') || 'none'}; etcd compacted at revision ${compactedAt}; settled ${Date.now() - outageStart} ms after the outage began`,
    );

    // The bridge's watches came back to a compacted history, and it listed again.
    expect(bridge.output()).toMatch(/watch expired \(410 Gone\): listing again.*"kind":"ArmadaChart"/);
    expect(settled.map((c) => c.metadata.name).sort()).toEqual(live);

    // The manifest's status caught up with the run's end.
    const amf = JSON.parse(await sandbox.kubectl('get', 'amf', 'outage', '-n', crs, '-o', 'json'));
    expect(amf.status).toMatchObject({
      actual_state: 'deployed',
      satisfied: true,
      progress: { ready: 2, total: 2 },
    });
    expect(await manifest.result()).toMatchObject({ state: 'deployed' });

    // Every release as a crash-free run leaves it: one revision each, two for the changed ones.
    const list = JSON.parse(
      await sandbox.helm('list', '-n', releases, '--deployed', '--failed', '--pending', '-o', 'json'),
    ) as { name: string; revision: number; status: string }[];
    const revisions = Object.fromEntries(list.map((r) => [r.name, `${r.status} ${r.revision}`]));
    expect(revisions).toEqual({
      ...Object.fromEntries(manifestCharts.map((name) => [`m-${name}`, 'deployed 1'])),
      s1: 'deployed 2',
      s2: 'deployed 2',
      s5: 'deployed 1',
      s6: 'deployed 1',
      s7: 'deployed 1',
      s8: 'deployed 1',
    });

    // No run twice for the same specs; each live standalone chart's latest run is its
    // generation's completed deploy, each deleted one's an uninstall.
    const runs: WorkflowExecutionInfo[] = [];
    for await (const info of client.workflow.list({ query: `ArmadaNamespace = '${crs}'` })) runs.push(info);
    const memo = (r: WorkflowExecutionInfo) => (r.memo ?? {}) as unknown as RunMemo;
    const runKeys = runs.map((r) => `${r.workflowId} ${memo(r).mode} ${memo(r).specs}`);
    expect(runKeys.filter((key, i) => runKeys.indexOf(key) !== i)).toEqual([]);
    const latest = (name: string) =>
      runs
        .filter((r) => r.workflowId === `ArmadaChart:${crs}/${name}`)
        .sort((a, b) => b.startTime.getTime() - a.startTime.getTime())[0];
    const generation = new Map(settled.map((c) => [c.metadata.name, c.metadata.generation]));
    const standalones = ['s1', 's2', 's3', 's4', 's5', 's6', 's7', 's8'];
    expect(
      standalones.map((name) => {
        const r = latest(name);
        return `${name} ${r.status.name} ${memo(r).mode} ${memo(r).specs}`;
      }),
    ).toEqual(
      standalones.map((name) =>
        generation.has(name)
          ? `${name} COMPLETED deploy ArmadaChart/${name}@${generation.get(name)}`
          : // The deletion itself moved the generation on.
            expect.stringMatching(new RegExp(`^${name} COMPLETED uninstall ArmadaChart/${name}@\\d+$`)),
      ),
    );
  }, 600_000);
});
