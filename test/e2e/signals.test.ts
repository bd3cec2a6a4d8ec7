import { once } from 'node:events';
import { randomUUID } from 'node:crypto';
import { uniqueName } from '../helpers/env';
import { kubectl } from '../helpers/kube';
import { startBridge } from '../helpers/processes';

/**
 * Ctrl-C on `npm start` delivers SIGINT to the whole process group and the start script adds
 * SIGTERM: a bridge that gets more signals while it stops must stop as for one, exit 0 and print
 * no stack trace or error (runs/signals.ts). Sent as soon as it leads, the first signal also
 * meets its watches starting. (The worker's case: worker-process.test.ts, during a drain.)
 */
describe('the bridge process stopped by SIGINT, SIGINT and SIGTERM', () => {
  const namespace = uniqueName('signals');

  beforeAll(async () => {
    await kubectl('create', 'namespace', namespace);
  });
  afterAll(async () => {
    await kubectl('delete', 'namespace', namespace, '--wait=false');
  });

  it('exits 0, logging each later signal as "still shutting down", and prints no error', async () => {
    const bridge = startBridge(namespace, { ARMADA_TASK_QUEUE: `test-${randomUUID()}` });
    await bridge.printed('"started leading"');
    const exited = once(bridge.child, 'exit') as Promise<[number | null, NodeJS.Signals | null]>;
    bridge.child.kill('SIGINT');
    await bridge.printed('"shutting down"');
    // Apart: the kernel merges a signal into one of the same kind still pending.
    bridge.child.kill('SIGINT');
    await new Promise((resolve) => setTimeout(resolve, 5));
    bridge.child.kill('SIGTERM');
    const [code] = await exited;
    const lines = bridge
      .output()
      .split('\n')
      .filter((line) => line.trim())
      .map((line) => {
        try {
          return JSON.parse(line) as { level: string; message: string };
        } catch {
          throw new Error(`not a JSON log line (a stack trace?): ${line}`);
        }
      });
    expect({ code, errors: lines.filter((l) => l.level === 'error') }).toEqual({ code: 0, errors: [] });
    // One stop; the signals that arrive before it exits (its stop takes tens of milliseconds)
    // are only logged as "still shutting down".
    expect(lines.filter((l) => l.message === 'shutting down')).toHaveLength(1);
  });
});
