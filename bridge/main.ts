import { Client, Connection } from '@temporalio/client';
import { hostname } from 'node:os';
import { GROUP, VERSION } from '../api/common';
import { kinds, type KindName } from '../api/kinds';
import { policyKind } from '../api/policy';
import { apiMessage, kubeConfig } from '../kube/client';
import { clientConnectionOptions } from '../runs/connection';
import type { RunMemo } from '../runs/requests';
import { loadDataConverter } from '../runs/codec';
import { logFormatOf, logWriter } from '../runs/log-format';
import { stopOnSignals } from '../runs/signals';
import { loadConfig } from './config';
import { LeaderElector } from './leader';
import { BridgeMetrics, serveMetrics } from './metrics';
import {
  DRIFT_RESOURCES,
  DriftTracker,
  ManagedReleases,
  driftViewOf,
  handleDrift,
  isReleaseKey,
  type DriftView,
} from './drift';
import { FreezeBroadcast } from './freeze';
import { policyViewOf, type PolicyView } from '../api/policy-rules';
import { steeringSignerFromEnv } from '../runs/steering-key';
import { KeyedQueue } from './queue';
import { reconcile } from './reconcile';
import type { BridgeContext } from './context';
import { ClaimIndex } from './claims';
import { LeftoverRetries } from './leftover-retries';
import { SpecChanges } from './settle';
import { dependentKeys, ownedKeys, sameForReconcile, viewOf, type ObjectView } from './view';
import { ObjectWatch, armadaResource } from './watch';

type Level = 'info' | 'warn' | 'error';

const write = logWriter(logFormatOf(process.env));

/** One line per log entry (ARMADA_LOG_FORMAT), with the object's key when there is one. */
function log(level: Level, message: string, fields: Record<string, unknown> = {}): void {
  write({ time: new Date(), level, component: 'bridge', message, fields });
}

/**
 * The bridge process: while it holds the leader Lease, it watches the four kinds and reconciles
 * each changed object (one at a time per object) into its workflow. Losing the Lease ends the
 * process, so a replica never acts on a stale view; SIGINT/SIGTERM releases the Lease.
 */
