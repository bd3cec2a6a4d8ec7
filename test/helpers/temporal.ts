import { execFile } from 'node:child_process';
import { createServer } from 'node:net';
import { promisify } from 'node:util';
import { toolPath } from '../../activities/tools';
import { searchAttributes } from '../../workflows/search-attributes';
import { eventually, spawnCaptured, type ProductProcess } from './processes';

/** A running dev server: where it serves, its web UI, and the process (the caller stops it). */
export interface TestTemporal {
  address: string;
  uiUrl: string;
  server: ProductProcess;
}

/**
 * Starts a real `temporal server start-dev` from the locally built CLI (never a download), in
 * memory, with the project's search attributes and its web UI on a free port (the UI test opens
 * it in a browser).
 *
 * Not the SDK's TestWorkflowEnvironment.createLocal: it gives the server a fixed 5 s to answer,
 * which a loaded 2-core machine can miss ("ephemeral server … did not start within 5s").
 */
export async function startTemporal(): Promise<TestTemporal> {
  const port = await freePort();
  const uiPort = await freePort();
  const server = await startDevServer(port, { uiPort });
  return { address: `127.0.0.1:${port}`, uiUrl: `http://127.0.0.1:${uiPort}`, server };
}

/** A port nothing listens on right now, as the OS hands it out. */
export function freePort(host = '127.0.0.1'): Promise<number> {
  return new Promise((resolve, reject) => {
    const server = createServer();
    server.once('error', reject);
    server.listen(0, host, () => {
      const { port } = server.address() as { port: number };
      server.close(() => resolve(port));
    });
  });
}

/**
 * A dev server as a process the caller can kill, with the project's search attributes; resolves
 * once it serves. With `dbFile` it keeps its state there (a restart on the same file finds the
 * runs again), else in memory; with `uiPort` it serves its web UI there, else none.
 */
export async function startDevServer(
  port: number,
  { dbFile, uiPort }: { dbFile?: string; uiPort?: number } = {},
): Promise<ProductProcess> {
  const address = `127.0.0.1:${port}`;
  const server = spawnCaptured(
    toolPath('temporal'),
    [
      'server',
      'start-dev',
      '--ip',
      '127.0.0.1',
      '--port',
      String(port),
      ...(uiPort === undefined ? ['--headless'] : ['--ui-port', String(uiPort)]),
      ...(dbFile === undefined ? [] : ['--db-filename', dbFile]),
      '--log-level',
      'error',
      ...searchAttributes.flatMap((key) => ['--search-attribute', `${key.name}=Keyword`]),
    ],
    {},
  );
  const health = () =>
    promisify(execFile)(toolPath('temporal'), ['operator', 'cluster', 'health', '--address', address]).then(
      ({ stdout }) => (stdout.includes('SERVING') ? true : undefined),
    );
  await eventually('the dev server serving', health, { process: server, timeoutMs: 60_000 });
  return server;
}
