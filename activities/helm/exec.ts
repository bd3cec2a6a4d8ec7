import { spawn } from 'node:child_process';
import { Context } from '@temporalio/activity';
import { ApplicationFailure } from '@temporalio/common';
import { toolPath } from '../tools';
import { helmFailure, NonRetryable } from './errors';

/** How much of helm's output a failure carries: enough to read the error, bounded for history size. */
const FAILURE_TAIL_LINES = 20;
const HEARTBEAT_INTERVAL_MS = 5_000;

export interface HelmResult {
  stdout: string;
  stderr: string;
}

function tail(text: string): string {
  return text.trimEnd().split('\n').slice(-FAILURE_TAIL_LINES).join('\n');
}

/**
 * Runs the real `helm` CLI. Inside an activity it heartbeats while helm runs and kills helm when
 * the activity is cancelled (SIGTERM, then SIGKILL), so a cancelled deploy never leaves a helm
 * process working behind the workflow's back.
 */
export function runHelm(args: readonly string[]): Promise<HelmResult> {
  const activity = currentActivity();
  return new Promise((resolve, reject) => {
    const child = spawn(toolPath('helm'), args, { stdio: ['ignore', 'pipe', 'pipe'] });
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
      reject(
        ApplicationFailure.nonRetryable(
          `cannot run helm (${toolPath('helm')}): ${err.message}; run \`npm run tools\` or set ARMADA_HELM`,
          NonRetryable.HelmNotFound,
        ),
      );
    });
    child.on('close', (code) => {
      finish();
      if (code === 0) resolve({ stdout, stderr });
      else reject(helmFailure(args, code, tail(stderr || stdout)));
    });
  });
}

function currentActivity(): Context | undefined {
  try {
    return Context.current();
  } catch {
    return undefined; // called outside an activity (CLI, tests of the wrapper itself)
  }
}
