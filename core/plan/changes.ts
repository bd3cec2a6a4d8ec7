/** What a run changed, as its saga records it: the releases it wrote and the Deployers it rolled out. */

import type { ServiceAccountRef } from '../contracts/acting-as';
import type { DeployerPlan } from './plans';

/**
 * The saga of a manifest run: every release the run changed is recorded with the revision it had
 * before, every Deployer it rolled out with the version it replaced, and a rollback undoes the
 * changes newest first.
 */
export interface ReleaseChange {
  chart: string;
  release: string;
  namespace: string;
  /** The revision before this run touched the release; null when this run installed it. */
  before: number | null;
  /** The ServiceAccount the run wrote it as: undoing it acts as the same one, with no more rights. */
  actAs?: ServiceAccountRef;
}

/** A Deployer a run rolled out and kept, as its group ran it (`deployer`: name, workflow ID, spec). */
export interface DeployerChange {
  deployer: DeployerPlan;
  /** The Deployer object's namespace. */
  namespace: string;
  /** The version it replaced; null when this run first deployed it (nothing of it ran before). */
  previous: string | null;
}

export type Change = ReleaseChange | DeployerChange;
