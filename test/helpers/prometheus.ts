import { CoreV1Api, type V1Pod } from '@kubernetes/client-node';
import { mkdtemp, rm, writeFile } from 'node:fs/promises';
import { createServer } from 'node:http';
import type { AddressInfo } from 'node:net';
import { tmpdir } from 'node:os';
import path from 'node:path';
import { kubeConfig } from './env';
import { eventually, spawnCaptured, type ProductProcess } from './processes';
import { freePort } from './temporal';

/** Debian's prometheus (test/run.sh installs the package), or ARMADA_PROMETHEUS. */
const PROMETHEUS = process.env.ARMADA_PROMETHEUS || 'prometheus';

/**
 * An exporter for pods that run no process (kwok's): it serves one series per pod of
 * `namespace`, `app_error_ratio{namespace, pod, app}`, whose value `errorRatio(pod)` gives; the
 * test changes that function to steer the canary healthy or failing. The pods come from a list
 * of the API server it keeps refreshing beside the scrapes (every 200 ms, one list at a time),
 * not from a list per scrape: a scrape has 1 s (its interval), and one that times out on a slow
 * API server marks every series stale, so a canary's check would find none.
 */
export async function startPodExporter(namespace: string, errorRatio: (pod: V1Pod) => number) {
  const core = kubeConfig().makeApiClient(CoreV1Api);
  const state = { errorRatio, scrapes: 0 };
  let pods: V1Pod[] | undefined;
  let listError: unknown;
  let stopped = false;
  const refresh = async () => {
    while (!stopped) {
      try {
        pods = (await core.listNamespacedPod({ namespace })).items;
        listError = undefined;
      } catch (err) {
        listError = err;
      }
      await new Promise((resolve) => setTimeout(resolve, 200));
    }
  };
  const server = createServer((req, res) => {
    if (req.url !== '/metrics') return void res.writeHead(404).end();
    if (!pods) return void res.writeHead(503).end(`no list of the pods yet: ${String(listError)}`);
    const lines = pods
      .filter((pod) => !pod.metadata?.deletionTimestamp)
      .map((pod) => {
        const { name, labels } = pod.metadata!;
        const app = labels?.app ?? labels?.['app.kubernetes.io/name'] ?? '';
        return `app_error_ratio{namespace="${namespace}",pod="${name}",app="${app}"} ${state.errorRatio(pod)}`;
      });
    state.scrapes++;
    res.writeHead(200, { 'content-type': 'text/plain; version=0.0.4' });
    res.end(['# TYPE app_error_ratio gauge', ...lines, ''].join('\n'));
  });
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  const refreshing = refresh();
  return {
    address: `127.0.0.1:${(server.address() as AddressInfo).port}`,
    state,
    stop: async () => {
      stopped = true;
      await refreshing;
      await new Promise<void>((resolve) => server.close(() => resolve()));
    },
  };
}

/**
 * A real Prometheus on a free loopback port, with its own config and storage in a temporary
 * directory, scraping `target` every second; `honor_labels` keeps the exporter's namespace and
 * pod labels. Resolves once /-/ready answers 200.
 */
export async function startPrometheus(target: string) {
  const dir = await mkdtemp(path.join(tmpdir(), 'armada-prometheus-'));
  const config = path.join(dir, 'prometheus.yml');
  await writeFile(
    config,
    [
      'global: { scrape_interval: 1s, evaluation_interval: 1s }',
      'scrape_configs:',
      '  - job_name: pods',
      '    honor_labels: true',
      `    static_configs: [{ targets: ['${target}'] }]`,
      '',
    ].join('\n'),
  );
  const port = await freePort();
  const url = `http://127.0.0.1:${port}`;
  const server: ProductProcess = spawnCaptured(
    PROMETHEUS,
    [
      `--config.file=${config}`,
      `--storage.tsdb.path=${path.join(dir, 'data')}`,
      `--web.listen-address=127.0.0.1:${port}`,
    ],
    {},
  );
  await eventually(
    'Prometheus ready',
    async () => ((await fetch(`${url}/-/ready`)).status === 200 ? true : undefined),
    { process: server },
  );
  return {
    url,
    server,
    /** The values of an instant query, as Prometheus answers it now. */
    async query(promql: string): Promise<number[]> {
      const response = await fetch(`${url}/api/v1/query?query=${encodeURIComponent(promql)}`);
      const body = (await response.json()) as { data: { result: { value: [number, string] }[] } };
      return body.data.result.map((series) => Number(series.value[1]));
    },
    async stop() {
      await server.stop();
      await rm(dir, { recursive: true, force: true });
    },
  };
}
