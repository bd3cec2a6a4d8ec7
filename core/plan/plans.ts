/** The plans runs follow: the groups, charts and Deployers, and what a retry takes up. */

import type { ChartDependency } from '../contracts/charts';
import type { ArmadaChartSpec } from '../../api/chart';
import type { DeployerSpec } from '../../api/deployer';
import type { ArmadaManifestSpec } from '../../api/manifest';
import type { DeployWindow } from '../../api/windows';
import type { NotifyTarget } from './notifications';

/** One chart as a run deploys it: the CR name, the Helm release it drives, and its spec. */
export interface ChartPlan {
  chart: string;
  release: string;
  namespace: string;
  workflowId: string;
  spec: ArmadaChartSpec;
  /** Its `dependencies` resolved among the documents' charts; absent when it lists none. */
  dependencies?: ChartDependency[];
}

/**
 * A Deployer a group rolls out with its charts: the CR name (in the group's namespace), its spec,
 * and the workflow ID its standalone runs take, so that the group's run of it holds the same lock.
 */
export interface DeployerPlan {
  name: string;
  workflowId: string;
  spec: DeployerSpec;
  /**
   * The run's own object (a Deployer's plan of one): an uninstall of the run removes its
   * Deployments, as a Deployer's own run does; a group's uninstall leaves its Deployers.
   */
  standalone?: true;
  /** The run an undo of the Deployer undoes (DeployerRun.undoes): its rollout ends RolledBack. */
  undoes?: string;
}

export interface GroupPlan {
  name: string;
  sequenced: boolean;
  /** Wait for an approve signal before this group starts, and what a timed-out wait does. */
  approval?: {
    timeoutSeconds?: number;
    onTimeout: 'stop' | 'rollback' | 'continue';
    /** Separation of duties (api/chart.ts approvalRules), as the manifest's `approval` sets it. */
    distinct_approvers?: number;
    not_author?: boolean;
  };
  charts: ChartPlan[];
  /** The Deployers it lists (`deployers`), in order; absent when it lists none. */
  deployers?: DeployerPlan[];
  /** Its canary charts step together (canary_lockstep of the group or its manifest); absent when not. */
  lockstep?: true;
}

/** Everything a manifest run does, in order. */
export interface ManifestPlan {
  /** The kind of the object the plan is of, when not a manifest: a plan of one (core/plan/plans-of-one.ts). */
  kind?: 'ArmadaChart' | 'ArmadaChartGroup' | 'Deployer';
  /** The name of the object the plan is of. */
  manifest: string;
  namespace: string;
  onFailure: 'stop' | 'rollback';
  targetState: ArmadaManifestSpec['target_state'];
  groups: GroupPlan[];
  /** The manifest's `notifications`, when it has them. */
  notify?: NotifyTarget;
  /** When the run may start a group (api/windows.ts); absent when the manifest sets none. */
  windows?: DeployWindow[];
}

/**
 * Where a retried run takes up a failed one: for each group the failed run started, the charts
 * that finished in it (installed, upgraded, unchanged or skipped). A retry runs none of those
 * again, passes no gate the failed run passed, and starts at the first chart that failed or
 * never ran.
 */
export interface Resume {
  /** The run retried (its run ID): shown in the retry's status and UI. */
  retryOf: string;
  /** Group name → the charts of it that finished in the failed run. */
  finished: Record<string, string[]>;
}
