import { createServer, type IncomingMessage, type Server, type ServerResponse } from 'node:http';
import { once } from 'node:events';
import type { AddressInfo } from 'node:net';
import { Gauge, collectDefaultMetrics, type Registry } from 'prom-client';

/**
 * What the worker and the bridge share to serve metrics and health: prom-client's process
 * metrics and the HTTP endpoint. Neither process's own metrics live here.
 */

/**
 * prom-client's default metrics (process CPU, memory, file descriptors, event loop, heap, GC),
 * plus `process_max_resident_memory_bytes`, the peak RSS so far, which the default set lacks.
 */
export function collectProcessMetrics(registry: Registry): void {
  collectDefaultMetrics({ register: registry });
  new Gauge({
    name: 'process_max_resident_memory_bytes',
    help: 'Peak resident memory size in bytes (getrusage maxrss).',
    registers: [registry],
    collect() {
      // The kernel's high-water mark syncs per-thread counters lazily: never below the current size.
      this.set(Math.max(process.resourceUsage().maxRSS * 1024, process.memoryUsage.rss()));
    },
  });
}

/** What /metrics renders: a prom-client Registry, or anything that renders like one. */
export type Scrapeable = Pick<Registry, 'metrics' | 'contentType'>;

export interface HealthProbes {
  /** When given, `GET /readyz` answers 200 `ready` while it returns true, else 503 `not ready`. */
  ready?: () => boolean;
}

/**
 * Serves `GET /metrics` (the Prometheus text format), `GET /healthz` (200 `ok` while the
 * process answers at all) and, with a `ready` probe, `GET /readyz` on `port`, every interface;
 * 0 picks a free port. Resolves once listening, with the bound port; rejects when the port
 * cannot be bound.
 */
export async function serveMetrics(
  registry: Scrapeable,
  port: number,
  probes: HealthProbes = {},
): Promise<{ server: Server; port: number }> {
  const server = createServer((req, res) => void respond(registry, probes, req, res));
  server.listen(port);
  await once(server, 'listening').catch((err: Error) => {
    throw new Error(
      `cannot serve metrics on port ${port} (${err.message}); set ARMADA_METRICS_PORT (0: any free port)`,
      { cause: err },
    );
  });
  return { server, port: (server.address() as AddressInfo).port };
}

async function respond(
  registry: Scrapeable,
  { ready }: HealthProbes,
  req: IncomingMessage,
  res: ServerResponse,
): Promise<void> {
  const path = new URL(req.url ?? '/', 'http://metrics').pathname;
  const reply = (status: number, body: string, contentType = 'text/plain; charset=utf-8') => {
    res.writeHead(status, { 'Content-Type': contentType }).end(body);
  };
  const paths = ['/metrics', '/healthz', ...(ready ? ['/readyz'] : [])];
  if (!paths.includes(path)) return reply(404, `not found: try ${paths.join(', ')}\n`);
  if (req.method !== 'GET' && req.method !== 'HEAD') {
    res.setHeader('Allow', 'GET, HEAD');
    return reply(405, `${req.method} not allowed\n`);
  }
  if (path === '/healthz') return reply(200, 'ok\n');
  if (path === '/readyz') return ready!() ? reply(200, 'ready\n') : reply(503, 'not ready\n');
  try {
    reply(200, await registry.metrics(), registry.contentType);
  } catch (err) {
    reply(500, `cannot collect metrics: ${err instanceof Error ? err.message : String(err)}\n`);
  }
}
