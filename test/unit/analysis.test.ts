import { CancelledFailure } from '@temporalio/common';
import { MockActivityEnvironment } from '@temporalio/testing';
import { createServer, type IncomingMessage, type Server, type ServerResponse } from 'node:http';
import type { AddressInfo } from 'node:net';
import { checkAnalysis, judgeResponse } from '../../activities/analysis';
import type { AnalysisRequest } from '../../core/contracts/analysis';

const URL_ = 'http://x/y';
const rate = { field: 'metrics.error_rate', max: 0.05 };

describe('judgeResponse', () => {
  it.each<
    [string, number, string, Omit<AnalysisRequest, 'url'>, { ok: boolean; value?: number; message: string }]
  >([
    ['200, nothing else asked', 200, 'fine', {}, { ok: true, message: 'GET http://x/y: status 200' }],
    [
      '503 where 200 expected',
      503,
      '',
      {},
      { ok: false, message: 'GET http://x/y: status 503, expected 200' },
    ],
    [
      '503 quotes the body',
      503,
      'upstream\n  down',
      {},
      { ok: false, message: 'GET http://x/y: status 503, expected 200; body: "upstream down"' },
    ],
    [
      'expected 204 got 204',
      204,
      '',
      { expectedStatus: 204 },
      { ok: true, message: 'GET http://x/y: status 204' },
    ],
    [
      'expected 204 got 200',
      200,
      '',
      { expectedStatus: 204 },
      { ok: false, message: 'GET http://x/y: status 200, expected 204' },
    ],
    [
      'status checked before the JSON',
      500,
      '{"metrics":{"error_rate":0.01}}',
      { json: rate },
      {
        ok: false,
        message: 'GET http://x/y: status 500, expected 200; body: "{\\"metrics\\":{\\"error_rate\\":0.01}}"',
      },
    ],
    [
      'value under max',
      200,
      '{"metrics":{"error_rate":0.01}}',
      { json: rate },
      { ok: true, value: 0.01, message: 'GET http://x/y: status 200, metrics.error_rate = 0.01 (max 0.05)' },
    ],
    [
      'value above max',
      200,
      '{"metrics":{"error_rate":0.2}}',
      { json: rate },
      { ok: false, value: 0.2, message: 'GET http://x/y: metrics.error_rate = 0.2, above max 0.05' },
    ],
    [
      'value equal to max (inclusive)',
      200,
      '{"metrics":{"error_rate":0.05}}',
      { json: rate },
      { ok: true, value: 0.05, message: 'GET http://x/y: status 200, metrics.error_rate = 0.05 (max 0.05)' },
    ],
    [
      'value below min',
      200,
      '{"success":0.9}',
      { json: { field: 'success', min: 0.99 } },
      { ok: false, value: 0.9, message: 'GET http://x/y: success = 0.9, below min 0.99' },
    ],
    [
      'value within min and max',
      200,
      '{"success":0.995}',
      { json: { field: 'success', min: 0.99, max: 1 } },
      { ok: true, value: 0.995, message: 'GET http://x/y: status 200, success = 0.995 (min 0.99, max 1)' },
    ],
    [
      'no bounds: only a number is required',
      200,
      '{"n":-3}',
      { json: { field: 'n' } },
      { ok: true, value: -3, message: 'GET http://x/y: status 200, n = -3' },
    ],
    [
      'numeric string (Prometheus style)',
      200,
      '{"data":{"result":[{"value":[1700000000.1,"0.02"]}]}}',
      { json: { field: 'data.result.0.value.1', max: 0.05 } },
      {
        ok: true,
        value: 0.02,
        message: 'GET http://x/y: status 200, data.result.0.value.1 = 0.02 (max 0.05)',
      },
    ],
    [
      'array index',
      200,
      '{"items":[{"value":1},{"value":7}]}',
      { json: { field: 'items.1.value', max: 5 } },
      { ok: false, value: 7, message: 'GET http://x/y: items.1.value = 7, above max 5' },
    ],
    [
      'top-level array',
      200,
      '[3]',
      { json: { field: '0', min: 1 } },
      { ok: true, value: 3, message: 'GET http://x/y: status 200, 0 = 3 (min 1)' },
    ],
    [
      'body is not JSON',
      200,
      '<html>oops</html>',
      { json: rate },
      { ok: false, message: 'GET http://x/y: body is not JSON; body: "<html>oops</html>"' },
    ],
    [
      'empty body is not JSON',
      200,
      '',
      { json: rate },
      { ok: false, message: 'GET http://x/y: body is not JSON' },
    ],
    [
      'field missing',
      200,
      '{"metrics":{}}',
      { json: rate },
      { ok: false, message: 'GET http://x/y: field metrics.error_rate missing' },
    ],
    [
      'path through a number',
      200,
      '{"metrics":5}',
      { json: rate },
      { ok: false, message: 'GET http://x/y: field metrics.error_rate missing' },
    ],
    [
      'index out of range',
      200,
      '{"items":[1]}',
      { json: { field: 'items.1' } },
      { ok: false, message: 'GET http://x/y: field items.1 missing' },
    ],
    [
      'non-numeric index into an array',
      200,
      '{"items":[1]}',
      { json: { field: 'items.length' } },
      { ok: false, message: 'GET http://x/y: field items.length missing' },
    ],
    [
      'prototype properties are not fields',
      200,
      '{}',
      { json: { field: 'constructor.length' } },
      { ok: false, message: 'GET http://x/y: field constructor.length missing' },
    ],
    [
      'string value',
      200,
      '{"metrics":{"error_rate":"high"}}',
      { json: rate },
      { ok: false, message: 'GET http://x/y: field metrics.error_rate is not a number: "high"' },
    ],
    [
      'null value',
      200,
      '{"metrics":{"error_rate":null}}',
      { json: rate },
      { ok: false, message: 'GET http://x/y: field metrics.error_rate is not a number: null' },
    ],
    [
      'boolean value',
      200,
      '{"up":true}',
      { json: { field: 'up', min: 1 } },
      { ok: false, message: 'GET http://x/y: field up is not a number: true' },
    ],
    [
      'object value',
      200,
      '{"metrics":{"error_rate":{"p99":1}}}',
      { json: rate },
      { ok: false, message: 'GET http://x/y: field metrics.error_rate is not a number: {"p99":1}' },
    ],
    [
      'empty string value',
      200,
      '{"metrics":{"error_rate":""}}',
      { json: rate },
      { ok: false, message: 'GET http://x/y: field metrics.error_rate is not a number: ""' },
    ],
  ])('%s', (_name, status, body, req, expected) => {
    expect(judgeResponse(status, body, { url: URL_, ...req })).toEqual({ status, ...expected });
  });

  it('quotes at most 200 characters of a long body', () => {
    const body = 'x'.repeat(10_000);
    const { message } = judgeResponse(502, body, { url: URL_ });
    const quote = JSON.parse(message.slice(message.indexOf('; body: ') + '; body: '.length)) as string;
    expect(quote.length).toBeLessThanOrEqual(200);
    expect(quote.endsWith('…')).toBe(true);
    expect(message.length).toBeLessThan(300);
  });

  it('quotes at most 200 characters of a long non-number value', () => {
    const body = JSON.stringify({ v: 'y'.repeat(5_000) });
    const { message } = judgeResponse(200, body, { url: URL_, json: { field: 'v' } });
    expect(message.length).toBeLessThan(300);
  });

  it('drops credentials from the URL in messages', () => {
    const { message } = judgeResponse(503, '', { url: 'https://user:secret@example.com/health' });
    expect(message).toBe('GET https://example.com/health: status 503, expected 200');
  });
});

