import { mkdtemp, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import path from 'node:path';
import { objectWorkflowId } from '../../core/plan/names';
import { metricValue, scrape, type PromSample } from '../../bench/prometheus';
import { sharedWorker, uniqueName } from '../helpers/env';
import { installCrds, kubectl } from '../helpers/kube';
import { metricsBase } from '../helpers/metrics';
import { eventually, startBridge, type ProductProcess } from '../helpers/processes';

describe('bridge metrics: /metrics counts what the bridge did (bridge process, real worker, sandbox)', () => {
  const crs = uniqueName('metrics');
  const releases = uniqueName('metrics-rel');
  const harness = sharedWorker();
  let bridge: ProductProcess | undefined;
  let base = '';

  /** Scrapes until `ready` holds for the samples, and returns them. */
  const scrapeUntil = (what: string, ready: (samples: PromSample[]) => boolean) =>
    eventually(
      what,
      async () => {
        const samples = await scrape(`${base}/metrics`);
        return ready(samples) ? samples : undefined;
      },
      { process: bridge },
    );

  beforeAll(async () => {
    await installCrds();
    await kubectl('create', 'namespace', crs);
    bridge = startBridge(crs, { ARMADA_TASK_QUEUE: harness().taskQueue, ARMADA_METRICS_PORT: '0' });
    base = await metricsBase(bridge);
  });
  afterAll(async () => {
    await bridge?.stop();
    await kubectl('delete', 'namespace', releases, '--wait=false').catch(() => '');
    await kubectl('delete', 'namespace', crs, '--wait=false');
  });

  it('answers /healthz, and /metrics says it leads, with the queue and the process memory', async () => {
    const health = await fetch(`${base}/healthz`);
    expect([health.status, await health.text()]).toEqual([200, 'ok\n']);
    const samples = await scrapeUntil(
      'armada_bridge_leader 1',
      (s) => metricValue(s, 'armada_bridge_leader') === 1,
    );
    expect(metricValue(samples, 'armada_bridge_queue_depth')).toBeGreaterThanOrEqual(0);
    expect(metricValue(samples, 'armada_bridge_queue_running')).toBeGreaterThanOrEqual(0);
    expect(metricValue(samples, 'process_resident_memory_bytes')).toBeGreaterThan(0);
    expect(metricValue(samples, 'process_max_resident_memory_bytes')).toBeGreaterThan(0);
  });

  it('a kubectl apply of a chart counts its watch event, its reconciles, one start and its latency', async () => {
    const file = path.join(await mkdtemp(path.join(tmpdir(), 'armada-metrics-')), 'hello.json');
    const chart = {
      apiVersion: 'armada.airshipit.org/v1alpha1',
      kind: 'ArmadaChart',
      metadata: { name: 'hello' },
      spec: {
        release: 'hello',
        namespace: releases,
        source: { type: 'local', location: 'examples/charts/hello' },
        values: { replicaCount: 1 },
      },
    };
    await writeFile(file, JSON.stringify(chart));
    await kubectl('apply', '-n', crs, '-f', file);

    const chartStarts = { kind: 'ArmadaChart', mode: 'deploy' };
    const samples = await scrapeUntil(
      'one ArmadaChart deploy start',
      (s) => metricValue(s, 'armada_bridge_workflow_starts_total', chartStarts) === 1,
    );
    expect(metricValue(samples, 'armada_bridge_event_to_start_seconds_count')).toBeGreaterThanOrEqual(1);
    const latency = metricValue(samples, 'armada_bridge_event_to_start_seconds_sum')!;
    expect(latency).toBeGreaterThan(0);
    expect(latency).toBeLessThan(30);
    expect(
      metricValue(samples, 'armada_bridge_watch_events_total', { kind: 'ArmadaChart', change: 'add' }),
    ).toBeGreaterThanOrEqual(1);
    expect(
      metricValue(samples, 'armada_bridge_reconciles_total', { kind: 'ArmadaChart' }),
    ).toBeGreaterThanOrEqual(1);
    expect(
      metricValue(samples, 'armada_bridge_reconcile_duration_seconds_count', { kind: 'ArmadaChart' }),
    ).toBe(metricValue(samples, 'armada_bridge_reconciles_total', { kind: 'ArmadaChart' }));
  });

  it('an action annotation on a chart whose run has finished counts as a failed signal, and starts nothing', async () => {
    // The run must have ended: a finished run has no one to pause, so the signal is not sent.
    await harness()
      .client.workflow.getHandle(objectWorkflowId('ArmadaChart', crs, 'hello'))
      .result();
    await kubectl('annotate', 'act', 'hello', '-n', crs, 'armada.airshipit.org/action=pause');
    const pause = { action: 'pause', outcome: 'failed' };
    const samples = await scrapeUntil(
      'the pause counted',
      (s) => metricValue(s, 'armada_bridge_signals_total', pause) === 1,
    );
    expect(samples.filter((s) => s.name === 'armada_bridge_signals_total')).toEqual([
      { name: 'armada_bridge_signals_total', labels: pause, value: 1 },
    ]);
    expect(
      metricValue(samples, 'armada_bridge_workflow_starts_total', { kind: 'ArmadaChart', mode: 'deploy' }),
    ).toBe(1);
    const events = await kubectl(
      'get',
      'events',
      '-n',
      crs,
      '--field-selector',
      'involvedObject.name=hello,reason=Action',
    );
    expect(events).toContain(`asked to pause: refused: nothing to pause: ArmadaChart:${crs}/hello`);
  });
});
