/** Contracts of the Kubernetes activities: what a wait, a canary copy, a Deployer call and a status write are asked and answer. */

import type { ChartRequest } from './helm';
import type { ArmadaChartSpec } from '../../api/chart';
import type { ActingAs } from './acting-as';

export interface Condition {
  type: string;
  status: 'True' | 'False' | 'Unknown';
  reason: string;
  message: string;
}

/** What a status write did: whether the object was on the cluster, and how long it took. */
export interface StatusWritten {
  onCluster: boolean;
  /**
   * From the first attempt's scheduling to now, on the worker's clock: the time the workflow
   * task that asked for this local activity spent on it (a canary hold shortens its timer by it).
   */
  tookMs: number;
}

export interface DeployerRef extends ActingAs {
  /** The Deployer's `deployment.name` and `deployment.namespace`. */
  name: string;
  namespace: string;
}

export interface DeployedVersion {
  /** Deployment name, `<name>-<version>`. */
  deployment: string;
  version: string;
  replicas: number;
}

/** The Deployer custom resource itself: its status keeps the record of the Deployments it created. */
export interface DeployerObject {
  namespace: string;
  name: string;
}

/** Where a release's canary goes: its name and namespace, and who its run acts as. */
export interface CanaryTarget extends ActingAs {
  release: string;
  namespace: string;
}

export interface CanaryCopiesRequest extends CanaryTarget, ChartRequest {}

export interface WaitRequest extends ActingAs {
  release: string;
  namespace: string;
  wait?: ArmadaChartSpec['wait'];
  /** What to wait for instead of the chart's `wait` (a canary's Deployments, by name). */
  targets?: WaitTarget[];
  /** How messages name what is awaited; default `release <release>`. */
  subject?: string;
  timeoutSeconds: number;
}

/** `min_ready`: a count, or a percentage such as "80%". */
export type MinReady = number | string;

export type ChartWait = NonNullable<ArmadaChartSpec['wait']>;

export type WaitResource = NonNullable<ChartWait['resources']>[number];

export type WaitResourceType = WaitResource['type'];

/** One entry of the wait: objects of a type matching a label selector, and how many must be ready. */
export interface WaitTarget {
  type: WaitResourceType;
  /** `k=v,k2=v2`; undefined selects every object of the type in the namespace. */
  labelSelector?: string;
  /** `metadata.name=web`: one named object, which must exist to count as ready. */
  fieldSelector?: string;
  minReady?: MinReady;
}
