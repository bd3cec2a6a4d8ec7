import { ApplicationFailure } from '@temporalio/common';
import { runProcess } from '../process';
import { toolPath } from '../tools';
import { helmActingAs, kubeconfigEnv } from '../../kube/client';
import type { ServiceAccountRef } from '../../core/contracts/acting-as';
import { NonRetryable } from '../../core/failures';
import { helmFailure } from './errors';

/** How much of helm's output a failure carries: enough to read the error, bounded for history size. */
const FAILURE_TAIL_LINES = 20;

export interface HelmResult {
  stdout: string;
  stderr: string;
}

function tail(text: string): string {
  return text.trimEnd().split('\n').slice(-FAILURE_TAIL_LINES).join('\n');
}

/**
 * Runs the real `helm` CLI (heartbeating, killed on cancellation: see runProcess) against the
 * product's cluster (`ARMADA_KUBECONFIG`: see kubeconfigEnv), as `actAs` when given, with `env`
 * added to this one process's environment. A non-zero exit becomes a classified
 * ApplicationFailure carrying helm's last lines.
 */
export async function runHelm(
  args: readonly string[],
  actAs?: ServiceAccountRef,
  env?: Record<string, string>,
): Promise<HelmResult> {
  let result;
  try {
    result = await runProcess(toolPath('helm'), [...args, ...helmActingAs(actAs)], {
      env: { ...kubeconfigEnv(), ...env },
    });
  } catch (err) {
    if ((err as NodeJS.ErrnoException).code === undefined) throw err; // the activity's cancellation
    throw ApplicationFailure.nonRetryable(
      `cannot run helm (${toolPath('helm')}): ${(err as Error).message}; run \`npm run tools\` or set ARMADA_HELM`,
      NonRetryable.HelmNotFound,
    );
  }
  // Both streams: some commands give the reason on stdout and only a summary on stderr
  // (`helm repo update`: the repository's 401 above "failed to update the following repositories").
  const output = [result.stdout, result.stderr].filter((text) => text.trim()).join('\n');
  if (result.code !== 0) throw helmFailure(args, result.code, tail(output));
  return { stdout: result.stdout, stderr: result.stderr };
}
