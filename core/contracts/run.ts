/** The one-workflow run's input and outcome (docs/design/one-workflow.md, decision 1). */

import type { Carried } from '../control';
import type { ManifestPlan } from '../plan/plans';
import type { GroupOutcome } from './workflows';

/** A run of a plan of groups: its groups in order, each group's charts in the run itself. */
export interface DeployRunInput {
  plan: ManifestPlan;
  /** Pause and approvals from the run this one continued from. */
  carried?: Carried;
}

export interface DeployRunOutcome {
  /** The object the plan is of (the manifest's name). */
  manifest: string;
  /** `stopped`: a pause ended in a rollback, a cancellation or a re-plan before every group ran. */
  state: 'deployed' | 'stopped';
  /** What each group that ran did, in order. */
  groups: GroupOutcome[];
}
