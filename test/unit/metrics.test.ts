import type { Server } from 'node:http';
import { loadConfig } from '../../bridge/config';
import { BridgeMetrics, serveMetrics } from '../../bridge/metrics';

interface Sample {
  metricName?: string;
  labels: Record<string, string | number>;
  value: number;
}

/** A metric's samples as the registry collects them (at scrape time, as Prometheus would). */
async function samples(metrics: BridgeMetrics, name: string): Promise<Sample[]> {
  const metric = metrics.registry.getSingleMetric(name);
  if (!metric) throw new Error(`no metric ${name}`);
  return (await metric.get()).values as Sample[];
}

/** The value of a counter's or gauge's sample with exactly these labels; undefined when absent. */
async function sample(metrics: BridgeMetrics, name: string, labels: Record<string, string> = {}) {
  const same = (s: Sample) =>
    Object.keys(s.labels).length === Object.keys(labels).length &&
    Object.entries(labels).every(([k, v]) => String(s.labels[k]) === v);
  return (await samples(metrics, name)).find(same)?.value;
}

/** The `_count` and `_sum` of a histogram, over every label set. */
async function histogram(metrics: BridgeMetrics, name: string): Promise<{ count: number; sum: number }> {
  const values = await samples(metrics, name);
  const total = (suffix: string) =>
    values.filter((v) => v.metricName === `${name}${suffix}`).reduce((n, v) => n + v.value, 0);
  return { count: total('_count'), sum: total('_sum') };
}

const key = 'ArmadaChart/ns/web';

describe('BridgeMetrics', () => {
  it('observes the seconds from the key being queued to its run starting, once per start', async () => {
    const metrics = new BridgeMetrics(() => ({ depth: 0, active: 0 }));
    await metrics.reconcile(key, Date.now() - 1500, async () => metrics.runStarted(key, 'deploy'));
    const latency = await histogram(metrics, 'armada_bridge_event_to_start_seconds');
    expect(latency.count).toBe(1);
    expect(latency.sum).toBeGreaterThanOrEqual(1.5);
    expect(latency.sum).toBeLessThan(5);
    expect(
      await sample(metrics, 'armada_bridge_workflow_starts_total', { kind: 'ArmadaChart', mode: 'deploy' }),
    ).toBe(1);
  });

  it('counts a start outside a reconcile but observes no latency for it (its queue time is unknown)', async () => {
    const metrics = new BridgeMetrics(() => ({ depth: 0, active: 0 }));
    metrics.runStarted('Deployer/ns/nginx', 'uninstall');
    expect(
      await sample(metrics, 'armada_bridge_workflow_starts_total', { kind: 'Deployer', mode: 'uninstall' }),
    ).toBe(1);
    expect((await histogram(metrics, 'armada_bridge_event_to_start_seconds')).count).toBe(0);
  });

  it('counts and times every reconcile by kind, a failed one also as an error, and passes its error on', async () => {
    const metrics = new BridgeMetrics(() => ({ depth: 0, active: 0 }));
    await metrics.reconcile(key, Date.now(), async () => {});
    const failing = metrics.reconcile(key, Date.now(), async () => {
      throw new Error('API server gone');
    });
    await expect(failing).rejects.toThrow('API server gone');
    expect(await sample(metrics, 'armada_bridge_reconciles_total', { kind: 'ArmadaChart' })).toBe(2);
    expect(await sample(metrics, 'armada_bridge_reconcile_errors_total', { kind: 'ArmadaChart' })).toBe(1);
    expect(await sample(metrics, 'armada_bridge_reconcile_errors_total', { kind: 'ArmadaManifest' })).toBe(0);
    expect((await histogram(metrics, 'armada_bridge_reconcile_duration_seconds')).count).toBe(2);
  });

  it('labels an action sent, failed, or (any other text) unknown under one label', async () => {
    const metrics = new BridgeMetrics(() => ({ depth: 0, active: 0 }));
    metrics.actionTaken('pause', true);
    metrics.actionTaken('pause', false);
    metrics.actionTaken('approve', true);
    metrics.actionTaken('paws', false);
    metrics.actionTaken('rm -rf', false);
    const signals = (action: string, outcome: string) =>
      sample(metrics, 'armada_bridge_signals_total', { action, outcome });
    expect(await signals('pause', 'sent')).toBe(1);
    expect(await signals('pause', 'failed')).toBe(1);
    expect(await signals('approve', 'sent')).toBe(1);
    expect(await signals('other', 'unknown')).toBe(2);
  });

  it('reads the queue sizes at scrape time, and reports leadership and watch events', async () => {
    const sizes = { depth: 3, active: 1 };
    const metrics = new BridgeMetrics(() => sizes);
    expect(await sample(metrics, 'armada_bridge_queue_depth')).toBe(3);
    sizes.depth = 0;
    expect(await sample(metrics, 'armada_bridge_queue_depth')).toBe(0);
    expect(await sample(metrics, 'armada_bridge_queue_running')).toBe(1);

    expect(await sample(metrics, 'armada_bridge_leader')).toBe(0);
    metrics.setLeader(true);
    expect(await sample(metrics, 'armada_bridge_leader')).toBe(1);

    metrics.watchEvent('ArmadaManifest', 'add');
    metrics.watchEvent('ArmadaManifest', 'add');
    metrics.watchEvent('ArmadaManifest', 'resync');
    expect(
      await sample(metrics, 'armada_bridge_watch_events_total', { kind: 'ArmadaManifest', change: 'add' }),
    ).toBe(2);
    expect(
      await sample(metrics, 'armada_bridge_watch_events_total', { kind: 'ArmadaManifest', change: 'resync' }),
    ).toBe(1);
  });

  it("includes the process's memory, its peak resident size among it", async () => {
    const metrics = new BridgeMetrics(() => ({ depth: 0, active: 0 }));
    expect(await sample(metrics, 'process_resident_memory_bytes')).toBeGreaterThan(0);
    const peak = (await sample(metrics, 'process_max_resident_memory_bytes'))!;
    expect(peak).toBeGreaterThan(16 * 1024 * 1024); // bytes, not getrusage's KiB: Node.js alone takes more
  });
});

