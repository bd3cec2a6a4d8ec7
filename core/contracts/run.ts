/** The one-workflow run's input and outcome (docs/design/one-workflow.md, decision 1). */

import type { Carried } from '../control';
import type { ManifestPlan, Resume } from '../plan/plans';
import type { ManifestOutcome } from './workflows';

/** A run of a plan of groups: its groups in order, each group's charts in the run itself. */
export interface DeployRunInput {
  plan: ManifestPlan;
  /** `uninstall` removes every release: groups in reverse order, a sequenced group's charts too. */
  mode?: 'deploy' | 'uninstall';
  /** Pause, approvals and the saga's record from the run this one continued from (a re-plan). */
  carried?: Carried;
  /** A retry (`armadactl retry`): the failed run it takes up, and what finished in it. */
  resume?: Resume;
}

/**
 * What the run did, as a manifest run's outcome (`ManifestOutcome`): the same fields, so
 * armadactl's day-two commands (undo, retry) read either. A failed run carries it in its
 * failure's details.
 */
export type DeployRunOutcome = ManifestOutcome;
