import type { KindName } from '../../api/kinds';
import { ClaimIndex } from '../../bridge/claims';
import { LeftoverRetries } from '../../bridge/leftover-retries';
import type { PolicyView } from '../../api/policy-rules';
import type { BridgeContext } from '../../bridge/context';
import { SpecChanges } from '../../bridge/settle';
import { claimOf, type ObjectView } from '../../bridge/view';
import type { Harness } from './env';

/**
 * The context one reconcile reads, over a cache of `objects` of the test's choosing (a cache that
 * lags the API server, a view read before an edit), on the shared worker's Temporal client.
 * What it enqueues, follows, logs and starts goes into `lines`.
 */
export function cachedContext(
  harness: Harness,
  objects: readonly ObjectView[],
  opts: { policies?: PolicyView[]; lines: string[] },
): BridgeContext {
  const { lines } = opts;
  return {
    client: harness.client,
    taskQueue: harness.taskQueue,
    objects: ((kind: KindName) => ({
      get: (_namespace: string, name: string) => objects.find((v) => v.kind === kind && v.name === name),
      list: () => objects.filter((v) => v.kind === kind),
    })) as BridgeContext['objects'],
    claims: ClaimIndex.of(objects.map(claimOf)),
    policies: () => opts.policies ?? [],
    tenancy: { lockdown: false },
    maybeRanAlone: new Set(),
    leftoverRetries: new LeftoverRetries(),
    specChanges: new SpecChanges(),
    enqueue: (key) => lines.push(`enqueued ${key}`),
    afterRun: (workflowId) => lines.push(`following ${workflowId}`),
    startedRunning: () => false,
    log: (_level, message, fields) => lines.push(`${message} ${String(fields?.key)}`),
    metrics: { runStarted: (key) => lines.push(`started ${key}`), actionTaken: () => undefined },
  };
}

/** Runs `act` as the bridge's ServiceAccount, not the worker's this process otherwise uses. */
export async function asBridge<T>(act: () => Promise<T>): Promise<T> {
  const worker = process.env.ARMADA_KUBECONFIG;
  process.env.ARMADA_KUBECONFIG = process.env.ARMADA_TEST_BRIDGE_KUBECONFIG;
  try {
    return await act();
  } finally {
    process.env.ARMADA_KUBECONFIG = worker;
  }
}
