/**
 * The state vocabulary: the one set of words every kind's status, `kubectl get` (STATE), armadactl
 * (`status`, `list`, `get`) and the Temporal UI (current details, the `ArmadaPhase` search
 * attribute) say where an object stands in. A word is written CamelCase where Kubernetes wants a
 * reason (conditions, Events, armadactl's PHASE) and in lower case as `status.actual_state`.
 *
 * Each word reads, in the terms of kstatus (sigs.k8s.io/cli-utils), as:
 * - `ready`: the object reached its target state (Ready=True, `satisfied: true`);
 * - `reconciling`: a run works on it, or waits on something that moves it on without a change
 *   to its spec (an approval, a canary hold, a resume) (Reconciling=True);
 * - `stalled`: its run ended short of the target, and only a change (a new spec, an action
 *   annotation) moves it on (Stalled=True).
 */
export type Reading = 'ready' | 'reconciling' | 'stalled';

/** Every state word, what it means, and how it reads. */
export const STATES = {
  Running: { reading: 'reconciling', means: 'A manifest run deploys its groups.' },
  Deploying: { reading: 'reconciling', means: 'A group or chart run deploys its charts or its release.' },
  Uninstalling: { reading: 'reconciling', means: 'A manifest, group or chart run uninstalls.' },
  WaitingApproval: {
    reading: 'reconciling',
    means:
      'A manifest waits for an approval before its next group: a signal, not a spec change, moves it on.',
  },
  Progressing: {
    reading: 'reconciling',
    means: 'A canary (a chart’s or a Deployer’s) between steps, holding or waiting for an approval.',
  },
  Paused: {
    reading: 'reconciling',
    means: 'An operator paused the run (status.paused says who, why and since when); resume moves it on.',
  },
  RollingBack: { reading: 'reconciling', means: 'A run undoes its changes; it ends as RolledBack.' },
  Deployed: {
    reading: 'ready',
    means: 'The object is deployed as its spec says: every release, or a Deployer’s version at 100 %.',
  },
  Uninstalled: { reading: 'ready', means: 'The object’s releases or Deployments are gone, as asked.' },
  Failed: { reading: 'stalled', means: 'The run failed; status.reason says why.' },
  RolledBack: {
    reading: 'stalled',
    means: 'The run was rolled back (a failure, a rollback asked for, an analysis or approval timeout).',
  },
  Stopped: {
    reading: 'stalled',
    means: 'A group a rollback or a cancellation stopped before all its charts ran.',
  },
} as const satisfies Record<string, { reading: Reading; means: string }>;

export type StateWord = keyof typeof STATES;

/**
 * A canary's own phases (its `progress` query, `status.progress` of a chart) in the vocabulary:
 * a promoted canary's new version serves 100 %, which is Deployed.
 */
export const CANARY_STATES = {
  Progressing: 'Progressing',
  Promoting: 'Progressing',
  Promoted: 'Deployed',
  RollingBack: 'RollingBack',
  RolledBack: 'RolledBack',
} as const satisfies Record<string, StateWord>;

export type CanaryPhase = keyof typeof CANARY_STATES;

/**
 * The Deployer operator's `status.phase` for a state word. Kept for scripts written for that
 * operator; `status.actual_state` and the STATE column say the same in the vocabulary above.
 */
export function deployerOperatorPhase(
  state: StateWord,
): 'Progressing' | 'Completed' | 'RolledBack' | 'Failed' {
  if (state === 'Deployed') return 'Completed';
  if (state === 'RolledBack' || state === 'Failed') return state;
  return 'Progressing';
}

/** The reason the bridge writes while a new generation waits for its run (Ready=False, `satisfied: false`). */
export const NEW_GENERATION = 'NewGeneration';

/** `deployed, deploying, ...`: the words as `status.actual_state` holds them, for the CRD's descriptions. */
export const ACTUAL_STATES = Object.keys(STATES).map((word) => word.toLowerCase());
