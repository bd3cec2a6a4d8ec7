/** Contracts of the Helm activities: what a release write is asked for. */

import type { ActingAs } from './acting-as';
import type { ChartContent, ValuesFrom } from './charts';

/** Where a Helm release lives, and who its run acts as. */
export interface ReleaseRef extends ActingAs {
  release: string;
  namespace: string;
}

/** A helm call that renders a chart: the chart, by content, and the values it gets. */
export interface ChartRequest extends ActingAs {
  /** The prepared chart, by content: found on (or fetched again to) the worker that runs this. */
  chart: ChartContent;
  /** Passed to helm in a 0600 temporary file, never on the command line. */
  values?: Record<string, unknown>;
  /** Read here and merged under `values`; absent when the chart has no `values_from`. */
  valuesFrom?: ValuesFrom;
}

export interface UpgradeRequest extends ReleaseRef, ChartRequest {
  version?: string;
  /** Digest of chart and values, recorded in the release so an unchanged apply can be skipped. */
  digest?: string;
  /** Seconds any one Kubernetes operation may take (`--timeout`). */
  timeoutSeconds?: number;
  /** Also wait with Helm's own watcher (`wait.native.enabled`). */
  nativeWait?: boolean;
  /** `upgrade.options.force`: replace resources instead of patching them. */
  force?: boolean;
  /** `upgrade.options.no_hooks`. */
  noHooks?: boolean;
}

export interface RollbackRequest extends ReleaseRef {
  revision: number;
  timeoutSeconds?: number;
  /**
   * Take back fields another field manager has taken over (server-side apply conflicts), as a
   * drift repair must: without it, helm refuses the rollback of an object edited by hand.
   */
  forceConflicts?: boolean;
}
