import type { Condition } from '../../kube/status';

/** A run's phase as CR status shows it: the conditions and whether the target is met. */
export function statusFor(
  phase: string,
  message: string,
): { actual_state: string; satisfied: boolean; conditions: Condition[] } {
  const done = phase === 'Deployed' || phase === 'Uninstalled';
  const failed = phase === 'Failed' || phase === 'RolledBack';
  const progressing = !done && !failed;
  const cond = (type: string, on: boolean, reason: string): Condition => ({
    type,
    status: on ? 'True' : 'False',
    reason,
    message,
  });
  return {
    actual_state: phase.toLowerCase(),
    satisfied: done,
    conditions: [
      cond('Ready', done, phase),
      cond('Progressing', progressing, phase),
      cond('Failed', failed, phase),
    ],
  };
}
