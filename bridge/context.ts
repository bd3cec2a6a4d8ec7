/** What every part of the bridge is handed: the Temporal client, the caches, the queue. */

import type { Client } from '@temporalio/client';
import type { RunMemo } from '../runs/requests';
import type { SteeringSigner } from '../runs/steering-key';
import type { ClaimIndex } from './claims';
import type { LeftoverRetries } from './leftover-retries';
import type { SpecChanges } from './settle';
import type { ReconcileMetrics } from './metrics';
import type { PolicyView, Tenancy } from '../api/policy-rules';
import type { Views } from './view';

export interface BridgeContext {
  client: Client;
  taskQueue: string;
  /** The watched objects of a kind: their views, from the informer cache. */
  objects: Views;
  /** The release claims of the cached objects, kept current by the watches (bridge/claims.ts). */
  claims: Pick<ClaimIndex, 'rivals' | 'owner'>;
  /** The cached ArmadaPolicies (cluster-wide). */
  policies(): PolicyView[];
  tenancy: Tenancy;
  /**
   * Keys of the charts and groups that may have run on their own: every one reconcile sends down
   * the standalone path and, since what a bridge before this one did is unknown, every one cached
   * when watching starts. A manifest that lists one clears what its standalone runs left behind
   * and then forgets it (bridge/standalone.ts).
   */
  maybeRanAlone: Set<string>;
  /** The failed uninstalls of what they left behind, waiting for their retry (bridge/standalone.ts). */
  leftoverRetries: LeftoverRetries;
  /** When each object's spec last changed: a manifest's or group's run starts once they settle (bridge/settle.ts). */
  specChanges: SpecChanges;
  /** Queues an object's key for reconciling. */
  enqueue(key: string): void;
  /**
   * Queues `key` again when the run `workflowId` ends (once per run). `started`: this bridge has
   * just started that run with this memo (see startedRunning).
   */
  afterRun(workflowId: string, key: string, started?: RunMemo): void;
  /**
   * Whether this bridge started the run of `workflowId` with these very specs and mode and follows
   * it still (it has not ended): the object's later reconciles (its finalizer, its status writes)
   * then need not ask Temporal.
   */
  startedRunning(workflowId: string, memo: RunMemo): boolean;
  log(level: 'info' | 'warn' | 'error', message: string, fields?: Record<string, unknown>): void;
  /** Told of each run started and each action signal handled (bridge/metrics.ts). */
  metrics: ReconcileMetrics;
  /** Signs the steering the bridge forwards (runs/steering-key.ts); none: its runs take steering as a Temporal administrator's. */
  steering?: SteeringSigner;
}
