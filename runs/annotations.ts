/**
 * The annotations through which a person steers an object's runs with `kubectl annotate` or
 * armadactl, and those the API server writes beside them (deploy/admission/): the bridge reads
 * them (bridge/view.ts), armadactl writes them (cli/steer.ts).
 */

/** `kubectl annotate act/shop armada.airshipit.org/action=pause` becomes the pause signal. */
export const ACTION_ANNOTATION = 'armada.airshipit.org/action';
export const REASON_ANNOTATION = 'armada.airshipit.org/reason';
/** On an approve action: the gate it approves (`before group apps`, `step 2 (50 %)`); optional. */
export const GATE_ANNOTATION = 'armada.airshipit.org/gate';
/** On an undo action: the run to undo (a run ID; absent: the newest deploy that kept a change). */
export const RUN_ANNOTATION = 'armada.airshipit.org/run';
/** On an undo action of a Deployer: `true` goes back at once rather than through the steps. */
export const NOW_ANNOTATION = 'armada.airshipit.org/now';
/**
 * Who wrote the action: the username the API server authenticated, filled in by the
 * MutatingAdmissionPolicy armada-action-by and checked by the ValidatingAdmissionPolicy
 * armada-authenticated-annotations (deploy/admission/). Never set by a client.
 */
export const BY_ANNOTATION = 'armada.airshipit.org/by';
/** Who last changed `.spec` (CREATE, or an UPDATE of the spec), set the same way (armada-spec-author). */
export const AUTHOR_ANNOTATION = 'armada.airshipit.org/author';
/** The MutatingAdmissionPolicy that fills in BY_ANNOTATION: named when an action comes without it. */
export const ACTION_BY_POLICY = 'armada-action-by';

/** An action's annotations, removed together once it is taken (BY_ANNOTATION with them). */
export const ACTION_ANNOTATIONS = [
  ACTION_ANNOTATION,
  REASON_ANNOTATION,
  GATE_ANNOTATION,
  RUN_ANNOTATION,
  NOW_ANNOTATION,
  BY_ANNOTATION,
];

/** The reason of the Event the bridge records for each action it takes, which armadactl reads back. */
export const ACTION_EVENT_REASON = 'Action';
