import { execFile } from 'node:child_process';
import { createServer } from 'node:net';
import { promisify } from 'node:util';
import { toolPath } from '../../activities/tools';
import { registeredType, searchAttributes } from '../../workflows/search-attributes';
import { eventually, spawnCaptured, type ProductProcess } from './processes';

/** A running dev server: where it serves, its web UI, and the process (the caller stops it). */
export interface TestTemporal {
  address: string;
  uiUrl: string;
  server: ProductProcess;
}

/** Attempts at starting the suite's dev server, each on ports of its own. */
const DEV_SERVER_ATTEMPTS = 3;

/**
 * Starts a real `temporal server start-dev` from the locally built CLI (never a download), in
 * memory, with the project's search attributes and its web UI on a free port (the UI test opens
 * it in a browser).
 *
 * Not the SDK's TestWorkflowEnvironment.createLocal: it gives the server a fixed 5 s to answer,
 * which a loaded 2-core machine can miss ("ephemeral server … did not start within 5s"). Once,
 * right after the sandbox cluster started, the server died while starting (a Go panic in its
 * set-up, whose first lines were not kept; a port taken between the pick and the bind fits):
 * a start that fails is logged, with what the server printed, and tried again on new ports.
 */
export async function startTemporal(): Promise<TestTemporal> {
  for (let attempt = 1; ; attempt++) {
    const port = await freePort();
    const uiPort = await freePort();
    try {
      const server = await startDevServer(port, { uiPort });
      return { address: `127.0.0.1:${port}`, uiUrl: `http://127.0.0.1:${uiPort}`, server };
    } catch (err) {
      if (attempt === DEV_SERVER_ATTEMPTS) throw err;
      console.warn(
        `dev server start ${attempt} of ${DEV_SERVER_ATTEMPTS} failed, trying new ports: ${String(err)}`,
      );
    }
  }
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
      // As the cluster of deploy/temporal-cluster runs (config/dynamic.yaml says why).
      '--dynamic-config-value',
      'system.enableActivityEagerExecution=true',
      ...searchAttributes.flatMap((key) => ['--search-attribute', `${key.name}=${registeredType(key)}`]),
    ],
    {},
  );
  const health = () =>
    promisify(execFile)(toolPath('temporal'), ['operator', 'cluster', 'health', '--address', address]).then(
      ({ stdout }) => (stdout.includes('SERVING') ? true : undefined),
    );
  try {
    await eventually('the dev server serving', health, { process: server, timeoutMs: 60_000 });
  } catch (err) {
    await server.stop('SIGKILL');
    throw err;
  }
  return server;
}
