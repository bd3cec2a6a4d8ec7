import { createServer, type Server } from 'node:http';
import type { AddressInfo } from 'node:net';

/** One POST the receiver took: where, what, when, and what it answered. */
export interface Received {
  path: string;
  body: Record<string, unknown>;
  at: number;
  status: number;
}

/**
 * A webhook receiver on loopback: records every POST; a path listed in `failFirst` answers 500
 * to its first N requests (a receiver that is briefly down), then 200.
 */
export async function startReceiver(failFirst: Record<string, number> = {}) {
  const received: Received[] = [];
  const server: Server = createServer((req, res) => {
    const chunks: Buffer[] = [];
    req.on('data', (chunk: Buffer) => chunks.push(chunk));
    req.on('end', () => {
      const path = req.url ?? '';
      const failing = (failFirst[path] ?? 0) > 0;
      if (failing) failFirst[path]--;
      const status = failing ? 500 : 200;
      received.push({
        path,
        body: JSON.parse(Buffer.concat(chunks).toString('utf8')),
        at: Date.now(),
        status,
      });
      res.writeHead(status).end();
    });
  });
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  const base = `http://127.0.0.1:${(server.address() as AddressInfo).port}`;
  return {
    base,
    /** What the path was delivered (answered 200), in the order it arrived. */
    delivered: (path: string) => received.filter((r) => r.path === path && r.status === 200),
    /** Every attempt at the path, failed ones included. */
    attempts: (path: string) => received.filter((r) => r.path === path),
    close: () => new Promise<void>((resolve) => server.close(() => resolve())),
  };
}
