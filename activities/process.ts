import { Context } from '@temporalio/activity';
import { spawn } from 'node:child_process';

/**
 * How often long-running activities heartbeat. The workflows' heartbeat timeouts (5 s for a
 * wait, 10 s for helm: workflows/activity-proxies.ts) are what this interval keeps alive; the SDK
 * sends at most one heartbeat per 80 % of the timeout.
 */
export const HEARTBEAT_INTERVAL_MS = 1_000;

/** The activity being executed, or undefined when called outside one (the CLI, direct tests). */
export function currentActivity(): Context | undefined {
  try {
    return Context.current();
  } catch {
    return undefined;
  }
}

/**
 * Runs `work`, heartbeating every HEARTBEAT_INTERVAL_MS while it runs when called inside an
 * activity, with the latest details `work` gave `report` (heartbeated at once too). The beat is
 * the process's, not the work's: a slow API call or download never looks like a dead worker.
 */
export async function heartbeating<T>(work: (report: (details: unknown) => void) => Promise<T>): Promise<T> {
  const activity = currentActivity();
  let latest: unknown;
  const beat = () => activity?.heartbeat(latest);
  const heartbeat = activity && setInterval(beat, HEARTBEAT_INTERVAL_MS);
  try {
    return await work((details) => {
      latest = details;
      beat();
    });
  } finally {
    if (heartbeat) clearInterval(heartbeat);
  }
}

export interface ProcessResult {
  code: number | null;
  stdout: string;
  stderr: string;
}

/**
 * Runs a program to completion and returns its exit code and output. Inside an activity it
 * heartbeats while the program runs, and when the activity is cancelled it kills the program
 * (SIGTERM, then SIGKILL) and rejects with the cancellation, so a cancelled step never leaves a
 * helm or git process working behind the workflow's back. A program that cannot be started
 * rejects with the spawn error (e.g. ENOENT).
 */
export function runProcess(
  file: string,
  args: readonly string[],
  opts: { cwd?: string; env?: NodeJS.ProcessEnv } = {},
): Promise<ProcessResult> {
  const activity = currentActivity();
  return new Promise((resolve, reject) => {
    const child = spawn(file, args, { cwd: opts.cwd, env: opts.env, stdio: ['ignore', 'pipe', 'pipe'] });
    let stdout = '';
    let stderr = '';
    child.stdout.on('data', (chunk: Buffer) => (stdout += chunk.toString()));
    child.stderr.on('data', (chunk: Buffer) => (stderr += chunk.toString()));

    const heartbeat = activity && setInterval(() => activity.heartbeat(), HEARTBEAT_INTERVAL_MS);
    const onCancel = () => {
      child.kill('SIGTERM');
      setTimeout(() => child.kill('SIGKILL'), 5_000).unref();
    };
    activity?.cancellationSignal.addEventListener('abort', onCancel);
    const finish = () => {
      if (heartbeat) clearInterval(heartbeat);
      activity?.cancellationSignal.removeEventListener('abort', onCancel);
    };
    child.on('error', (err) => {
      finish();
      reject(err);
    });
    child.on('close', (code) => {
      finish();
      if (activity?.cancellationSignal.aborted) reject(activity.cancellationSignal.reason);
      else resolve({ code, stdout, stderr });
    });
  });
}
