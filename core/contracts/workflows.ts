/** Each workflow's input and outcome: what runs/, the CLI and the planner hand in and read back. */

import type { ArmadaChartSpec } from '../../api/chart';
import type { Carried } from '../control';
import type { CanaryStepRecord } from '../progress';
import type { ChartDependency } from './charts';
import type { LockstepLink } from '../plan/lockstep';
import type { ReleaseChange, Change } from '../plan/changes';
import type { DeployedVersion } from './kube';
import type { ServiceAccountRef } from './acting-as';
import type { GroupPlan, ManifestPlan, Resume } from '../plan/plans';
import type { DeployerSpec } from '../../api/deployer';
import type { CanaryResume, CanaryStep, DeploymentPair } from '../plan/canary';
import type { KindName } from '../../api/kinds';
import type { DeployWindow } from '../../api/windows';
import type { CanaryAnalysis } from '../../api/analysis';
import type { RouteWeights } from '../plan/traffic';

export interface ChartRun {
  chart: string;
  release: string;
  namespace: string;
  spec: ArmadaChartSpec;
  /** `uninstall` removes the release (target_state uninstalled, or a manifest's deletion). */
  mode?: 'deploy' | 'uninstall';
  /** Namespace of the ArmadaChart custom resource (status, the canary's workflow ID); default `default`. */
  resourceNamespace?: string;
  /** Pause and approvals from the run this one continued from (a re-plan). */
  carried?: Carried;
  /** The lockstep set its canary steps with (its group's; see workflows/lockstep.ts). */
  lockstep?: LockstepLink;
  /** Its `dependencies`, resolved when the run was planned; absent when it lists none. */
  dependencies?: ChartDependency[];
}

/** A release a failed chart run had written before it failed: the saga's record of it. */
export type WrittenRelease = ReleaseChange;

export interface ChartOutcome {
  chart: string;
  release: string;
  namespace: string;
  /** What this run did to the release (`rolled-back`: a standalone chart's rollback put it back). */
  action: 'installed' | 'upgraded' | 'unchanged' | 'skipped' | 'uninstalled' | 'rolled-back';
  /** The revision before this run; null when the release did not exist. */
  before: number | null;
  revision: number | null;
  /** The ServiceAccount the run acted as (none: the worker itself). */
  actAs?: ServiceAccountRef;
  /** The writes of the runs a standalone chart's run continued from (re-plans), oldest first: undone with its own. */
  carriedChanges?: ReleaseChange[];
}

export interface GroupRun {
  group: GroupPlan;
  /** Namespace of the custom resources (the group's and its charts'), for their status. */
  namespace: string;
  mode?: ChartRun['mode'];
  /** Pause and approvals from the run this one continued from (a re-plan of a standalone group). */
  carried?: Carried;
  /** A retry (`armadactl retry`): the charts that finished in the failed run, left as they are. */
  finished?: string[];
  /**
   * Set by a manifest: the group returns its final status (`finalStatus`) rather than write it,
   * and the manifest writes it off its path, in the workflow task that starts the next group.
   * Written in line, it held the group's close, and so the next group's start, a round trip.
   */
  manifestWritesFinalStatus?: boolean;
}

export interface GroupOutcome {
  group: string;
  /** Every chart that finished, in the order it finished: the saga's record of changes. */
  outcomes: ChartOutcome[];
  /** Charts that failed; `written` when the failure came after the release was written. */
  failed: { chart: string; error: string; written?: WrittenRelease }[];
  /** A rollback signal stopped the group before all its charts ran. */
  stopped: boolean;
  /** What each of its Deployers' runs did, in the order they finished; absent when it lists none. */
  deployers?: ({ name: string } & DeployerOutcome)[];
  /** Releases a standalone group's rollback put back, newest change first. */
  rolledBack?: string[];
  /** The changes of the runs a standalone group's run continued from (re-plans), oldest first: undone with its own. */
  carriedChanges?: Change[];
  /** The group's final status, for its manifest to write (GroupRun.manifestWritesFinalStatus). */
  finalStatus?: { phase: string; message: string };
}

export interface ManifestRun {
  plan: ManifestPlan;
  /** `uninstall` removes every release, groups in reverse order. */
  mode?: 'deploy' | 'uninstall';
  /** Pause and approvals from the run this one continued from (a re-plan). */
  carried?: Carried;
  /** A retry (`armadactl retry`): the failed run it takes up, and what finished in it. */
  resume?: Resume;
}

