import { TestWorkflowEnvironment } from '@temporalio/testing';
import { execFile } from 'node:child_process';
import { createServer } from 'node:net';
import { promisify } from 'node:util';
import { toolPath } from '../../activities/tools';
import { searchAttributes } from '../../workflows/search-attributes';
import { eventually, spawnCaptured, type ProductProcess } from './processes';

/** A running dev server and the address of its web UI. */
export interface TestTemporal {
  env: TestWorkflowEnvironment;
  uiUrl: string;
}

/**
 * Starts a real `temporal server start-dev` from the locally built CLI (never a download), with
 * the project's search attributes registered and its web UI on a free port (the UI test opens
 * it in a browser). The caller tears it down.
 */
export async function startTemporal(): Promise<TestTemporal> {
  const ip = '127.0.0.1';
  const uiPort = await freePort(ip);
  const env = await TestWorkflowEnvironment.createLocal({
    server: {
      executable: { type: 'existing-path', path: toolPath('temporal') },
      ip,
      uiPort,
      searchAttributes,
    },
  });
  return { env, uiUrl: `http://${ip}:${uiPort}` };
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
 * A dev server of a test's own, as a process it can kill, keeping its state in `dbFile` (so a
 * restart on the same file finds the runs again), with the project's search attributes;
 * resolves once it serves.
 */
export async function startDevServer(port: number, dbFile: string): Promise<ProductProcess> {
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
      '--headless',
      '--db-filename',
      dbFile,
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
