import { Client, Connection } from '@temporalio/client';
import { mkdtemp, readFile, readdir, rm } from 'node:fs/promises';
import { createServer, type Server } from 'node:http';
import { hostname, tmpdir } from 'node:os';
import path from 'node:path';
import { armadaChartSpec } from '../../api/chart';
import { chartRun, startRun } from '../../runs/requests';
import { canaryProgressQuery } from '../../workflows/messages';
import { canaryWorkflowId } from '../../core/plan/names';
import { helm, uniqueName } from '../helpers/env';
import { kubectl } from '../helpers/kube';
import { WORKER_POLLING, eventually, startProcess, type ProductProcess } from '../helpers/processes';
import { chartResult } from '../helpers/chart-runs';

const HOLD_SECONDS = 8;

/**
 * Drill: a chart prepared by one worker is deployed by another. A worker's chart cache is its own
 * disk (a pod's emptyDir): when the worker dies, the cache goes with it, and the next activity of
 * the run may land on any worker. A tar-sourced chart's canary holds; the worker that prepared the
 * chart and made the canary copies is SIGKILLed during the hold and its cache deleted; a new
 * worker with an empty cache of its own finishes the run: it fetches the chart again by source
 * and content digest. (Before charts were passed by content, the upgrade failed with
 * `helm upgrade --install failed: Error: path ".../<sha>.tgz" not found`.)
 */
describe('drill: the worker that prepared a chart dies with its cache; another deploys it', () => {
  const namespace = uniqueName('wcache');
  const taskQueue = uniqueName('wcache');
  let connection: Connection;
  let client: Client;
  let server: Server;
  let work: string;
  const workers: ProductProcess[] = [];

  /** A worker process with a chart cache of its own, as a pod with its own disk. */
  async function startWorker(cache: string): Promise<ProductProcess> {
    const worker = startProcess('dist/worker/main.js', {
      ARMADA_TASK_QUEUE: taskQueue,
      ARMADA_CHART_CACHE: cache,
    });
    workers.push(worker);
    await worker.printed(WORKER_POLLING);
    return worker;
  }

  beforeAll(async () => {
    connection = await Connection.connect({ address: process.env.TEMPORAL_ADDRESS! });
    client = new Client({ connection });
    work = await mkdtemp(path.join(tmpdir(), 'armada-wcache-'));
    const charts = path.join(work, 'www');
    await helm('package', 'examples/charts/hello', '--destination', charts);
    const [archive] = await readdir(charts);
    server = createServer((_req, res) => {
      readFile(path.join(charts, archive)).then(
        (bytes) => res.end(bytes),
        () => res.writeHead(500).end(),
      );
    });
    await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  });
  afterAll(async () => {
    for (const worker of workers) await worker.stop('SIGKILL');
    server.closeAllConnections();
    await new Promise((resolve) => server.close(resolve));
    await connection.close();
    await rm(work, { recursive: true, force: true });
    await kubectl('delete', 'namespace', namespace, '--wait=false').catch(() => '');
  });

  it('the run completes on the new worker, which fetched the chart again', async () => {
    const address = server.address() as { port: number };
    const spec = (tag: string) =>
      armadaChartSpec.parse({
        release: 'web',
        namespace,
        source: { type: 'tar', location: `http://127.0.0.1:${address.port}/hello.tgz` },
        values: { replicaCount: 2, image: { tag } },
        wait: { timeout: 120 },
        canary: { steps: [{ percent: 50, sleep: HOLD_SECONDS }, { percent: 100 }] },
      });
    const deploy = async (tag: string) =>
      client.workflow.getHandle(
        await startRun(
          client,
          taskQueue,
          chartRun({ kind: 'ArmadaChart', name: 'web', namespace, spec: spec(tag) }),
        ),
      );
    const cacheA = path.join(work, 'cache-a');
    const first = await startWorker(cacheA);
    expect(await chartResult(await deploy('1.0.0'))).toMatchObject({ action: 'installed', revision: 1 });

    const run = await deploy('2.0.0');
    await eventually(
      'the canary holding at 50 %',
      async () => {
        const progress = await client.workflow
          .getHandle(canaryWorkflowId(namespace, 'web'))
          .query(canaryProgressQuery);
        return progress.waitingOn === 'hold' || undefined;
      },
      { process: first },
    );
    // The pod goes, and its disk with it; its replacement starts with an empty cache.
    await first.stop('SIGKILL');
    expect((await readdir(cacheA)).some((name) => name.endsWith('.tgz'))).toBe(true);
    await rm(cacheA, { recursive: true, force: true });
    await startWorker(path.join(work, 'cache-b'));

    const outcome = await chartResult(run);
    expect(outcome).toMatchObject({ action: 'upgraded', before: 1, revision: 2 });
    const history = JSON.parse(await helm('history', 'web', '-n', namespace, '-o', 'json')) as {
      revision: number;
      status: string;
    }[];
    expect(history.map((h) => `${h.revision} ${h.status}`)).toEqual(['1 superseded', '2 deployed']);

    // The chart was prepared by the killed worker and written to the release by the new one.
    const started = new Map<string, string>();
    const scheduled = new Map<string, string>();
    for (const event of (await run.fetchHistory()).events ?? []) {
      const type = event.activityTaskScheduledEventAttributes?.activityType?.name;
      if (type) scheduled.set(String(event.eventId), type);
      const start = event.activityTaskStartedEventAttributes;
      if (start) started.set(scheduled.get(String(start.scheduledEventId))!, start.identity!);
    }
    expect(started.get('prepareChart')).toBe(`${first.child.pid}@${hostname()}`);
    expect(started.get('helmUpgradeInstall')).toMatch(/^\d+@/);
    expect(started.get('helmUpgradeInstall')).not.toBe(started.get('prepareChart'));
  }, 300_000);
});