export interface ManifestOutcome {
  manifest: string;
  state: 'deployed' | 'uninstalled' | 'rolled-back' | 'stopped';
  groups: GroupOutcome[];
  /** Releases put back by a rollback, newest change first. */
  rolledBack: string[];
  /** The changes of the runs this one continued from (re-plans), oldest first: undoing this run undoes them too. */
  carriedChanges?: Change[];
}

export interface DeployerRun {
  /** The Deployer custom resource. */
  name: string;
  namespace: string;
  spec: DeployerSpec;
  /** `uninstall` deletes every Deployment of the Deployer (the custom resource was deleted). */
  mode?: 'deploy' | 'uninstall';
  /** Pause and approvals from the run this one continued from (a re-plan, a long hold). */
  carried?: Carried;
  /** Events a run's history may reach before its canary's hold continues as new (see CanaryRun). */
  historyLimit?: number;
  /** Where the run this one continued from stood: its canary in a hold. */
  resume?: DeployerResume;
  /** The lockstep set its canary steps with (its group's; see workflows/lockstep.ts). */
  lockstep?: LockstepLink;
  /**
   * The run this one undoes (`armadactl rollback dpl/NAME --previous | --to-run`): it ends
   * RolledBack, as every undo does, not Completed: the Deployer then runs a version its spec
   * does not name.
   */
  undoes?: string;
}

/**
 * What a Deployer that continued as new keeps: the versions it found running when it began (the
 * stable side of the pair, and what it deletes once the new version serves), and its canary's
 * hold. It neither observes again (the stable side is scaled down by now) nor creates again.
 */
export interface DeployerResume {
  running: DeployedVersion[];
  canary: CanaryResume;
}

export interface DeployerOutcome {
  result: 'deployed' | 'promoted' | 'rolled-back' | 'uninstalled';
  /** The version serving at the end. */
  version: string;
  /** The version replaced (or kept, after a rollback); none on a first deploy. */
  previous?: string;
  /** A first deploy that created the Deployer's first Deployment: undoing the run removes it. */
  created?: true;
  reason?: string;
  steps: CanaryStepRecord[];
}

/** A finished run to undo (`armadactl rollback --to-run RUN_ID | --previous`): what it changed and kept. */
export interface UndoRun {
  /** The object whose run it was: a manifest, a group or a chart. */
  kind: Exclude<KindName, 'Deployer'>;
  namespace: string;
  name: string;
  /** The run undone. */
  undoes: { workflowId: string; runId: string };
  /** Its changes in the order it made them (changesToUndo): releases, and Deployers its groups rolled out. */
  changes: Change[];
  /** Who asked (armadactl records the authenticated caller). */
  by?: string;
}

export interface UndoOutcome {
  /** The run undone (its run ID). */
  undid: string;
  /** Releases put back, newest change first. */
  rolledBack: string[];
}

export interface CanaryRun {
  /** What is rolled out, as summaries name it: a release (`blog-2`) or a Deployer. */
  title: string;
  namespace: string;
  pairs: DeploymentPair[];
  steps: CanaryStep[];
  stepTimeoutSeconds?: number;
  approvalTimeoutSeconds?: number;
  onTimeout?: 'rollback' | 'promote';
  /** Its approval steps' `distinct_approvers` and `not_author` (the author is its resource's). */
  approvalRules?: { distinct_approvers?: number; not_author?: boolean };
  analysis?: CanaryAnalysis;
  /** The custom resource whose status shows the progress; none for a run applied from a file alone. */
  resource?: { kind: Extract<KindName, 'ArmadaChart' | 'Deployer'>; namespace: string; name: string };
  /** Pause and approvals from the run this one continued from. */
  carried?: Carried;
  /**
   * Events the run's history may reach before a hold continues as new (DEFAULT_HISTORY_LIMIT,
   * 10,000, when unset; the server's own suggestion counts too).
   */
  historyLimit?: number;
  /** Where the run this one continued from stood: in a step's hold (see CanaryResume). */
  resume?: CanaryResume;
  /** The ServiceAccount its scale, wait and delete calls act as; none: the worker itself. */
  actAs?: ServiceAccountRef;
  /** The HTTPRoute rule whose weights follow the steps; none: replicas alone split the traffic. */
  traffic?: RouteWeights;
  /** Hand step, approval and rollback events to the parent chart run, which has `notifications`. */
  notifyParent?: boolean;
  /** When it may start a step (its chart's or Deployer's `windows`); a step under way holds its weight. */
  windows?: DeployWindow[];
  /** The lockstep set this canary steps with (see workflows/lockstep.ts); none: it steps alone. */
  lockstep?: LockstepLink;
}

export interface CanaryOutcome {
  result: 'promoted' | 'rolled-back';
  reason?: string;
  steps: CanaryStepRecord[];
}
