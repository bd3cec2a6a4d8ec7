import { CANARY_STATES, NEW_GENERATION, STATES, type Reading, type StateWord } from '../../api/states';
import type { Condition } from '../contracts/kube';
import type { AnyProgress } from '../progress';

export type { Reading };

/** Every phase a run reports into status is a word of the state vocabulary (api/states.ts). */
export type RunPhase = StateWord;

/**
 * How a phase reads. A phase not in PHASES (a newer workflow's, on an older table) reads as
 * `reconciling`: the run that wrote it is alive, and a reader waiting for Ready keeps waiting
 * rather than being told the object is done.
 */
export function readingOf(phase: string): Reading {
  return Object.hasOwn(STATES, phase) ? STATES[phase as StateWord].reading : 'reconciling';
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
  const cond = conditionSaying(phase, message);
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

/**
 * The word a run's phase is shown as while the run may be paused: `Paused` while it is and the
 * phase reads reconciling (the run holds at its next safe point); an ended run's phase (Deployed,
 * Failed, ...) stands whatever its pause. The status writer (workflows/status.ts) and every
 * reader of a run's progress (shownPhase) decide it here.
 */
export function pausedPhase(phase: string, paused: boolean): string {
  return paused && readingOf(phase) === 'reconciling' ? 'Paused' : phase;
}

/**
 * A run's progress in the vocabulary, as armadactl (`status`, `list`, `get`) and the Temporal
 * UI show it: a canary's own phase as its state word (Promoted is Deployed), then Paused while
 * paused (pausedPhase).
 */
export function shownPhase(p: AnyProgress): string {
  const phase = 'kind' in p && p.kind === 'canary' ? CANARY_STATES[p.phase] : p.phase;
  return pausedPhase(phase, Boolean(p.paused));
}

/**
 * The generation no run has deployed yet, when the object has one: its spec changed
 * (metadata.generation) since the generation its status was written for (observedGeneration).
 * Such an object is not satisfied, whatever the last run said of the generation before. Null
 * when the two agree or either is unknown.
 */
export function pendingGeneration(
  generation: number | undefined,
  observedGeneration: number | undefined,
): { generation: number; observedGeneration: number } | null {
  if (generation === undefined || observedGeneration === undefined || generation <= observedGeneration)
    return null;
  return { generation, observedGeneration };
}

/** The conditions the bridge writes while a new generation waits for its run: not Ready, Reconciling. */
export function pendingGenerationStatus({
  generation,
  observedGeneration,
}: {
  generation: number;
  observedGeneration: number;
}): { satisfied: false; conditions: Condition[] } {
  const cond = conditionSaying(
    NEW_GENERATION,
    `generation ${generation} is not deployed yet (status is of generation ${observedGeneration})`,
  );
  return {
    satisfied: false,
    conditions: [cond('Ready', false), cond('Reconciling', true), cond('Progressing', true)],
  };
}

/** A condition of `type`, True or False, with one reason and message. */
const conditionSaying =
  (reason: string, message: string) =>
  (type: string, on: boolean): Condition => ({ type, status: on ? 'True' : 'False', reason, message });
