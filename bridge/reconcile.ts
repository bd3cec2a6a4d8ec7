import { CustomObjectsApi, PatchStrategy, setHeaderOptions } from '@kubernetes/client-node';
import { WorkflowExecutionAlreadyStartedError, WorkflowNotFoundError, type Client } from '@temporalio/client';
import { GROUP, VERSION } from '../api/common';
import { kinds, type KindName } from '../api/kinds';
import type { ArmadaChartSpec } from '../api/chart';
import type { ArmadaChartGroupSpec } from '../api/chart-group';
import type { ArmadaManifestSpec } from '../api/manifest';
import type { DeployerSpec } from '../api/deployer';
import { validateObject } from '../api/validate';
import { recordEvent, writeStatus } from '../kube/status';
import { kubeApi } from '../kube/client';
import { CONTROL_COMMANDS, ControlRefused, control, latestRun, type ControlCommand } from '../runs/control';
import {
  chartRun,
  deployerRun,
  groupRun,
  manifestRun,
  startRun,
  type RunMemo,
  type RunRequest,
} from '../runs/requests';
import { placeOf, routeOf, type Listings } from '../runs/targets';
import { replanSignal } from '../workflows/messages';
import {
  PlanError,
  rivalClaims,
  type ClaimDocument,
  type ManifestDocuments,
} from '../workflows/plan/manifest';
import { formatSpecs } from '../workflows/plan/specs';
import { prefixedRelease } from '../workflows/plan/names';
import type { ReconcileMetrics } from './metrics';
import { clearStandaloneLeftovers } from './standalone';
import type { ArmadaObject } from './watch';

/** Added before a run starts, removed once the uninstall path has finished. */
export const FINALIZER = 'armada.airshipit.org/finalizer';
/** `kubectl annotate act/shop armada.airshipit.org/action=pause` becomes the pause signal. */
export const ACTION_ANNOTATION = 'armada.airshipit.org/action';
export const REASON_ANNOTATION = 'armada.airshipit.org/reason';
/** On an approve action: the gate it approves (`before group apps`, `step 2 (50 %)`); optional. */
export const GATE_ANNOTATION = 'armada.airshipit.org/gate';
export const ACTIONS: readonly ControlCommand[] = CONTROL_COMMANDS;

/** The queue's key of an object: `ArmadaChart/default/shop`. */
export function objectKey(kind: KindName, namespace: string, name: string): string {
  return `${kind}/${namespace}/${name}`;
}

export function parseKey(key: string): { kind: KindName; namespace: string; name: string } {
  const [kind, namespace, name] = key.split('/');
  return { kind: kind as KindName, namespace, name };
}

export interface BridgeContext {
  client: Client;
  taskQueue: string;
  /** The watched objects of a kind, from the informer cache. */
  objects(kind: KindName): {
    get(namespace: string, name: string): ArmadaObject | undefined;
    list(namespace?: string): ArmadaObject[];
  };
  /** Queues an object's key for reconciling. */
  enqueue(key: string): void;
  /** Queues `key` again when the run `workflowId` ends (once per run). */
  afterRun(workflowId: string, key: string): void;
  log(level: 'info' | 'warn' | 'error', message: string, fields?: Record<string, unknown>): void;
  /** Told of each run started and each action signal handled (bridge/metrics.ts). */
  metrics: ReconcileMetrics;
}

/**
 * Brings one object's workflow in line with the object: the level-triggered heart of the bridge.
 * Safe to call any number of times for the same state (re-delivered events, resyncs, restarts):
 * a run is started only when no run exists for the object's current generation.
 */
export async function reconcile(ctx: BridgeContext, key: string): Promise<void> {
  const { kind, namespace, name } = parseKey(key);
  const obj = ctx.objects(kind).get(namespace, name);
  if (!obj) return;
  if (obj.metadata.deletionTimestamp) return finalize(ctx, kind, obj);
  const action = obj.metadata.annotations?.[ACTION_ANNOTATION];
  if (action !== undefined) await takeAction(ctx, kind, obj, action);

  const { problems } = validateObject(obj);
  if (problems.length) {
    return markInvalid(ctx, kind, obj, problems.map((p) => `${p.path}: ${p.message}`).join('; '));
  }
  await clearInvalid(kind, obj);
  await ensureFinalizer(kind, obj);
  const owner = ownerOf(ctx, kind, obj);
  if (owner) {
    // Charts and groups a manifest lists are deployed by it: a change to them re-plans it.
    ctx.enqueue(owner);
    return;
  }
  const target = (obj.spec as { target_state?: string }).target_state;
  if (target === 'uninitialized') return;
  if (kind === 'ArmadaManifest') {
    // Its charts give up the unprefixed releases their own runs installed before it listed them.
    const releaseOf = (chart: ArmadaObject) => chartRelease(ctx, chart);
    if (await clearStandaloneLeftovers(ctx, obj, { key, releaseOf })) return;
  }
  await ensureRun(ctx, kind, obj, target === 'uninstalled' ? 'uninstall' : 'deploy');
}

