import type { ChildProcess } from 'node:child_process';
import { readFileSync } from 'node:fs';
import path from 'node:path';
import { spawnCaptured } from '../test/helpers/processes';

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
 * `node dist/...js`, or a shell script). `BENCH_NODE_ARGS` (e.g. `--cpu-prof`; from `env`, else
 * the environment) is passed to `node` scripts, so a profile of the worker or the bridge can be
 * taken during a benchmark.
 */
export function startProcess(command: string, args: string[], env: NodeJS.ProcessEnv = {}): BenchProcess {
  const nodeArgs =
    command === process.execPath
      ? (env.BENCH_NODE_ARGS ?? process.env.BENCH_NODE_ARGS ?? '').split(/\s+/).filter(Boolean)
      : [];
  const captured = spawnCaptured(command, [...nodeArgs, ...args], env);
  const { child } = captured;
  const running = () => child.exitCode === null && child.signalCode === null;
  return {
    ...captured,
    peakRssBytes: () => (running() && child.pid ? peakRss(child.pid) : undefined),
  };
}

/** A compiled script of this project run by this Node.js: `node dist/<script>`. */
export function startNode(script: string, env: NodeJS.ProcessEnv = {}): BenchProcess {
  return startProcess(process.execPath, [path.join(repo, 'dist', script)], env);
}

/** VmHWM of a process (Linux): its peak resident set size, in bytes. */
export const peakRss = (pid: number) => procStatusBytes(pid, 'VmHWM');

/** VmRSS of a process (Linux): its resident set size now, in bytes. */
export const currentRss = (pid: number) => procStatusBytes(pid, 'VmRSS');

/** A size field of `/proc/<pid>/status`, in bytes; undefined once the process has exited. */
function procStatusBytes(pid: number, field: 'VmHWM' | 'VmRSS'): number | undefined {
  try {
    const match = new RegExp(`^${field}:\\s+(\\d+) kB$`, 'm').exec(
      readFileSync(`/proc/${pid}/status`, 'utf8'),
    );
    return match ? Number(match[1]) * 1024 : undefined;
  } catch {
    return undefined;
  }
}

/** The last lines of a process's output, for an error message. */
export function tail(output: string, lines = 30): string {
  return output.trimEnd().split('\n').slice(-lines).join('\n');
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
