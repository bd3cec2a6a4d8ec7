import { spawn, type ChildProcess } from 'node:child_process';
import { once } from 'node:events';
import path from 'node:path';

const repo = path.resolve(__dirname, '../..');

export interface ProductProcess {
  child: ChildProcess;
  /** Everything it printed so far (stdout and stderr). */
  output(): string;
  /** Resolves once its output contains `text`. */
  printed(text: string): Promise<void>;
  /** SIGTERM (or `signal`) and wait for it to exit. */
  stop(signal?: NodeJS.Signals): Promise<void>;
}

/**
 * Runs one of the product's processes (`dist/worker/main.js`, `dist/bridge/main.js`, compiled by
 * the global setup) with extra environment, as production runs it, so a test can kill it.
 */
export function startProcess(script: string, env: NodeJS.ProcessEnv): ProductProcess {
  const child = spawn(process.execPath, [script], {
    cwd: repo,
    env: { ...process.env, ...env },
    stdio: ['ignore', 'pipe', 'pipe'],
  });
  let output = '';
  const waiters: { text: string; resolve: () => void }[] = [];
  const onData = (chunk: Buffer) => {
    output += chunk.toString();
    for (const waiter of waiters.filter((w) => output.includes(w.text))) {
      waiters.splice(waiters.indexOf(waiter), 1);
      waiter.resolve();
    }
  };
  child.stdout!.on('data', onData);
  child.stderr!.on('data', onData);
  const exited = once(child, 'exit');
  return {
    child,
    output: () => output,
    printed: (text) =>
      output.includes(text)
        ? Promise.resolve()
        : new Promise<void>((resolve, reject) => {
            waiters.push({ text, resolve });
            void exited.then(() =>
              reject(new Error(`${script} exited before printing "${text}":\n${output}`)),
            );
          }),
    async stop(signal = 'SIGTERM') {
      if (child.exitCode === null && child.signalCode === null) child.kill(signal);
      await exited;
    },
  };
}
