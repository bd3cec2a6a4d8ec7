import { spawn, type ChildProcess } from 'node:child_process';
import { randomUUID } from 'node:crypto';
import { once } from 'node:events';

/** What a block pasted into a terminal printed, and how many of its commands failed. */
export interface Pasted {
  output: string;
  failed: number;
}

/**
 * A reader's terminal: one bash that lives across the blocks pasted into it, so an `export` or a
 * `cd` in one block holds for the next, as in a terminal. What the commands print on stdout and
 * stderr comes back interleaved, as a terminal shows it; a failed command (exit status not 0) is
 * counted through an ERR trap. The shell leads a process group of its own, which close() kills
 * with everything still running in it.
 */
export class Terminal {
  private readonly shell: ChildProcess;
  private readonly exited: Promise<unknown>;
  private printed = '';
  /** Ends each block's output (with a count, so a block that timed out never ends a later one). */
  private readonly marker = `tutorial-block-end-${randomUUID()}`;
  private pastes = 0;

  constructor(cwd: string, env: NodeJS.ProcessEnv) {
    this.shell = spawn('bash', ['--noprofile', '--norc'], {
      cwd,
      env,
      detached: true,
      stdio: ['pipe', 'pipe', 'pipe'],
    });
    this.exited = once(this.shell, 'exit');
    const keep = (chunk: Buffer) => (this.printed += chunk.toString());
    this.shell.stdout!.on('data', keep);
    this.shell.stderr!.on('data', keep);
    this.shell.stdin!.write(`exec 2>&1\ntrap 'tutorial_failed=$((tutorial_failed + 1))' ERR\n`);
  }

  /**
   * Runs `commands` as if pasted, and resolves with what they printed once they end; rejects
   * after `timeoutMs`, with what they printed so far. Their stdin is /dev/null: a command that
   * prompts (npx offering to install a package it cannot find) fails instead of eating the
   * blocks that follow. The braces keep them in this shell: `export` holds for the next block.
   */
  async paste(commands: string, timeoutMs: number): Promise<Pasted> {
    const start = this.printed.length;
    const marker = `${this.marker}-${++this.pastes}`;
    this.shell.stdin!.write(
      `tutorial_failed=0\n{\n${commands}\n} </dev/null\nprintf '\\n%s %s\\n' ${marker} "$tutorial_failed"\n`,
    );
    const end = new RegExp(`\\n${marker} (\\d+)\\n`);
    const deadline = Date.now() + timeoutMs;
    for (;;) {
      const printed = this.printed.slice(start);
      const ended = end.exec(printed);
      if (ended) return { output: printed.slice(0, ended.index), failed: Number(ended[1]) };
      if (this.shell.exitCode !== null || this.shell.signalCode !== null)
        throw new Error(`the terminal's shell exited; it printed:\n${printed}`);
      if (Date.now() > deadline)
        throw new Error(`still running after ${timeoutMs / 1000} s; it printed so far:\n${printed}`);
      await Promise.race([once(this.shell.stdout!, 'data'), this.exited, delay(deadline - Date.now())]);
    }
  }

  /** Kills the shell and whatever it still runs. */
  async close(): Promise<void> {
    if (this.shell.exitCode !== null || this.shell.signalCode !== null) return;
    killGroup(this.shell, 'SIGKILL');
    await this.exited;
  }
}

/** Signals every process of `leader`'s process group, as a terminal's Ctrl-C (SIGINT) does. */
export function killGroup(leader: ChildProcess, signal: NodeJS.Signals): void {
  try {
    process.kill(-leader.pid!, signal);
  } catch (err) {
    if ((err as NodeJS.ErrnoException).code !== 'ESRCH') throw err;
  }
}

/** Whether any process of `leader`'s process group still runs. */
export function groupRuns(leader: ChildProcess): boolean {
  try {
    process.kill(-leader.pid!, 0);
    return true;
  } catch {
    return false;
  }
}

const delay = (ms: number) => new Promise((resolve) => setTimeout(resolve, Math.max(ms, 0)).unref());
