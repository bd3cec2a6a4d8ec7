import type { Payload, PayloadCodec } from '@temporalio/common';
import { createServer, type IncomingMessage, type Server, type ServerResponse } from 'node:http';
import { isIPv4, type AddressInfo } from 'node:net';
import { AesGcmCodec, loadKeys } from '../runs/codec';
import { variable } from '../core/environment';

/** A payload as the Temporal UI and CLI send it to a codec server: proto3 JSON, bytes in base64. */
interface JsonPayload {
  metadata?: Record<string, string>;
  data?: string;
}

const fromJson = (p: JsonPayload): Payload => ({
  metadata: Object.fromEntries(
    Object.entries(p.metadata ?? {}).map(([k, v]) => [k, Buffer.from(v, 'base64')]),
  ),
  data: Buffer.from(p.data ?? '', 'base64'),
});

const toJson = (p: Payload): JsonPayload => ({
  metadata: Object.fromEntries(
    Object.entries(p.metadata ?? {}).map(([k, v]) => [
      k,
      Buffer.from(v ?? new Uint8Array()).toString('base64'),
    ]),
  ),
  data: Buffer.from(p.data ?? new Uint8Array()).toString('base64'),
});

export interface CodecServerOptions {
  codec: PayloadCodec;
  /** The one origin allowed to call from a browser (the Temporal UI's). */
  corsOrigin: string;
  /** When set, every request needs `Authorization: Bearer <token>`. */
  token?: string;
}

const MAX_BODY_BYTES = 16 * 1024 * 1024;

/**
 * The codec server the Temporal UI (Settings → Codec Server, or the UI server's
 * `TEMPORAL_CODEC_ENDPOINT`) and `temporal workflow show --codec-endpoint` call to show
 * payloads decrypted: POST /decode and /encode with `{ payloads: [...] }`. Anyone who can reach
 * it with the token can read every payload: run it where only those allowed can.
 */
export function codecServer(opts: CodecServerOptions): Server {
  const cors = {
    'Access-Control-Allow-Origin': opts.corsOrigin,
    'Access-Control-Allow-Methods': 'POST, OPTIONS',
    'Access-Control-Allow-Headers': 'Content-Type, Authorization, X-Namespace',
    'Access-Control-Allow-Credentials': 'true',
    Vary: 'Origin',
  };
  const reply = (res: ServerResponse, status: number, body: unknown) => {
    res.writeHead(status, { ...cors, 'Content-Type': 'application/json' });
    res.end(JSON.stringify(body));
  };
  return createServer((req: IncomingMessage, res: ServerResponse) => {
    if (req.method === 'OPTIONS') {
      res.writeHead(204, cors);
      res.end();
      return;
    }
    const action = req.url?.split('?')[0];
    if (req.method !== 'POST' || (action !== '/decode' && action !== '/encode'))
      return reply(res, 404, { message: 'POST /decode or /encode' });
    if (opts.token && req.headers.authorization !== `Bearer ${opts.token}`)
      return reply(res, 401, { message: 'a bearer token is required' });
    const chunks: Buffer[] = [];
    let size = 0;
    req.on('data', (chunk: Buffer) => {
      size += chunk.length;
      if (size > MAX_BODY_BYTES) req.destroy();
      else chunks.push(chunk);
    });
    req.on('end', () => {
      void (async () => {
        try {
          const { payloads } = JSON.parse(Buffer.concat(chunks).toString('utf8')) as {
            payloads?: JsonPayload[];
          };
          if (!Array.isArray(payloads))
            return reply(res, 400, { message: 'the body must be { "payloads": [...] }' });
          const coded =
            action === '/decode'
              ? await opts.codec.decode(payloads.map(fromJson))
              : await opts.codec.encode(payloads.map(fromJson));
          reply(res, 200, { payloads: coded.map(toJson) });
        } catch (err) {
          reply(res, 400, { message: (err as Error).message });
        }
      })();
    });
  });
}

/** Where and how `npm run codec-server` listens, read from the environment. */
export interface CodecServerSettings {
  host: string;
  port: number;
  corsOrigin: string;
  token?: string;
}

/**
 * The codec server's settings: ARMADA_CODEC_HOST (default 127.0.0.1), ARMADA_CODEC_PORT (default
 * 8888), ARMADA_CODEC_CORS_ORIGIN, ARMADA_CODEC_TOKEN. Whoever reaches the server reads every
 * payload, so it listens on the loopback unless told otherwise, and refuses any other address
 * without a token.
 */
export function codecServerSettings(env: NodeJS.ProcessEnv = process.env): CodecServerSettings {
  const host = variable(env, 'ARMADA_CODEC_HOST') || '127.0.0.1';
  const port = Number(variable(env, 'ARMADA_CODEC_PORT') || 8888);
  if (!Number.isInteger(port) || port < 0 || port > 65535)
    throw new Error(`ARMADA_CODEC_PORT must be a port number, not "${env.ARMADA_CODEC_PORT}"`);
  const token = variable(env, 'ARMADA_CODEC_TOKEN');
  if (!token && !isLoopback(host))
    throw new Error(
      `ARMADA_CODEC_HOST is ${host}, not a loopback address: set ARMADA_CODEC_TOKEN too ` +
        '(anyone who reaches the codec server without one reads every payload), or leave ARMADA_CODEC_HOST unset for 127.0.0.1',
    );
  return {
    host,
    port,
    token,
    corsOrigin: variable(env, 'ARMADA_CODEC_CORS_ORIGIN') || 'http://localhost:8233',
  };
}

/** 127.0.0.0/8, ::1 (also IPv4-mapped) or the name localhost: reachable from this machine only. */
function isLoopback(host: string): boolean {
  const address = host.replace(/^\[(.*)\]$/, '$1').toLowerCase();
  if (address === 'localhost' || address === '::1') return true;
  const ipv4 = address.startsWith('::ffff:') ? address.slice('::ffff:'.length) : address;
  return isIPv4(ipv4) && ipv4.startsWith('127.');
}

/** The codec server of `npm run codec-server` on the configured keys, listening when this resolves. */
export async function startCodecServer(env: NodeJS.ProcessEnv = process.env): Promise<Server> {
  const keys = loadKeys(env);
  if (keys.length === 0)
    throw new Error('no keys: set ARMADA_ENCRYPTION_KEYS or ARMADA_ENCRYPTION_KEYS_FILE');
  const { host, port, token, corsOrigin } = codecServerSettings(env);
  const server = codecServer({ codec: new AesGcmCodec(keys), corsOrigin, token });
  await new Promise<void>((resolve, reject) => {
    server.once('error', reject);
    server.listen(port, host, () => {
      server.off('error', reject);
      resolve();
    });
  });
  return server;
}

async function main(): Promise<void> {
  const server = await startCodecServer();
  const { address, port } = server.address() as AddressInfo;
  console.log(
    JSON.stringify({ level: 'info', component: 'codec-server', message: 'listening', host: address, port }),
  );
  const stop = () => server.close(() => process.exit(0));
  process.once('SIGINT', stop);
  process.once('SIGTERM', stop);
}

if (require.main === module) {
  main().catch((err: unknown) => {
    console.error(`codec-server: ${(err as Error).message}`);
    process.exit(1);
  });
}
