import type { Condition } from '../contracts/kube';

/**
 * What a run's phase says about its object, in the terms of kstatus (sigs.k8s.io/cli-utils):
 * - `ready`: the object reached its target state (Ready=True);
 * - `reconciling`: a run works on it, or waits on something that moves it on without a change
 *   to its spec (an approval, a canary hold) (Reconciling=True);
 * - `stalled`: its run ended short of the target, and only a change (a new spec, an action
 *   annotation) moves it on (Stalled=True).
 */
export type Reading = 'ready' | 'reconciling' | 'stalled';

/**
 * Every phase a run reports into status (`report` in workflows/status.ts, called by the
 * manifest, group, chart, canary and Deployer workflows), and how it reads.
 */
export const PHASES = {
  /** A manifest run deploys its groups. */
  Running: 'reconciling',
  /** A group or chart run deploys its charts or its release. */
  Deploying: 'reconciling',
  /** A manifest, group or chart run uninstalls. */
  Uninstalling: 'reconciling',
  /** A manifest waits for an approval before its next group: a signal, not a spec change, moves it on. */
  WaitingApproval: 'reconciling',
  /** A canary between steps, holding or waiting for an approval (paused ones too). */
  Progressing: 'reconciling',
  /** A manifest run undoes its releases; it ends as RolledBack (Stalled). */
  RollingBack: 'reconciling',
  Deployed: 'ready',
  Uninstalled: 'ready',
  Failed: 'stalled',
  RolledBack: 'stalled',
  /** A group that a rollback or a cancellation stopped before all its charts ran. */
  Stopped: 'stalled',
} as const satisfies Record<string, Reading>;

export type RunPhase = keyof typeof PHASES;

/**
 * How a phase reads. A phase not in PHASES (a newer workflow's, on an older table) reads as
 * `reconciling`: the run that wrote it is alive, and a reader waiting for Ready keeps waiting
 * rather than being told the object is done.
 */
export function readingOf(phase: string): Reading {
  return Object.hasOwn(PHASES, phase) ? PHASES[phase as RunPhase] : 'reconciling';
}

/**
 * A run's phase as CR status shows it: `actual_state`, whether the target is met, and the
 * conditions, each with the phase as its reason and the run's message:
 * - kstatus: `Ready` (normal-true), `Reconciling` and `Stalled` (abnormal-true), so `kubectl
 *   wait --for=condition=Ready`, Argo CD, Flux `dependsOn` and `helm --wait` gate on our objects;
 * - `Progressing` (= Reconciling) and `Failed` (= Stalled): the conditions status showed before
 *   kstatus, kept because the README documented them and users script on them; they cost one
 *   entry each and kstatus ignores them. (A Stopped group once read Progressing; it reads Failed,
 *   like Stalled, now.)
 */
export function statusFor(
  phase: string,
  message: string,
): { actual_state: string; satisfied: boolean; conditions: Condition[] } {
  const reading = readingOf(phase);
  const cond = (type: string, on: boolean): Condition => ({
    type,
    status: on ? 'True' : 'False',
    reason: phase,
    message,
  });
  return {
    actual_state: phase.toLowerCase(),
    satisfied: reading === 'ready',
    conditions: [
      cond('Ready', reading === 'ready'),
      cond('Reconciling', reading === 'reconciling'),
      cond('Stalled', reading === 'stalled'),
      cond('Progressing', reading === 'reconciling'),
      cond('Failed', reading === 'stalled'),
    ],
  };
}