async function main(): Promise<void> {
  const config = loadConfig();
  const { address, namespace } = config.temporal;
  const connection = await Connection.connect(clientConnectionOptions(config.temporal)).catch(
    (err: unknown) => {
      throw new Error(
        `cannot reach Temporal at ${address} (${(err as Error).message}); start it with \`npm start\` or set TEMPORAL_ADDRESS`,
        { cause: err },
      );
    },
  );
  const client = new Client({ connection, namespace, dataConverter: loadDataConverter() });
  const kc = kubeConfig();
  /** The runs followed to their end; with the memo of those this bridge started itself. */
  const following = new Map<string, RunMemo | undefined>();

  const watches = {} as { [K in KindName]: ObjectWatch<ObjectView<K>> };
  let policyWatch: ObjectWatch<PolicyView> | undefined;
  const maybeRanAlone = new Set<string>();
  const leftoverRetries = new LeftoverRetries();
  const specChanges = new SpecChanges(config.ARMADA_SETTLE_SECONDS * 1000);
  const claims = new ClaimIndex();
  const metrics = new BridgeMetrics(() => queue);
  const drift = new DriftTracker();
  const reconcileTimed = (key: string, queuedAt: number) =>
    metrics.reconcile(key, queuedAt, () =>
      isReleaseKey(key) ? handleDrift(context, drift, key) : reconcile(context, key),
    );
  const queue: KeyedQueue = new KeyedQueue(reconcileTimed, {
    concurrency: config.ARMADA_WORKERS,
    onError: (key, err, attempt) =>
      log('error', 'reconcile failed; retrying', {
        key,
        attempt,
        error: apiMessage(err),
      }),
  });
  const freezes = new FreezeBroadcast(client, config.ARMADA_NAMESPACES, log);
  const context: BridgeContext = {
    client,
    taskQueue: config.ARMADA_TASK_QUEUE,
    objects: (kind) => watches[kind],
    claims,
    policies: () => policyWatch?.list() ?? [],
    tenancy: {
      lockdown: config.ARMADA_LOCKDOWN,
      defaultServiceAccount: config.ARMADA_DEFAULT_SERVICE_ACCOUNT,
    },
    maybeRanAlone,
    leftoverRetries,
    specChanges,
    enqueue: (key) => queue.add(key),
    afterRun(workflowId, key, started) {
      const followed = following.has(workflowId);
      if (started || !followed) following.set(workflowId, started);
      if (followed) return;
      void client.workflow
        .getHandle(workflowId)
        .result()
        .catch(() => undefined)
        .finally(() => {
          following.delete(workflowId);
          queue.add(key);
        });
    },
    startedRunning(workflowId, memo) {
      const started = following.get(workflowId);
      return started !== undefined && started.specs === memo.specs && started.mode === memo.mode;
    },
    log,
    metrics,
    steering: steeringSignerFromEnv(),
  };

  const managedReleases = new ManagedReleases(context);
  let driftWatches: ObjectWatch<DriftView>[] = [];
  let driftListed = false;
  let relistDriftOnceListed = false;
  /** Lists Helm's objects again: a release whose objects were dropped is now the bridge's. */
  const relistDrift = () => {
    if (!driftListed) {
      relistDriftOnceListed = true;
      return;
    }
    for (const watch of driftWatches) {
      watch.stop();
      // It rejects only when stopped again before the list is done: the next start lists anew.
      watch.start().catch(() => undefined);
    }
  };
  const lead = async () => {
    log('info', 'leading: watching', { namespaces: config.ARMADA_NAMESPACES });
    // Nothing is reconciled until every cache is filled: whether a chart runs on its own or
    // as part of a manifest depends on the groups and manifests listed so far.
    let listed = false;
    const kindNames = Object.keys(kinds) as KindName[];
    const watchKind = <K extends KindName>(kind: K) =>
      new ObjectWatch<ObjectView<K>>({
        kubeConfig: kc,
        resource: armadaResource(kind),
        namespaces: config.ARMADA_NAMESPACES,
        resyncSeconds: config.ARMADA_RESYNC_SECONDS,
        view: (obj) => viewOf(kind, obj),
        onChange: (view, change, previous) => {
          metrics.watchEvent(kind, change);
          const specChanged =
            change === 'add' || (change === 'update' && previous?.generation !== view.generation);
          if (change === 'delete') specChanges.forget(view.key);
          else if (specChanged) specChanges.changed(view.key);
          // The claims (and who drives what) follow the cache from the first list on.
          claims.observe(view as ObjectView, change);
          // Which releases the charts deploy follows from specs (a chart's, its owners' prefix).
          const releasesMayChange = specChanged || change === 'delete';
          if (driftWatches.length > 0 && releasesMayChange && managedReleases.refresh()) relistDrift();
          if (!listed) return;
          if (change === 'update' && previous && sameForReconcile(previous, view)) return;
          queue.add(view.key);
          if (specChanged || change === 'delete')
            for (const key of dependentKeys(context.objects, view as ObjectView)) queue.add(key);
          if (change !== 'delete') return;
          maybeRanAlone.delete(view.key);
          leftoverRetries.forgetObject(view.key);
          // What a deleted manifest or group listed may now be free to go (or run on its own).
          for (const key of ownedKeys(view)) queue.add(key);
        },
        log,
      });
    for (const kind of kindNames) Object.assign(watches, { [kind]: watchKind(kind) });
    // A policy change may make any object valid or invalid: every object is judged again.
    policyWatch = new ObjectWatch<PolicyView>({
      kubeConfig: kc,
      resource: { kind: policyKind.kind, group: GROUP, version: VERSION, plural: policyKind.plural },
      namespaces: 'all',
      resyncSeconds: config.ARMADA_RESYNC_SECONDS,
      view: policyViewOf,
      onChange: (_policy, change) => {
        if (!listed) return;
        freezes.policiesChanged(policyWatch!.list());
        if (change === 'resync') return;
        for (const kind of kindNames) for (const view of watches[kind].list()) queue.add(view.key);
      },
      log,
    });
    await Promise.all([...Object.values(watches), policyWatch].map((w) => w.start()));
    // Helm's objects, for drift: only those of releases the ArmadaCharts deploy are kept (known
    // once the charts are listed), and only updates and deletions after the first list count.
    managedReleases.refresh();
    driftWatches = DRIFT_RESOURCES.map(
      (resource) =>
        new ObjectWatch<DriftView>({
          kubeConfig: kc,
          resource,
          namespaces: config.ARMADA_DRIFT_NAMESPACES,
          resyncSeconds: config.ARMADA_RESYNC_SECONDS,
          view: driftViewOf,
          keep: (view) => managedReleases.keeps(view),
          onChange: (view, change, previous) => {
            if (!listed) return;
            const key = drift.observe(resource, view, change, previous);
            if (key) queue.add(key);
          },
          log,
        }),
    );
    await Promise.all(driftWatches.map((w) => w.start()));
    driftListed = true;
    if (relistDriftOnceListed) relistDrift();
    listed = true;
    log('info', 'watches listed', {
      driftObjectsKept: driftWatches.reduce((sum, watch) => sum + watch.list().length, 0),
    });
    freezes.policiesChanged(policyWatch.list());
    for (const kind of kindNames)
      for (const view of watches[kind].list()) {
        // What a bridge before this one ran on its own is unknown: any of them may have.
        if (kind === 'ArmadaChart' || kind === 'ArmadaChartGroup') maybeRanAlone.add(view.key);
        queue.add(view.key);
      }
  };

  const served = await serveMetrics(metrics.registry, config.ARMADA_METRICS_PORT);
  log('info', 'metrics listening', { port: served.port });
  let stopping = false;
  const elector = new LeaderElector({
    kubeConfig: kc,
    namespace: config.ARMADA_LEASE_NAMESPACE,
    name: config.ARMADA_LEASE_NAME,
    identity: `${hostname()}-${process.pid}`,
    leaseDurationSeconds: config.ARMADA_LEASE_SECONDS,
    renewIntervalSeconds: config.ARMADA_LEASE_SECONDS / 3,
    retryIntervalSeconds: Math.min(2, config.ARMADA_LEASE_SECONDS / 3),
    onStartedLeading: () => {
      metrics.setLeader(true);
      lead().catch((err: unknown) => {
        // A stop while the watches start ends them on purpose: the shutdown exits.
        if (stopping) return;
        log('error', 'cannot start watching', { error: (err as Error).message });
        process.exit(1);
      });
    },
    onStoppedLeading: () => {
      metrics.setLeader(false);
      if (stopping) return;
      log('error', 'lost the leader Lease; exiting so a fresh replica takes over');
      process.exit(1);
    },
    log,
  });
  const shutdown = async (signal: NodeJS.Signals) => {
    stopping = true;
    log('info', 'shutting down', { signal });
    for (const watch of Object.values(watches)) watch.stop();
    policyWatch?.stop();
    for (const watch of driftWatches) watch.stop();
    served.server.close();
    await queue.stop();
    await elector.stop();
    await connection.close();
    process.exit(0);
  };
  stopOnSignals(
    (signal) => void shutdown(signal),
    (signal) => log('info', 'still shutting down', { signal }),
  );
  log('info', 'waiting for the leader Lease', {
    lease: `${config.ARMADA_LEASE_NAMESPACE}/${config.ARMADA_LEASE_NAME}`,
  });
  elector.start();
}

main().catch((err: unknown) => {
  log('error', err instanceof Error ? err.message : String(err));
  process.exit(1);
});
