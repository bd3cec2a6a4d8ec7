import { spawn, type ChildProcess } from 'node:child_process';
import { once } from 'node:events';
import { readFileSync } from 'node:fs';
import { createServer } from 'node:net';
import path from 'node:path';

/** The repository root, from bench/ or from dist/bench/. */
export const repo = path.resolve(
  __dirname,
  __dirname.includes(`${path.sep}dist${path.sep}`) ? '../..' : '..',
);

/** A process a benchmark started: its output so far, a wait for a line, its peak memory, a stop. */
export interface BenchProcess {
  child: ChildProcess;
  output(): string;
  /** Resolves once its output contains `text`; rejects if it exits first. */
  printed(text: string): Promise<void>;
  /** Peak resident memory so far (the kernel's VmHWM), in bytes; undefined once it has exited. */
  peakRssBytes(): number | undefined;
  /** SIGTERM (or `signal`) and wait for it to exit. */
  stop(signal?: NodeJS.Signals): Promise<void>;
}

/**
 * Runs a command from the repository root with extra environment (a compiled script:
 * `node dist/...js`, or a shell script). `BENCH_NODE_ARGS` (e.g. `--cpu-prof`) is passed to
 * `node` scripts, so a profile of the worker or the bridge can be taken during a benchmark.
 */
export function startProcess(command: string, args: string[], env: NodeJS.ProcessEnv = {}): BenchProcess {
  const nodeArgs =
    command === process.execPath ? (process.env.BENCH_NODE_ARGS ?? '').split(/\s+/).filter(Boolean) : [];
  const child = spawn(command, [...nodeArgs, ...args], {
    cwd: repo,
    env: { ...process.env, ...env },
    stdio: ['ignore', 'pipe', 'pipe'],
  });
  let output = '';
  const waiters: { text: string; resolve: () => void }[] = [];
  const onData = (chunk: Buffer) => {
    output += chunk.toString();
    // Keep the tail only: a long benchmark's logs must not grow without bound.
    if (output.length > 4_000_000) output = output.slice(-2_000_000);
    for (const waiter of waiters.filter((w) => output.includes(w.text))) {
      waiters.splice(waiters.indexOf(waiter), 1);
      waiter.resolve();
    }
  };
  child.stdout!.on('data', onData);
  child.stderr!.on('data', onData);
  const exited = once(child, 'exit');
  const running = () => child.exitCode === null && child.signalCode === null;
  return {
    child,
    output: () => output,
    printed: (text) =>
      output.includes(text)
        ? Promise.resolve()
        : new Promise<void>((resolve, reject) => {
            waiters.push({ text, resolve });
            void exited.then(() =>
              reject(
                new Error(
                  `${[command, ...args].join(' ')} exited before printing "${text}":\n${tail(output)}`,
                ),
              ),
            );
          }),
    peakRssBytes: () => (running() && child.pid ? peakRss(child.pid) : undefined),
    async stop(signal = 'SIGTERM') {
      if (running()) child.kill(signal);
      await exited;
    },
  };
}

/** A compiled script of this project run by this Node.js: `node dist/<script>`. */
export function startNode(script: string, env: NodeJS.ProcessEnv = {}): BenchProcess {
  return startProcess(process.execPath, [path.join(repo, 'dist', script)], env);
}

/** VmHWM of a process (Linux): its peak resident set size, in bytes. */
export function peakRss(pid: number): number | undefined {
  try {
    const match = /^VmHWM:\s+(\d+) kB$/m.exec(readFileSync(`/proc/${pid}/status`, 'utf8'));
    return match ? Number(match[1]) * 1024 : undefined;
  } catch {
    return undefined;
  }
}

/** The last lines of a process's output, for an error message. */
export function tail(output: string, lines = 30): string {
  return output.trimEnd().split('\n').slice(-lines).join('\n');
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
 * Polls `check` every `intervalMs` until it returns a value; a check that throws counts as not
 * yet. Throws after `timeoutMs`, naming what it waited for.
 */
export async function until<T>(
  what: string,
  check: () => Promise<T | undefined>,
  { timeoutMs = 120_000, intervalMs = 100 } = {},
): Promise<T> {
  const deadline = Date.now() + timeoutMs;
  for (;;) {
    const value = await check().catch(() => undefined);
    if (value !== undefined) return value;
    if (Date.now() > deadline) throw new Error(`timed out after ${timeoutMs / 1000}s waiting for ${what}`);
    await new Promise((resolve) => setTimeout(resolve, intervalMs));
  }
}
