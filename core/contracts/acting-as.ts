/** Who an activity request acts as, and what its run asks of the ArmadaPolicies. */

import type { PolicySubject } from '../../api/policy-rules';

/** A ServiceAccount a run acts as: an object's `service_account_name`, in the object's namespace. */
export interface ServiceAccountRef {
  namespace: string;
  name: string;
}

/** The object a run acts for and what it asks of the ArmadaPolicies, with the release it drives. */
export type RunPolicy = PolicySubject & { release?: string };

/** What an activity request carries to act as its object's ServiceAccount (see kubeApi). */
export interface ActingAs {
  /** The object's ServiceAccount; unset: the worker itself. */
  actAs?: ServiceAccountRef;
  /**
   * What the run's object asks of the ArmadaPolicies, which the worker checks before the
   * activity runs (activities/policy.ts); set on a run's first requests (a chart's release, a
   * Deployer's, a drift's), so the run is refused before it does anything.
   */
  policy?: RunPolicy;
}