/** Whether an object is on its way out and done with (its finalizer removed). */
const gone = (obj: ArmadaObject) =>
  obj.metadata.deletionTimestamp !== undefined && !obj.metadata.finalizers?.includes(FINALIZER);

/** The key of the group or manifest that lists this chart or group (it drives it), if any. */
function ownerOf(ctx: BridgeContext, kind: KindName, obj: ArmadaObject): string | undefined {
  const { namespace, name } = obj.metadata;
  if (kind === 'ArmadaChart') {
    const group = ctx
      .objects('ArmadaChartGroup')
      .list(namespace)
      .find((g) => !gone(g) && (g.spec as ArmadaChartGroupSpec).chart_group.includes(name));
    return group && objectKey('ArmadaChartGroup', namespace, group.metadata.name);
  }
  if (kind === 'ArmadaChartGroup') {
    const manifest = ctx
      .objects('ArmadaManifest')
      .list(namespace)
      .find((m) => !gone(m) && (m.spec as ArmadaManifestSpec).chart_groups.includes(name));
    return manifest && objectKey('ArmadaManifest', namespace, manifest.metadata.name);
  }
  return undefined;
}

/**
 * The Helm release an ArmadaChart deploys: `<release_prefix>-<release>` when a manifest lists it
 * (through a group), its own `release` otherwise.
 */
export function chartRelease(
  ctx: BridgeContext,
  chart: ArmadaObject,
): { namespace: string; release: string } {
  const spec = chart.spec as ArmadaChartSpec;
  const owner = (kind: KindName, key: string | undefined) => {
    if (!key) return undefined;
    const { namespace, name } = parseKey(key);
    return ctx.objects(kind).get(namespace, name);
  };
  const group = owner('ArmadaChartGroup', ownerOf(ctx, 'ArmadaChart', chart));
  const manifest = group && owner('ArmadaManifest', ownerOf(ctx, 'ArmadaChartGroup', group));
  const prefix = (manifest?.spec as ArmadaManifestSpec | undefined)?.release_prefix;
  return { namespace: spec.namespace, release: prefixedRelease(prefix, spec.release) };
}

type Mode = RunMemo['mode'];

/** The run that drives an object (its request carries the specs it deploys in its memo). */
function runOf(ctx: BridgeContext, kind: KindName, obj: ArmadaObject, mode: Mode): RunRequest {
  const { namespace, name } = obj.metadata;
  switch (kind) {
    case 'ArmadaManifest': {
      const { docs, objects } = manifestDocuments(ctx, obj);
      return manifestRun(docs, mode, specsOf(objects));
    }
    case 'ArmadaChartGroup': {
      const spec = kinds.ArmadaChartGroup.spec.parse(obj.spec) as ArmadaChartGroupSpec;
      const charts = listedCharts(ctx, namespace, spec.chart_group);
      return groupRun(
        { namespace, name, spec, charts: specsByName<ArmadaChartSpec>('ArmadaChart', charts) },
        mode,
        specsOf([obj, ...charts]),
      );
    }
    case 'ArmadaChart': {
      const spec = kinds.ArmadaChart.spec.parse(obj.spec) as ArmadaChartSpec;
      return chartRun({ kind, name, namespace, spec }, mode, specsOf([obj]));
    }
    case 'Deployer': {
      const spec = kinds.Deployer.spec.parse(obj.spec) as DeployerSpec;
      return deployerRun({ kind, name, namespace, spec }, mode, specsOf([obj]));
    }
  }
}

/** The cached ArmadaCharts of a namespace that `names` lists. */
function listedCharts(ctx: BridgeContext, namespace: string, names: readonly string[]): ArmadaObject[] {
  const listed = new Set(names);
  return ctx
    .objects('ArmadaChart')
    .list(namespace)
    .filter((c) => listed.has(c.metadata.name));
}

/** Parsed specs by object name, as the planners take them. */
function specsByName<T>(
  kind: 'ArmadaChartGroup' | 'ArmadaChart',
  objects: ArmadaObject[],
): Record<string, T> {
  return Object.fromEntries(objects.map((o) => [o.metadata.name, kinds[kind].spec.parse(o.spec) as T]));
}

