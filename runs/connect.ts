import { Client, Connection } from '@temporalio/client';
import { connect as tcpConnect } from 'node:net';
import { loadDataConverter } from './codec';
import { DEFAULT_TASK_QUEUE, taskQueueVariable } from './config';
import { clientConnectionOptions, loadTemporalConnection, temporalVariables } from './connection';

/** The variables armadactl reads through temporalTarget (docs/reference/environment.md). */
export const clientVariables = { ...temporalVariables, ...taskQueueVariable };

/**
 * Where armadactl finds Temporal: the SDK's standard variables and the Temporal CLI's profile,
 * as the worker reads them (runs/connection.ts), and the worker's task queue.
 */
export function temporalTarget(env = process.env) {
  return { ...loadTemporalConnection(env), taskQueue: env.ARMADA_TASK_QUEUE || DEFAULT_TASK_QUEUE };
}

/** How long armadactl waits for Temporal to answer before it gives up. */
const CONNECT_TIMEOUT_MS = 5000;

/** `host:port`, `[::1]:port` or `host` (Temporal's port 7233) as node:net takes them. */
export function hostPort(address: string): { host: string; port: number } {
  const match = /^\[?(.*?)\]?(?::(\d+))?$/.exec(address) as RegExpExecArray;
  return { host: match[1], port: match[2] ? Number(match[2]) : 7233 };
}

/** Why a TCP connection failed, in words (the errno codes people meet most). */
function reason(err: NodeJS.ErrnoException, address: string): string {
  switch (err.code) {
    case 'ECONNREFUSED':
      return 'connection refused: nothing listens there';
    case 'ENOTFOUND':
    case 'EAI_AGAIN':
      return `unknown host ${hostPort(address).host}`;
    case 'ETIMEDOUT':
      return `no answer within ${CONNECT_TIMEOUT_MS / 1000}s`;
    default:
      return err.message;
  }
}

/**
 * Opens and closes a TCP connection to the address: a closed port or an unknown host fails at
 * once with its reason, where gRPC would retry silently until its deadline. Addresses with a
 * scheme (`dns:///...`) are left to gRPC.
 */
function probe(address: string, timeoutMs: number): Promise<void> {
  if (address.includes('/')) return Promise.resolve();
  const { host, port } = hostPort(address);
  return new Promise((resolve, reject) => {
    const socket = tcpConnect({ host, port });
    socket.setTimeout(timeoutMs, () =>
      socket.destroy(Object.assign(new Error('timed out'), { code: 'ETIMEDOUT' })),
    );
    socket.once('connect', () => {
      socket.destroy();
      resolve();
    });
    socket.once('error', reject);
  });
}

/** A Temporal client, or an error that says where it looked and what to do. */
export async function connect(): Promise<{ client: Client; close: () => Promise<void> }> {
  const target = temporalTarget();
  const { address, namespace } = target;
  // Before the probe: a certificate that cannot be read is a configuration error, not a network one.
  const options = clientConnectionOptions(target);
  let connection: Connection;
  try {
    await probe(address, CONNECT_TIMEOUT_MS);
    connection = await Connection.connect({ ...options, connectTimeout: CONNECT_TIMEOUT_MS });
  } catch (err) {
    throw new Error(
      `cannot reach Temporal at ${address} (${reason(err as NodeJS.ErrnoException, address)}); start it with \`npm start\` or set TEMPORAL_ADDRESS`,
      { cause: err },
    );
  }
  return {
    client: new Client({ connection, namespace, dataConverter: loadDataConverter() }),
    close: () => connection.close(),
  };
}
