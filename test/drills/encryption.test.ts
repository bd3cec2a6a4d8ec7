import { Client, Connection } from '@temporalio/client';
import { randomBytes, randomUUID } from 'node:crypto';
import { mkdtemp, writeFile } from 'node:fs/promises';
import type { AddressInfo } from 'node:net';
import { tmpdir } from 'node:os';
import path from 'node:path';
import { objectWorkflowId } from '../../core/plan/names';
import { AesGcmCodec, parseKeys } from '../../runs/codec';
import { codecServer } from '../../worker/codec-server';
import { helm, uniqueName } from '../helpers/env';
import { installCrds, kubectl } from '../helpers/kube';
import { databaseFiles, placesHolding } from '../helpers/leaks';
import {
  WORKER_POLLING,
  eventually,
  startBridge,
  startProcess,
  type ProductProcess,
} from '../helpers/processes';
import { freePort, startDevServer } from '../helpers/temporal';

/**
 * Security drills 8 and 10 (issue 8): with ARMADA_ENCRYPTION_KEYS set, an ArmadaChart whose
 * values hold a secret is deployed through the bridge and the worker processes; the secret
 * reaches helm, but appears neither in the run's raw history, nor in the Temporal server's
 * database file, nor in the worker's or the bridge's logs. The codec server shows it to a
 * caller with the token, and only to one.
 */
describe('drill: payload encryption and no secrets in logs', () => {
  const crs = uniqueName('enc');
  const releases = uniqueName('enc-rel');
  const taskQueue = uniqueName('enc-queue');
  const secret = `s3cr3t-${randomUUID()}`;
  const keys = `k2026:${randomBytes(32).toString('base64')}`;
  const processes: ProductProcess[] = [];

  afterAll(async () => {
    for (const p of processes.reverse()) await p.stop('SIGKILL');
    await kubectl('delete', 'namespace', releases, '--wait=false').catch(() => '');
    await kubectl('delete', 'namespace', crs, '--wait=false').catch(() => '');
  });

  it('keeps the values out of the history, the database and the logs; the codec server decodes for the token holder', async () => {
    const dir = await mkdtemp(path.join(tmpdir(), 'armada-enc-'));
    const port = await freePort();
    const address = `127.0.0.1:${port}`;
    processes.push(await startDevServer(port, { dbFile: path.join(dir, 'temporal.db') }));
    const env = { TEMPORAL_ADDRESS: address, ARMADA_TASK_QUEUE: taskQueue, ARMADA_ENCRYPTION_KEYS: keys };
    const worker = startProcess('dist/worker/main.js', { ...env, ARMADA_LOG_LEVEL: 'debug' });
    processes.push(worker);
    await worker.printed(WORKER_POLLING);
    await installCrds();
    await kubectl('create', 'namespace', crs);
    const bridge = startBridge(crs, env);
    processes.push(bridge);

    const chart = path.join(dir, 'chart.json');
    await writeFile(
      chart,
      JSON.stringify({
        apiVersion: 'armada.airshipit.org/v1alpha1',
        kind: 'ArmadaChart',
        metadata: { name: 'vault' },
        spec: {
          release: 'vault',
          namespace: releases,
          source: { type: 'local', location: 'examples/charts/settings' },
          values: { settings: { logLevel: 'info', password: secret } },
        },
      }),
    );
    await kubectl('apply', '-n', crs, '-f', chart);
    await eventually(
      'the chart deployed',
      async () =>
        JSON.parse(await kubectl('get', 'act', 'vault', '-n', crs, '-o', 'json')).status?.satisfied
          ? true
          : undefined,
      { process: bridge },
    );
    // The secret did reach helm: the drill cannot pass by deploying nothing.
    expect(await helm('get', 'values', 'vault', '-n', releases, '-o', 'json')).toContain(secret);

    // The raw history, read by a client without the codec.
    const connection = await Connection.connect({ address });
    let raw: string;
    // fetchHistory gives the history in proto3 JSON: bytes as base64 text.
    let input: unknown;
    try {
      const history = await new Client({ connection }).workflow
        .getHandle(objectWorkflowId('ArmadaChart', crs, 'vault'))
        .fetchHistory();
      raw = JSON.stringify(history);
      input = history.events![0].workflowExecutionStartedEventAttributes!.input!.payloads![0];
    } finally {
      await connection.close();
    }
    expect(raw).toContain(Buffer.from('binary/encrypted').toString('base64'));
    expect(placesHolding([secret], { history: raw })).toEqual([]);

    // The database file and its write-ahead log, byte for byte.
    expect(placesHolding([secret], await databaseFiles(dir))).toEqual([]);

    // Drill 10: the logs of both processes, at debug level for the worker.
    expect(worker.output()).toContain('"level":"debug"');
    expect(bridge.output().length).toBeGreaterThan(0);
    expect(placesHolding([secret], { worker: worker.output(), bridge: bridge.output() })).toEqual([]);

    // The codec server: decodes for the token holder, refuses anyone else, answers the UI's preflight.
    const token = randomUUID();
    const server = codecServer({
      codec: new AesGcmCodec(parseKeys(keys, 'ARMADA_ENCRYPTION_KEYS')),
      corsOrigin: 'http://localhost:8233',
      token,
    });
    await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
    try {
      const url = `http://127.0.0.1:${(server.address() as AddressInfo).port}/decode`;
      const body = JSON.stringify({ payloads: [input] });
      const headers = { 'Content-Type': 'application/json', 'X-Namespace': 'default' };
      const refused = await fetch(url, { method: 'POST', headers, body });
      expect(refused.status).toBe(401);
      const decoded = await fetch(url, {
        method: 'POST',
        headers: { ...headers, Authorization: `Bearer ${token}` },
        body,
      });
      expect(decoded.status).toBe(200);
      const [plain] = ((await decoded.json()) as { payloads: { data: string }[] }).payloads;
      expect(Buffer.from(plain.data, 'base64').toString()).toContain(secret);
      const preflight = await fetch(url, {
        method: 'OPTIONS',
        headers: { Origin: 'http://localhost:8233', 'Access-Control-Request-Method': 'POST' },
      });
      expect(preflight.status).toBe(204);
      expect(preflight.headers.get('access-control-allow-origin')).toBe('http://localhost:8233');
      expect(preflight.headers.get('access-control-allow-headers')).toContain('X-Namespace');
    } finally {
      server.close();
    }
  });
});