/** A manifest with the groups and charts it lists, from the cache, specs parsed. */
function manifestDocuments(
  ctx: BridgeContext,
  obj: ArmadaObject,
): { docs: ManifestDocuments; objects: ArmadaObject[] } {
  const { namespace } = obj.metadata;
  const manifestSpec = kinds.ArmadaManifest.spec.parse(obj.spec) as ArmadaManifestSpec;
  const groups = ctx
    .objects('ArmadaChartGroup')
    .list(namespace)
    .filter((g) => manifestSpec.chart_groups.includes(g.metadata.name));
  const charts = listedCharts(
    ctx,
    namespace,
    groups.flatMap((g) => (g.spec as ArmadaChartGroupSpec).chart_group),
  );
  const docs: ManifestDocuments = {
    namespace,
    manifest: { name: obj.metadata.name, spec: manifestSpec },
    groups: specsByName<ArmadaChartGroupSpec>('ArmadaChartGroup', groups),
    charts: specsByName<ArmadaChartSpec>('ArmadaChart', charts),
  };
  return { docs, objects: [obj, ...groups, ...charts] };
}

/** `ArmadaChart/web@2 ArmadaManifest/demo@1 ...`: which specs a run deploys, for its memo. */
export function specsOf(objects: readonly ArmadaObject[]): string {
  return formatSpecs(
    objects.map((o) => ({ kind: o.kind, name: o.metadata.name, generation: o.metadata.generation })),
  );
}

/**
 * Starts the object's run unless one exists for its specs (their generations). A run still
 * working on older specs of the same mode gets the new ones as a re-plan signal and starts over
 * with them at its next safe point (see README, "Changing a spec while it deploys"); a run of
 * the other mode finishes first, and the bridge starts the new run when it ends.
 */
async function ensureRun(ctx: BridgeContext, kind: KindName, obj: ArmadaObject, mode: Mode): Promise<void> {
  const key = objectKey(kind, obj.metadata.namespace, obj.metadata.name);
  let run;
  try {
    run = runOf(ctx, kind, obj, mode);
  } catch (err) {
    if (err instanceof PlanError) return markInvalid(ctx, kind, obj, err.message);
    throw err;
  }
  const rivals = rivalClaims({ ...obj.metadata, kind }, claimDocuments(ctx));
  if (rivals.length) return markInvalid(ctx, kind, obj, rivals.join('; '));
  const specs = run.memo.specs;
  const latest = await latestRun(ctx.client, run.workflowId);
  const same = latest !== null && latest.memo.specs === specs && latest.memo.mode === mode;
  if (latest?.running) {
    if (same) return;
    if (latest.memo.mode === mode && latest.memo.next !== specs) {
      // Signalled by run ID: a run that ended since it was described (e.g. it started over
      // with these very specs after an earlier signal) must not pass the re-plan to its
      // successor, which would start over once more. Then look again.
      try {
        await ctx.client.workflow
          .getHandle(run.workflowId, latest.runId)
          .signal(replanSignal, { input: run.input, memo: run.memo });
      } catch (err) {
        if (err instanceof WorkflowNotFoundError) return ensureRun(ctx, kind, obj, mode);
        throw err;
      }
      ctx.log('info', 're-plan sent', { key, workflowId: run.workflowId, specs, from: latest.memo.specs });
    }
    ctx.afterRun(run.workflowId, key);
    return;
  }
  if (same) return; // these specs have had their run
  await startObjectRun(ctx, key, run);
}

/** Every cached manifest, group and chart (all namespaces), as rivalClaims reads them. */
function claimDocuments(ctx: BridgeContext): ClaimDocument[] {
  return (['ArmadaManifest', 'ArmadaChartGroup', 'ArmadaChart'] as const).flatMap((kind) =>
    ctx
      .objects(kind)
      .list()
      .filter((o) => !gone(o))
      .map((o) => ({
        kind,
        namespace: o.metadata.namespace,
        name: o.metadata.name,
        createdAt: new Date(o.metadata.creationTimestamp ?? 0).getTime(),
        spec: (o.spec ?? {}) as ClaimDocument['spec'],
      })),
  );
}

/** Starts a run and follows it; a start that lost the race to another follows the winner. */
async function startObjectRun(ctx: BridgeContext, key: string, run: RunRequest): Promise<void> {
  try {
    await startRun(ctx.client, ctx.taskQueue, run);
  } catch (err) {
    // Another start won the race (the workflow ID is the lock): follow that run instead.
    if (!(err instanceof Error && err.cause instanceof WorkflowExecutionAlreadyStartedError)) throw err;
  }
  const { specs, mode } = run.memo;
  ctx.log('info', 'started run', { key, workflowId: run.workflowId, specs, mode });
  ctx.metrics.runStarted(key, mode);
  ctx.afterRun(run.workflowId, key);
}

