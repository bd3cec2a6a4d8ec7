import { Client, Connection } from '@temporalio/client';
import { execFile } from 'node:child_process';
import { mkdtemp, readFile, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import path from 'node:path';
import { promisify } from 'node:util';
import { toolPath } from '../../activities/tools';
import type { ManifestOutcome } from '../../core/contracts/workflows';
import { progressQuery } from '../../workflows/messages';
import { objectWorkflowId } from '../../core/plan/names';
import { helm, uniqueName } from '../helpers/env';
import { kubectl } from '../helpers/kube';
import { WORKER_POLLING, eventually, startProcess, type ProductProcess } from '../helpers/processes';
import { freePort, startDevServer } from '../helpers/temporal';

const repo = path.resolve(__dirname, '../..');

const taskQueue = uniqueName('trestart-queue');

/** armadactl as a user runs it, against this drill's server and task queue. */
async function armadactl(address: string, ...args: string[]): Promise<string> {
  const { stdout } = await promisify(execFile)(process.execPath, ['bin/armadactl.js', ...args], {
    cwd: repo,
    env: { ...process.env, TEMPORAL_ADDRESS: address, ARMADA_TASK_QUEUE: taskQueue },
  });
  return stdout;
}

/**
 * Drill 3: the Temporal server goes away mid-deploy and comes back on the same database file.
 * A dev server of the drill's own (SQLite file, fixed port), so the suite's shared one is never
 * touched; the worker is a process, as in production.
 */
describe('drill: Temporal server killed and restarted mid-deploy', () => {
  const releases = uniqueName('trestart');
  let server: ProductProcess | undefined;
  let worker: ProductProcess | undefined;

  afterAll(async () => {
    await worker?.stop('SIGKILL');
    await server?.stop('SIGKILL');
    await kubectl('delete', 'namespace', releases, '--wait=false').catch(() => '');
  });

  it('a manifest at its approval gate survives SIGKILL of the server and completes after the restart', async () => {
    const dir = await mkdtemp(path.join(tmpdir(), 'armada-trestart-'));
    const port = await freePort();
    const address = `127.0.0.1:${port}`;
    const dbFile = path.join(dir, 'temporal.db');
    const startServer = () => startDevServer(port, { dbFile });
    const first = await startServer();
    server = first;
    worker = startProcess('dist/worker/main.js', { TEMPORAL_ADDRESS: address, ARMADA_TASK_QUEUE: taskQueue });
    await worker.printed(WORKER_POLLING);

    const file = path.join(dir, 'manifest.yaml');
    const manifest = (await readFile(path.join(repo, 'examples/sequenced-manifest.yaml'), 'utf8'))
      .replaceAll('namespace: demo', `namespace: ${releases}`)
      .replace('  on_failure: rollback', '  on_failure: rollback\n  approval:\n    before: [apps]');
    await writeFile(file, manifest);
    await armadactl(address, 'apply', '-f', file);
    const workflowId = objectWorkflowId('ArmadaManifest', 'default', 'demo');
    const waitingAtGate = async () => {
      const connection = await Connection.connect({ address });
      try {
        const progress = await new Client({ connection }).workflow.getHandle(workflowId).query(progressQuery);
        return progress.phase === 'WaitingApproval' ? true : undefined;
      } finally {
        await connection.close();
      }
    };
    await eventually('the run waiting at its gate', waitingAtGate, { process: worker });

    await first.stop('SIGKILL');
    await expect(
      promisify(execFile)(toolPath('temporal'), ['operator', 'cluster', 'health', '--address', address]),
    ).rejects.toThrow();
    server = await startServer();
    // The run is still there, still waiting (it was never told anything else).
    await eventually('the run found waiting again', waitingAtGate, { process: worker });
    // Run from a file, no bridge: a Temporal administrator's approval, straight to Temporal.
    expect(await armadactl(address, 'approve', 'demo', '--as-temporal-admin')).toContain('approve');

    const connection = await Connection.connect({ address });
    try {
      const outcome = (await new Client({ connection }).workflow
        .getHandle(workflowId)
        .result()) as ManifestOutcome;
      expect(outcome.state).toBe('deployed');
    } finally {
      await connection.close();
    }
    const list = JSON.parse(await helm('list', '-n', releases, '-o', 'json')) as {
      name: string;
      status: string;
      revision: string;
    }[];
    // What a run without the outage produces: every release deployed once, at revision 1.
    expect(list.map((r) => `${r.name} ${r.status} ${r.revision}`).sort()).toEqual([
      'demo-admin deployed 1',
      'demo-backend deployed 1',
      'demo-settings deployed 1',
      'demo-web deployed 1',
    ]);
  });
});