describe('serveMetrics', () => {
  let server: Server | undefined;
  afterEach(() => server?.close());

  it('serves /metrics in the Prometheus text format and /healthz, on a free port when asked for 0', async () => {
    const metrics = new BridgeMetrics(() => ({ depth: 2, active: 0 }));
    const served = await serveMetrics(metrics.registry, 0);
    server = served.server;
    expect(served.port).toBeGreaterThan(0);
    const base = `http://127.0.0.1:${served.port}`;

    const scrape = await fetch(`${base}/metrics`);
    expect(scrape.status).toBe(200);
    expect(scrape.headers.get('content-type')).toMatch(/^text\/plain; version=0\.0\.4/);
    const text = await scrape.text();
    expect(text).toContain('# TYPE armada_bridge_queue_depth gauge\narmada_bridge_queue_depth 2\n');
    expect(text).toContain('# TYPE armada_bridge_event_to_start_seconds histogram');

    const health = await fetch(`${base}/healthz`);
    expect([health.status, await health.text()]).toEqual([200, 'ok\n']);
    expect((await fetch(`${base}/`)).status).toBe(404);
    const post = await fetch(`${base}/metrics`, { method: 'POST' });
    expect([post.status, post.headers.get('allow')]).toEqual([405, 'GET, HEAD']);
  });

  it('rejects when the port is taken', async () => {
    const metrics = new BridgeMetrics(() => ({ depth: 0, active: 0 }));
    const first = await serveMetrics(metrics.registry, 0);
    server = first.server;
    await expect(serveMetrics(metrics.registry, first.port)).rejects.toThrow(/EADDRINUSE/);
  });
});

describe('ARMADA_METRICS_PORT', () => {
  it.each([
    { given: 'unset', value: undefined, port: 9464 },
    { given: '9100', value: '9100', port: 9100 },
    { given: '0 (any free port)', value: '0', port: 0 },
  ])('$given gives port $port', ({ value, port }) => {
    expect(loadConfig({ ARMADA_METRICS_PORT: value }).ARMADA_METRICS_PORT).toBe(port);
  });

  it.each(['70000', '-1', '80.5', 'http'])('refuses %s with a line naming the variable', (value) => {
    expect(() => loadConfig({ ARMADA_METRICS_PORT: value })).toThrow(
      /^invalid configuration:\nARMADA_METRICS_PORT: ARMADA_METRICS_PORT must be a port number/,
    );
  });
});