describe('checkAnalysis against a loopback server', () => {
  let server: Server;
  let base: string;
  /** Resolved by /slow when its request arrives, so a test can act while the request hangs. */
  let slowArrived: () => void = () => undefined;

  const routes: Record<string, (req: IncomingMessage, res: ServerResponse) => void> = {
    '/ok': (_req, res) => res.end('ok'),
    '/down': (_req, res) => {
      res.statusCode = 503;
      res.end('upstream down');
    },
    '/huge-error': (_req, res) => {
      res.statusCode = 500;
      res.end('E'.repeat(100_000));
    },
    '/metrics/good': (_req, res) => json(res, { metrics: { error_rate: 0.01 } }),
    '/metrics/bad': (_req, res) => json(res, { metrics: { error_rate: 0.2 } }),
    '/html': (_req, res) => res.end('<html><body>not json</body></html>'),
    '/big-json': (_req, res) => json(res, { pad: 'p'.repeat(2 * 1024 * 1024), metrics: { error_rate: 0 } }),
    // Never answers; the request ends when the client aborts or the server closes connections.
    '/slow': () => slowArrived(),
    // Headers at once, then the body never finishes.
    '/slow-body': (_req, res) => {
      res.writeHead(200, { 'content-type': 'application/json' });
      res.write('{"metrics":');
    },
  };

  function json(res: ServerResponse, value: unknown): void {
    res.setHeader('content-type', 'application/json');
    res.end(JSON.stringify(value));
  }

  beforeAll(async () => {
    server = createServer((req, res) => {
      const route = routes[new URL(req.url ?? '/', 'http://localhost').pathname];
      if (route) return route(req, res);
      res.statusCode = 404;
      res.end('no such route');
    });
    await new Promise<void>((resolve, reject) => {
      server.once('error', reject);
      server.listen(0, '127.0.0.1', () => resolve());
    });
    base = `http://127.0.0.1:${(server.address() as AddressInfo).port}`;
  });

  afterAll(async () => {
    server.closeAllConnections();
    await new Promise<void>((resolve) => server.close(() => resolve()));
  });

  it('passes on 200', async () => {
    await expect(checkAnalysis({ url: `${base}/ok` })).resolves.toEqual({
      ok: true,
      status: 200,
      message: `GET ${base}/ok: status 200`,
    });
  });

  it('fails on 503 where 200 is expected, quoting the body', async () => {
    await expect(checkAnalysis({ url: `${base}/down` })).resolves.toEqual({
      ok: false,
      status: 503,
      message: `GET ${base}/down: status 503, expected 200; body: "upstream down"`,
    });
  });

  it('passes on 503 when 503 is expected', async () => {
    await expect(checkAnalysis({ url: `${base}/down`, expectedStatus: 503 })).resolves.toMatchObject({
      ok: true,
      status: 503,
    });
  });

  it('quotes at most 200 characters of a large error body', async () => {
    const result = await checkAnalysis({ url: `${base}/huge-error` });
    expect(result).toMatchObject({ ok: false, status: 500 });
    expect(result.message.length).toBeLessThan(300);
  });

  it('passes a JSON field under its max', async () => {
    await expect(checkAnalysis({ url: `${base}/metrics/good`, json: rate })).resolves.toEqual({
      ok: true,
      status: 200,
      value: 0.01,
      message: `GET ${base}/metrics/good: status 200, metrics.error_rate = 0.01 (max 0.05)`,
    });
  });

  it('fails a JSON field above its max', async () => {
    await expect(checkAnalysis({ url: `${base}/metrics/bad`, json: rate })).resolves.toEqual({
      ok: false,
      status: 200,
      value: 0.2,
      message: `GET ${base}/metrics/bad: metrics.error_rate = 0.2, above max 0.05`,
    });
  });

  it('fails a body that is not JSON', async () => {
    const result = await checkAnalysis({ url: `${base}/html`, json: rate });
    expect(result).toMatchObject({ ok: false, status: 200 });
    expect(result.message).toContain('body is not JSON');
  });

  it('fails a JSON body over 1 MiB without parsing it', async () => {
    await expect(checkAnalysis({ url: `${base}/big-json`, json: rate })).resolves.toEqual({
      ok: false,
      status: 200,
      message: `GET ${base}/big-json: body larger than 1048576 bytes`,
    });
  });

  it('times out quickly on a server that does not answer', async () => {
    const started = Date.now();
    const result = await checkAnalysis({ url: `${base}/slow`, timeoutSeconds: 0.2 });
    expect(Date.now() - started).toBeLessThan(2_000);
    expect(result).toEqual({ ok: false, message: `GET ${base}/slow: timed out after 0.2s` });
  });

  it('times out on a body that never ends, naming the status', async () => {
    const started = Date.now();
    const result = await checkAnalysis({ url: `${base}/slow-body`, json: rate, timeoutSeconds: 0.2 });
    expect(Date.now() - started).toBeLessThan(2_000);
    expect(result).toEqual({
      ok: false,
      status: 200,
      message: `GET ${base}/slow-body: status 200, timed out after 0.2s`,
    });
  });

  it('fails on a refused connection', async () => {
    const closed = createServer();
    await new Promise<void>((resolve, reject) => {
      closed.once('error', reject);
      closed.listen(0, '127.0.0.1', () => resolve());
    });
    const port = (closed.address() as AddressInfo).port;
    await new Promise<void>((resolve) => closed.close(() => resolve()));

    const result = await checkAnalysis({ url: `http://127.0.0.1:${port}/health` });
    expect(result.ok).toBe(false);
    expect(result.status).toBeUndefined();
    expect(result.message).toBe(
      `GET http://127.0.0.1:${port}/health: connect ECONNREFUSED 127.0.0.1:${port}`,
    );
  });

  it.each([
    ['not a URL', { url: 'not a url' }, 'GET not a url: not a valid URL'],
    [
      'ftp',
      { url: 'ftp://example.com/x' },
      'GET ftp://example.com/x: only http and https URLs are checked, not ftp:',
    ],
    [
      'zero timeout',
      { url: 'http://127.0.0.1:1/', timeoutSeconds: 0 },
      'GET http://127.0.0.1:1/: timeoutSeconds must be a positive number, got 0',
    ],
  ])('fails an unusable request (%s) without a request', async (_name, req, message) => {
    await expect(checkAnalysis(req)).resolves.toEqual({ ok: false, message });
  });

  it('rejects with the cancellation when the activity is cancelled mid-request', async () => {
    const env = new MockActivityEnvironment();
    const arrived = new Promise<void>((resolve) => (slowArrived = resolve));
    const running = env.run(checkAnalysis, { url: `${base}/slow`, timeoutSeconds: 60 });
    await arrived;
    env.cancel();
    await expect(running).rejects.toBeInstanceOf(CancelledFailure);
  });

  it('checks inside an activity like outside one', async () => {
    const env = new MockActivityEnvironment();
    await expect(env.run(checkAnalysis, { url: `${base}/metrics/bad`, json: rate })).resolves.toMatchObject({
      ok: false,
      value: 0.2,
    });
  });
});
