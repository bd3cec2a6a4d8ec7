import { execFile, spawn } from 'node:child_process';
import { randomUUID } from 'node:crypto';
import { once } from 'node:events';
import { mkdtemp, readdir, readFile, rm, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import path from 'node:path';
import { promisify } from 'node:util';
import { eventually, spawnCaptured } from '../helpers/processes';

const repo = path.resolve(__dirname, '../..');

/** PIDs of the processes whose environment holds `marker` (they inherit it from start.sh). */
async function processesMarked(marker: string): Promise<number[]> {
  const pids: number[] = [];
  for (const entry of await readdir('/proc')) {
    if (!/^\d+$/.test(entry)) continue;
    const environ = await readFile(`/proc/${entry}/environ`, 'utf8').catch(() => '');
    if (environ.split('\0').includes(marker)) pids.push(Number(entry));
  }
  return pids;
}

/** What each process is, for a failure's message. */
async function describeProcesses(pids: number[]): Promise<string> {
  const lines = await Promise.all(
    pids.map(async (pid) => {
      const cmdline = await readFile(`/proc/${pid}/cmdline`, 'utf8').catch(() => '(gone)');
      return `${pid}: ${cmdline.split('\0').join(' ').slice(0, 200)}`;
    }),
  );
  return lines.join('\n');
}

/**
 * `npm start` (deploy/start.sh) as a newcomer runs it, `npm start 2>&1 | tee start.log`, on the
 * suite's Temporal dev server (so no second server on its fixed ports) and a sandbox of its own
 * (no cluster answers its KUBECONFIG), its worker on a task queue of its own. Ctrl-C is SIGINT to
 * the terminal's foreground process group: tee dies at once, and start.sh must still stop
 * everything it started, the sandbox's detached control plane too.
 */
describe('npm start piped into tee, then Ctrl-C', () => {
  let sandboxDir = '';
  afterAll(async () => {
    if (!sandboxDir) return;
    await promisify(execFile)('bash', ['deploy/sandbox/cluster.sh', 'down'], {
      cwd: repo,
      env: { ...process.env, SANDBOX_DIR: sandboxDir },
    }).catch(() => undefined);
    await rm(sandboxDir, { recursive: true, force: true });
  });

  it('stops every process it started, the sandbox included, though the pipe is gone', async () => {
    sandboxDir = await mkdtemp(path.join(tmpdir(), 'armada-start-'));
    const marker = `ARMADA_TEST_START=${randomUUID()}`;
    // The suite's own settings for its processes (the suite sandbox's kubeconfigs) stay out.
    const inherited = Object.fromEntries(
      Object.entries(process.env).filter(([key]) => !key.startsWith('ARMADA_') || key === 'ARMADA_TEST_RUN'),
    );
    const env = {
      ...inherited,
      [marker.split('=')[0]]: marker.split('=')[1],
      KUBECONFIG: path.join(sandboxDir, 'no-cluster-here'),
      SANDBOX_DIR: sandboxDir,
      ARMADA_TASK_QUEUE: `start-${randomUUID()}`,
      ARMADA_METRICS_PORT: '0',
    };
    const log = path.join(sandboxDir, 'start.log');
    // Its own process group, as a terminal's foreground job: `bash -c` runs the pipeline.
    const job = spawn('bash', ['-c', 'npm start 2>&1 | tee "$0" >/dev/null', log], {
      cwd: repo,
      env,
      detached: true,
      stdio: 'ignore',
    });
    const jobExited = once(job, 'exit');
    const output = () => readFile(log, 'utf8').catch(() => '');
    await eventually(
      'npm start printing its banner',
      async () => ((await output()).includes('armada-temporal is running') ? true : undefined),
      { timeoutMs: 150_000, process: { child: job, output: () => '' } },
    ).catch(async (err: Error) => {
      throw new Error(`${err.message}\nstart.log:\n${await output()}`);
    });
    // The banner says how to reach helm and the matching kubectl from another terminal.
    expect(await output()).toContain(`export PATH=${repo}/.tools/bin:$PATH`);
    const started = await processesMarked(marker);
    expect(started.length).toBeGreaterThan(0);
    const sandboxPids = await promisify(execFile)('pgrep', ['-f', `${sandboxDir}/kwok/clusters/`]);
    expect(sandboxPids.stdout.trim()).not.toBe('');

    process.kill(-job.pid!, 'SIGINT');
    await jobExited;
    await eventually(
      'every process npm start started stopped',
      async () => ((await processesMarked(marker)).length === 0 ? true : undefined),
      { timeoutMs: 60_000 },
    ).catch(async (err: Error) => {
      const left = await describeProcesses(await processesMarked(marker));
      throw new Error(`${err.message}\nleft running:\n${left}\nstart.log:\n${await output()}`);
    });
  }, 240_000);
});

/**
 * What `npm start` shows on a terminal: the bridge under `script`, which gives it a real
 * terminal, on the suite's Temporal server and an API server that never answers (its Lease
 * cannot be taken: a warning).
 */
describe('the logs of npm start on a terminal', () => {
  it('are one readable line each (time, level, component, message, key=value), not JSON', async () => {
    const dir = await mkdtemp(path.join(tmpdir(), 'armada-tty-'));
    const kubeconfig = path.join(dir, 'kubeconfig');
    // A cluster at a port where nothing listens.
    await writeFile(
      kubeconfig,
      `apiVersion: v1
kind: Config
clusters: [{ name: none, cluster: { server: "https://127.0.0.1:1" } }]
users: [{ name: none, user: { token: none } }]
contexts: [{ name: none, context: { cluster: none, user: none } }]
current-context: none
`,
    );
    const bridge = spawnCaptured('script', ['-qec', 'node dist/bridge/main.js', '/dev/null'], {
      ARMADA_KUBECONFIG: kubeconfig,
      ARMADA_METRICS_PORT: '0',
      ARMADA_LOG_FORMAT: '',
    });
    try {
      await bridge.printed('could not acquire or renew the Lease');
      const lines = bridge.output().split(/\r?\n/).filter(Boolean);
      expect(lines).toContainEqual(
        expect.stringMatching(/^\d\d:\d\d:\d\d\.\d{3} INFO {2}bridge metrics listening port=\d+$/),
      );
      expect(lines).toContainEqual(
        expect.stringMatching(
          /^\d\d:\d\d:\d\d\.\d{3} WARN {2}bridge could not acquire or renew the Lease lease=default\/armada-bridge identity=\S+ error=".*"$/,
        ),
      );
      expect(lines.filter((line) => line.startsWith('{'))).toEqual([]);
    } finally {
      await bridge.stop();
      await rm(dir, { recursive: true, force: true });
    }
  });
});
