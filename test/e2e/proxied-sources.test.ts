import { Client, Connection } from '@temporalio/client';
import { randomBytes } from 'node:crypto';
import { mkdtemp, readFile, rm } from 'node:fs/promises';
import { createServer as createHttpsServer, type Server } from 'node:https';
import { tmpdir } from 'node:os';
import path from 'node:path';
import type { ArmadaChartSpecInput } from '../../api/chart';
import type { ChartOutcome } from '../../core/contracts/workflows';
import {
  selfSignedCertificate,
  serveExampleCharts,
  startProxy,
  type ExampleChartSources,
  type TestProxy,
} from '../helpers/chart-servers';
import { chartRuns } from '../helpers/chart-runs';
import { uniqueName } from '../helpers/env';
import { kubectl } from '../helpers/kube';
import { placesHolding } from '../helpers/leaks';
import { startDebugWorker, type ProductProcess } from '../helpers/processes';

/**
 * `source.proxy_server` on the real stack: the example chart `settings` served by the project's
 * own servers on the loopback (a .tgz and a Helm repository over HTTP, git over smart HTTP, and a
 * .tgz over HTTPS), deployed by the worker process (dist/, logging at debug) through an HTTP
 * proxy of the test's own that asks for a login.
 *
 * A proxied chart names its server by HIDDEN, a host that resolves nowhere: only the proxy, told
 * where it is, reaches it, so a proxied chart that deploys came through the proxy. In the same
 * moment the same worker deploys the same chart from 127.0.0.1 without a proxy_server; the proxy
 * must never be asked for 127.0.0.1. (helm, being Go, never proxies a loopback address: the chart
 * a proxied repository's index points at, on 127.0.0.1, is fetched directly; its index is not.)
 * An OCI registry is left out: its TLS certificate names 127.0.0.1, which Go does not proxy.
 */