/**
 * Deletion: run the uninstall path (a running deploy is cancelled first, which stops it
 * cleanly), and remove the finalizer once it has finished. Charts and groups a manifest lists
 * keep their finalizer until the manifest is gone, so its uninstall can still read them.
 */
async function finalize(ctx: BridgeContext, kind: KindName, obj: ArmadaObject): Promise<void> {
  const { namespace, name } = obj.metadata;
  const key = objectKey(kind, namespace, name);
  if (!obj.metadata.finalizers?.includes(FINALIZER)) return;
  if (ownerOf(ctx, kind, obj)) return;
  const target = (obj.spec as { target_state?: string } | undefined)?.target_state;
  let run;
  try {
    run =
      validateObject(obj).problems.length || target === 'uninitialized'
        ? undefined
        : runOf(ctx, kind, obj, 'uninstall');
  } catch (err) {
    if (!(err instanceof PlanError)) throw err;
    ctx.log('warn', 'cannot plan the uninstall; removing the finalizer', { key, error: err.message });
  }
  if (run) {
    const latest = await latestRun(ctx.client, run.workflowId);
    if (latest?.running) {
      if (latest.memo.mode !== 'uninstall') await ctx.client.workflow.getHandle(run.workflowId).cancel();
      ctx.afterRun(run.workflowId, key);
      return;
    }
    if (!(latest?.memo.mode === 'uninstall' && latest.status === 'COMPLETED')) {
      if (latest?.memo.mode === 'uninstall') {
        // Failed after its activities' own retries (minutes): say so, and run it again.
        await recordEvent({ kind, namespace, name }, obj.metadata.uid, {
          type: 'Warning',
          reason: 'UninstallFailed',
          message: `the uninstall run ${run.workflowId} ended ${latest.status.toLowerCase()}; running it again`,
        });
      }
      await startObjectRun(ctx, key, run);
      return;
    }
  }
  await patchObject(kind, obj, {
    metadata: {
      finalizers: (obj.metadata.finalizers ?? []).filter((f) => f !== FINALIZER),
      resourceVersion: obj.metadata.resourceVersion,
    },
  });
  ctx.log('info', 'finalizer removed', { key });
  // What this object listed may now be free to go.
  for (const owned of ownedKeys(kind, obj)) ctx.enqueue(owned);
}

/** The keys of what a manifest or group lists: reconciled again when it goes. */
export function ownedKeys(kind: KindName, obj: ArmadaObject): string[] {
  const { namespace } = obj.metadata;
  if (kind === 'ArmadaManifest')
    return (obj.spec as ArmadaManifestSpec).chart_groups.map((g) =>
      objectKey('ArmadaChartGroup', namespace, g),
    );
  if (kind === 'ArmadaChartGroup')
    return (obj.spec as ArmadaChartGroupSpec).chart_group.map((c) => objectKey('ArmadaChart', namespace, c));
  return [];
}

async function ensureFinalizer(kind: KindName, obj: ArmadaObject): Promise<void> {
  const finalizers = obj.metadata.finalizers ?? [];
  if (finalizers.includes(FINALIZER)) return;
  await patchObject(kind, obj, {
    metadata: { finalizers: [...finalizers, FINALIZER], resourceVersion: obj.metadata.resourceVersion },
  });
}

/**
 * `armada.airshipit.org/action`: sends the command to the run that steers the object (routeOf:
 * its canary, its own run, or the manifest or group that runs it), removes the annotation, and
 * records an Event with who asked (the field manager that wrote the annotation) and what the run
 * answered, or why it was refused (a Warning). `armada.airshipit.org/gate` names the gate an
 * approve is for.
 */
