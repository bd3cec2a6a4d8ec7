import { once } from 'node:events';
import { randomUUID } from 'node:crypto';
import { uniqueName } from '../helpers/env';
import { kubectl } from '../helpers/kube';
import { WORKER_POLLING, startBridge, startProcess, type ProductProcess } from '../helpers/processes';

/**
 * Ctrl-C on `npm start` delivers SIGINT to the whole process group and the start script adds
 * SIGTERM: a worker or a bridge that gets more than one signal while it stops must log it, stop
 * as for one, exit 0 and print no stack trace (runs/signals.ts).
 */
describe('a second and third signal while stopping (worker and bridge processes)', () => {
  const namespace = uniqueName('signals');

  beforeAll(async () => {
    await kubectl('create', 'namespace', namespace);
  });
  afterAll(async () => {
    await kubectl('delete', 'namespace', namespace, '--wait=false');
  });

  /** SIGINT, SIGINT, SIGTERM at once; the exit code and every line printed after the first. */
  async function signalThrice(process: ProductProcess): Promise<{ code: number | null; lines: string[] }> {
    const exited = once(process.child, 'exit') as Promise<[number | null, NodeJS.Signals | null]>;
    const before = process.output().length;
    for (const signal of ['SIGINT', 'SIGINT', 'SIGTERM'] as const) process.child.kill(signal);
    const [code] = await exited;
    return {
      code,
      lines: process
        .output()
        .slice(before)
        .split('\n')
        .filter((line) => line.trim()),
    };
  }

  const messages = (lines: string[]) =>
    lines.map((line) => (JSON.parse(line) as { message: string }).message);

  it.each([
    [
      'worker',
      () => startProcess('dist/worker/main.js', { ARMADA_TASK_QUEUE: `test-${randomUUID()}` }),
      WORKER_POLLING,
    ],
    [
      'bridge',
      () => startBridge(namespace, { ARMADA_TASK_QUEUE: `test-${randomUUID()}` }),
      '"started leading"',
    ],
  ])('the %s exits 0 and logs the later signals as "still shutting down"', async (_name, start, ready) => {
    const process = start();
    await process.printed(ready);
    const { code, lines } = await signalThrice(process);
    expect(code).toBe(0);
    // Every line is a JSON log line (a stack trace is not), and none is an error.
    expect(lines.map((line) => (JSON.parse(line) as { level: string }).level.toLowerCase())).not.toContain(
      'error',
    );
    const said = messages(lines);
    expect(said.filter((m) => m === 'shutting down')).toHaveLength(1);
    expect(said.filter((m) => m === 'still shutting down')).toHaveLength(2);
  });
});