describe('chart sources through source.proxy_server, one chart at a time', () => {
  const HIDDEN = 'charts.proxy-test.invalid';
  const objects = uniqueName('px-cr');
  const releases = uniqueName('px-rel');
  const taskQueue = uniqueName('px-queue');
  const login = { username: 'squid', password: `pw-${randomBytes(8).toString('hex')}` };
  let work: string;
  let charts: ExampleChartSources;
  let proxy: TestProxy;
  let tlsFiles: Server;
  /** `https://127.0.0.1:<port>`: the .tgz files of `charts`, over TLS with a certificate for it and HIDDEN. */
  let tlsBase: string;
  let worker: ProductProcess;
  let connection: Connection;
  let client: Client;
  const chartRunsOf = chartRuns(() => client, objects, taskQueue);

  /** The ArmadaChart `name` (release `name`) of `settings` from `source`. */
  const chartSpec = (name: string, source: ArmadaChartSpecInput['source']): ArmadaChartSpecInput => ({
    release: name,
    namespace: releases,
    source,
    wait: { timeout: 60, resources: [] },
  });
  const hidden = (location: string) => location.replace('//127.0.0.1:', `//${HIDDEN}:`);
  /** The sources of `settings`, by how they are reached: directly, and through the proxy. */
  const sources = {
    tar: () => charts.source('tar', 'settings'),
    'tar over https': () => ({
      type: 'tar' as const,
      location: `${tlsBase}/${path.basename(tarLocation())}`,
    }),
    repo: () => charts.source('repo', 'settings'),
    git: () => charts.source('git', 'settings'),
  };
  const tarLocation = () => charts.source('tar', 'settings').location!;

  beforeAll(async () => {
    work = await mkdtemp(path.join(tmpdir(), 'armada-proxied-'));
    charts = await serveExampleCharts(work, ['settings']);
    const { cert, key } = await selfSignedCertificate(path.join(work, 'tls'), `DNS:${HIDDEN},IP:127.0.0.1`);
    const www = path.join(work, 'www');
    tlsFiles = createHttpsServer({ cert: await readFile(cert), key: await readFile(key) }, (req, res) => {
      readFile(path.join(www, path.basename(req.url ?? ''))).then(
        (body) => res.writeHead(200).end(body),
        () => res.writeHead(404).end(),
      );
    });
    await new Promise<void>((resolve) => tlsFiles.listen(0, '127.0.0.1', resolve));
    tlsBase = `https://127.0.0.1:${(tlsFiles.address() as { port: number }).port}`;
    proxy = await startProxy({ hosts: { [HIDDEN]: '127.0.0.1' }, auth: login });
    await kubectl('create', 'namespace', objects);
    await kubectl('create', 'namespace', releases);
    // The worker trusts the .tgz server's certificate as a worker image would its site's CA.
    worker = await startDebugWorker(taskQueue, { ...charts.helmEnv, NODE_EXTRA_CA_CERTS: cert });
    connection = await Connection.connect({ address: process.env.TEMPORAL_ADDRESS });
    client = new Client({ connection });
  });
  afterAll(async () => {
    await worker?.stop();
    await connection?.close();
    await charts?.close();
    await proxy?.close();
    tlsFiles?.closeAllConnections();
    await new Promise((resolve) => tlsFiles?.close(resolve));
    if (work) await rm(work, { recursive: true, force: true });
    await kubectl('delete', 'namespace', objects, releases, '--ignore-not-found', '--wait=false');
  });
  beforeEach(() => {
    proxy.requests.length = 0;
  });

  it.each<[keyof typeof sources, (port: string) => RegExp]>([
    ['tar', (port) => new RegExp(`^GET http://${HIDDEN}:${port}/settings-[^/]+\\.tgz$`)],
    ['tar over https', (port) => new RegExp(`^CONNECT ${HIDDEN}:${port}$`)],
    ['repo', (port) => new RegExp(`^GET http://${HIDDEN}:${port}/index\\.yaml$`)],
    [
      'git',
      (port) => new RegExp(`^GET http://${HIDDEN}:${port}/charts\\.git/info/refs\\?service=git-upload-pack$`),
    ],
  ])(
    'deploys a %s chart through its proxy while the same worker fetches the same chart directly',
    async (type, expectedRequest) => {
      const direct = sources[type]();
      const proxied = { ...direct, location: hidden(direct.location!), proxy_server: proxy.url };
      const name = type.replaceAll(' ', '-');
      const [throughProxy, directly] = await Promise.all(
        [chartSpec(`${name}-proxied`, proxied), chartSpec(`${name}-direct`, direct)].map(async (spec) =>
          (await chartRunsOf.start(spec.release!, spec)).result(),
        ),
      );
      expect(throughProxy as ChartOutcome).toMatchObject({ action: 'installed', revision: 1 });
      expect(directly as ChartOutcome).toMatchObject({ action: 'installed', revision: 1 });

      const port = new URL(proxied.location).port;
      expect(proxy.requests).toContainEqual(expect.stringMatching(expectedRequest(port)));
      // Every request the proxy saw was the proxied chart's: none named the direct one's server.
      expect(proxy.requests.filter((request) => !request.includes(`${HIDDEN}:${port}`))).toEqual([]);
    },
  );

  it.each<keyof typeof sources>(['tar', 'git'])(
    'leaves a %s release unchanged when only its proxy goes: the chart digest does not hold the proxy',
    async (type) => {
      const name = `${type}-proxied`;
      const outcome = await (await chartRunsOf.start(name, chartSpec(name, sources[type]()))).result();
      expect(outcome as ChartOutcome).toMatchObject({ action: 'unchanged', revision: 1 });
      expect(proxy.requests).toEqual([]);
    },
  );

  it('keeps the proxy password out of the worker output', () => {
    expect(worker.output()).toContain('"level":"debug"');
    expect(placesHolding([login.password], { worker: worker.output() })).toEqual([]);
  });
});