async function takeAction(
  ctx: BridgeContext,
  kind: KindName,
  obj: ArmadaObject,
  action: string,
): Promise<void> {
  const { namespace, name } = obj.metadata;
  const annotations = obj.metadata.annotations ?? {};
  const reason = annotations[REASON_ANNOTATION];
  const by = annotationWriter(obj) ?? 'unknown';
  let outcome: string;
  let type: 'Normal' | 'Warning' = 'Normal';
  if (!(ACTIONS as readonly string[]).includes(action)) {
    outcome = `unknown action "${action}"; use one of ${ACTIONS.join(', ')}`;
    type = 'Warning';
  } else {
    const command = action as ControlCommand;
    try {
      const done = await control(ctx.client, routeOf(placeInCache(ctx, kind, obj), command), command, {
        by,
        reason,
        gate: annotations[GATE_ANNOTATION],
      });
      outcome = `${done.answer} (${done.workflowId})`;
    } catch (err) {
      if (!(err instanceof ControlRefused)) throw err;
      outcome = `refused: ${err.message}`;
      type = 'Warning';
    }
  }
  await patchObject(kind, obj, {
    metadata: {
      annotations: { [ACTION_ANNOTATION]: null, [REASON_ANNOTATION]: null, [GATE_ANNOTATION]: null },
    },
  });
  await recordEvent({ kind, namespace, name }, obj.metadata.uid, {
    type,
    reason: 'Action',
    message: `${by} asked to ${action}${reason ? ` (${reason})` : ''}: ${outcome}`,
  });
  ctx.metrics.actionTaken(action, type === 'Normal');
  ctx.log(type === 'Normal' ? 'info' : 'warn', 'action', {
    key: objectKey(kind, namespace, name),
    action,
    by,
    outcome,
  });
}

/** Where an object sits among the cached manifests and groups of its namespace. */
function placeInCache(ctx: BridgeContext, kind: KindName, obj: ArmadaObject) {
  const { namespace, name } = obj.metadata;
  const listed = (k: 'ArmadaChartGroup' | 'ArmadaManifest') =>
    ctx
      .objects(k)
      .list(namespace)
      .filter((o) => !gone(o))
      .map((o) => ({ name: o.metadata.name, spec: o.spec }));
  return placeOf(kind, namespace, name, obj.spec, {
    groups: listed('ArmadaChartGroup'),
    manifests: listed('ArmadaManifest'),
  } as Listings);
}

/** The manager whose managedFields entry owns the action annotation: who asked. */
function annotationWriter(obj: ArmadaObject): string | undefined {
  const field = `f:${ACTION_ANNOTATION}`;
  const entry = (obj.metadata.managedFields ?? []).find((m) =>
    JSON.stringify(m.fieldsV1 ?? {}).includes(JSON.stringify(field)),
  );
  return entry?.manager;
}

async function markInvalid(
  ctx: BridgeContext,
  kind: KindName,
  obj: ArmadaObject,
  message: string,
): Promise<void> {
  const { namespace, name } = obj.metadata;
  const invalid = (
    obj.status as { conditions?: { type: string; status: string; message: string }[] } | undefined
  )?.conditions?.find((c) => c.type === 'Invalid');
  if (invalid?.status === 'True' && invalid.message === message) return; // said already
  ctx.log('warn', 'invalid object', { key: objectKey(kind, namespace, name), message });
  await writeStatus({
    kind,
    namespace,
    name,
    // kstatus: an invalid spec stalls the object (only a change moves it on) and it is not Ready.
    status: {
      conditions: [
        { type: 'Invalid', status: 'True', reason: 'InvalidSpec', message },
        { type: 'Stalled', status: 'True', reason: 'InvalidSpec', message },
        { type: 'Ready', status: 'False', reason: 'InvalidSpec', message },
      ],
    },
    event: { type: 'Warning', reason: 'InvalidSpec', message },
  });
}

async function clearInvalid(kind: KindName, obj: ArmadaObject): Promise<void> {
  const conditions = (obj.status as { conditions?: { type: string; status: string }[] } | undefined)
    ?.conditions;
  if (!conditions?.some((c) => c.type === 'Invalid' && c.status === 'True')) return;
  const { namespace, name } = obj.metadata;
  await writeStatus({
    kind,
    namespace,
    name,
    // Stalled came with Invalid; Ready and Reconciling follow the run this object now gets.
    status: {
      conditions: [
        { type: 'Invalid', status: 'False', reason: 'Valid', message: 'the spec is valid' },
        { type: 'Stalled', status: 'False', reason: 'Valid', message: 'the spec is valid' },
      ],
    },
    event: { type: 'Normal', reason: 'Valid', message: 'the spec is valid again' },
  });
}

/** A JSON merge patch of the object (metadata only: finalizers, annotations). */
async function patchObject(kind: KindName, obj: ArmadaObject, body: object): Promise<void> {
  await kubeApi(CustomObjectsApi).patchNamespacedCustomObject(
    {
      group: GROUP,
      version: VERSION,
      namespace: obj.metadata.namespace,
      plural: kinds[kind].plural,
      name: obj.metadata.name,
      body,
    },
    setHeaderOptions('Content-Type', PatchStrategy.MergePatch),
  );
}
