/** Contracts of the chart activities: what a chart is prepared from, and what runs carry of it. */

import type { ChartSource, ValuesReference } from '../../api/chart';
import type { ActingAs } from './acting-as';

/**
 * A chart another lists in `dependencies`, resolved by the planner (core/plan/dependencies.ts):
 * the ArmadaChart's name, where its chart comes from, and its own dependencies.
 */
export interface ChartDependency {
  chart: string;
  source: ChartSource;
  /** The ArmadaChart whose namespace holds `source.secret_ref`; absent when the source has none. */
  owner?: ChartObjectRef;
  dependencies?: ChartDependency[];
}

/** What `prepareChart` is asked for: where the chart comes from, and the values it will get. */
export interface PrepareChartRequest extends Pick<ActingAs, 'policy'> {
  source: ChartSource;
  values?: Record<string, unknown>;
  /** Read here and digested with the values; absent when the chart has no `values_from`. */
  valuesFrom?: ValuesFrom;
  /** The ArmadaChart whose namespace holds `source.secret_ref`; absent when the source has none. */
  owner?: ChartObjectRef;
  /** The chart's `dependencies`, resolved: built into it as subcharts (buildWithSubcharts). */
  dependencies?: ChartDependency[];
}

/**
 * A prepared chart as runs carry it: by content, never by a path on the worker that prepared it.
 * The next activity (an upgrade, canary copies) may run hours later on another worker, or on a
 * restarted one with an empty cache; it finds the chart with chartOnThisWorker.
 */
export interface PreparedChart {
  /** sha256 of the chart's content alone: the archive's bytes, or `treeDigest` of its directory. */
  contentDigest: string;
  /**
   * `keyedDigest(unkeyedReleaseDigest(contentDigest, values), digestKey())`, the values being
   * `values_from` merged under the inline ones: changes when a chart file or a value does, a
   * Secret's included; keyed, so it tells nothing about them.
   */
  digest: string;
}

/** What an activity that needs a prepared chart is given: where it comes from and what it holds. */
export interface ChartContent {
  source: ChartSource;
  /**
   * The content the run prepared; absent only in a run that prepared its chart before charts
   * were passed by content (its result named a path), whose chart is then fetched unchecked.
   */
  contentDigest?: string;
  /** The ArmadaChart whose namespace holds `source.secret_ref`; absent when the source has none. */
  owner?: ChartObjectRef;
  /** As prepared: the contentDigest is of the chart with these built in. */
  dependencies?: ChartDependency[];
}

/**
 * The ArmadaChart whose Secrets and ConfigMaps a request reads (`values_from`, `source.secret_ref`):
 * read in its own namespace, as its ServiceAccount when it has one.
 */
export interface ChartObjectRef extends ActingAs {
  /** The ArmadaChart's name, for failures. */
  chart: string;
  /** The ArmadaChart's own namespace: the only one its references are read in. */
  namespace: string;
  /** `<namespace>/<release>` of the release the chart is fetched for, for failures; set when its source has `verify`. */
  release?: string;
}

/**
 * An ArmadaChart's `values_from`, as a run carries it: the references only. What they name is
 * read by the activity that needs the values, so it never enters the run's history.
 */
export interface ValuesFrom extends ChartObjectRef {
  references: ValuesReference[];
}
