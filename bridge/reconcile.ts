import { CustomObjectsApi, PatchStrategy, setHeaderOptions } from '@kubernetes/client-node';
import { WorkflowNotFoundError } from '@temporalio/client';
import { GROUP, VERSION } from '../api/common';
import { kinds } from '../api/kinds';
import { recordEvent, writeStatus } from '../kube/status';
import { isStatus, kubeApi } from '../kube/client';
import { ControlRefused, cancelRun, control, type ControlCommand } from '../runs/control';
import { latestRunOf } from './legacy-chart-run';
import { RunInProgress, startRun, type RunRequest } from '../runs/requests';
import { placeOf, routeOf } from '../runs/targets';
import { replanSignal } from '../workflows/messages';
import { PlanError } from '../core/plan/manifest';
import { pendingGenerationStatus } from '../core/plan/status';
import { decideRun, type RunFacts } from '../core/bridge/decide-run';
import { decideUninstall } from '../core/bridge/decide-uninstall';
import { policyRefusal, type PolicyBounded } from '../core/bridge/policy-refusal';
import { DOC_PAGES, pointingTo } from '../core/doc-pages';
import { clearStandaloneLeftovers, noteStandalone } from './standalone';
import { startObjectRun } from './start';
import { retryRequest, RunRefused, undoRequest } from '../runs/day-two';
import type { ArmadaObject } from './watch';
import { ACTION_ANNOTATION, ACTION_BY_POLICY, ACTION_EVENT_REASON, BY_ANNOTATION } from '../runs/annotations';
import {
  FINALIZER,
  describeProblems,
  drives,
  gone,
  ownedKeys,
  ownerKindOf,
  ownerOf,
  parseKey,
  validSpec,
  viewOf,
  type ActionRequest,
  type ObjectView,
} from './view';
import { ACTIONS } from './actions';
import { listedOf, manifestListed, manifestServiceAccount, runOf, type Mode } from './run-of';
import type { BridgeContext } from './context';

/** Who the bridge is in a run's history when it cancels the run of an object being deleted. */
const BRIDGE_IDENTITY = 'armada-bridge';

/**
 * Brings one object's workflow in line with the object: the level-triggered heart of the bridge.
 * Safe to call any number of times for the same state (re-delivered events, resyncs, restarts):
 * a run is started only when no run exists for the object's current generation.
 */
export async function reconcile(ctx: BridgeContext, key: string): Promise<void> {
  const { kind, namespace, name } = parseKey(key);
  const view = ctx.objects(kind).get(namespace, name);
  if (!view) return;
  if (view.deleting) {
    // Nothing steers an object's runs once it goes: its uninstall runs instead.
    if (view.action)
      await takeAction(ctx, view, view.action, `${kind} ${namespace}/${name} is being deleted`);
    return finalize(ctx, view);
  }
  if (view.action) await takeAction(ctx, view, view.action);

  if (!view.parsed.valid)
    return markInvalid(ctx, view, pointingTo(describeProblems(view.parsed.problems), DOC_PAGES.resources));
  const refused = policyRefusalOf(ctx, view);
  if (refused) return markInvalid(ctx, view, pointingTo(refused, DOC_PAGES.multiTenancy));
  await ensureFinalizer(view);
  const owner = ownerOf(ctx, view);
  if (owner) {
    // Its own spec is valid; what lists it judges the rest and deploys it: a change to it
    // re-plans that run.
    await clearInvalid(view);
    await markGenerationPending(view);
    ctx.enqueue(owner.key);
    return;
  }
  if (view.targetState === 'uninitialized') return clearInvalid(view);
  // Built into the charts that list it, and never deployed on its own.
  if (view.kind === 'ArmadaChart' && validSpec(view).dependency_only) return clearInvalid(view);
  // Valid only once what it lists and the releases it claims are checked too: clearing the
  // Invalid condition before that flipped it back and forth on every reconcile.
  const planned = plan(ctx, view, view.targetState === 'uninstalled' ? 'uninstall' : 'deploy');
  if ('problem' in planned) {
    // Judged alone only when nothing on the API server lists it: groups that reach the cache
    // before their manifest are each other's rivals for a chart until the manifest arrives, and
    // were marked Invalid, then Valid (the hostile-input drill, a fresh-clone suite).
    if (await ownerNotCachedYet(view)) return;
    return markInvalid(ctx, view, planned.problem);
  }
  await clearInvalid(view);
  await markGenerationPending(view);
  if (view.kind === 'ArmadaManifest') {
    // Its charts give up the unprefixed releases their own runs installed before it listed them.
    if (await clearStandaloneLeftovers(ctx, view)) return;
    return ensureRun(ctx, view, planned.run);
  }
  try {
    await ensureRun(ctx, view, planned.run);
  } finally {
    // Noted once its run has started: a manifest that looks from then on finds that run.
    noteStandalone(ctx, view);
  }
}

/** The run an object gets, or why it can have none: a listed object missing, a rival's release. */
function plan(ctx: BridgeContext, view: ObjectView, mode: Mode): { run: RunRequest } | { problem: string } {
  let run;
  try {
    run = runOf(ctx, view, mode);
  } catch (err) {
    if (err instanceof PlanError) return { problem: pointingTo(err.message, DOC_PAGES.resources) };
    throw err;
  }
  // A listed chart or Deployer the policies refuse is Invalid itself, and stops what lists it.
  const refusals = listedRunsOf(ctx, view).flatMap((listed) => {
    const refused = policyRefusalOf(ctx, listed);
    return refused ? [`${listed.kind} ${listed.namespace}/${listed.name}: ${refused}`] : [];
  });
  if (refusals.length) return { problem: pointingTo(refusals.join('; '), DOC_PAGES.multiTenancy) };
  const rivals = ctx.claims.rivals(view);
  return rivals.length ? { problem: pointingTo(rivals.join('; '), DOC_PAGES.resources) } : { run };
}

/** The charts and Deployers a manifest (through its groups) or a group lists; none for the others. */
function listedRunsOf(ctx: BridgeContext, view: ObjectView): ObjectView<'ArmadaChart' | 'Deployer'>[] {
  if (view.kind === 'ArmadaChartGroup')
    return [
      ...listedOf(ctx, 'ArmadaChart', view.namespace, view.lists),
      ...listedOf(ctx, 'Deployer', view.namespace, view.deployers),
    ];
  if (view.kind !== 'ArmadaManifest') return [];
  const { charts, deployers } = manifestListed(ctx, view.namespace, view.lists);
  return [...charts, ...deployers];
}

/** Why the ArmadaPolicies refuse a valid chart or Deployer (core/bridge/policy-refusal.ts); undefined for the others. */
function policyRefusalOf(ctx: BridgeContext, view: ObjectView): string | undefined {
  const { namespace, name } = view;
  let bounded: PolicyBounded;
  if (view.kind === 'ArmadaChart' && view.parsed.valid)
    bounded = { kind: view.kind, namespace, name, spec: view.parsed.spec };
  else if (view.kind === 'Deployer' && view.parsed.valid)
    bounded = { kind: view.kind, namespace, name, spec: view.parsed.spec };
  else return undefined;
  return policyRefusal(bounded, manifestServiceAccount(ctx, view), ctx.policies(), ctx.tenancy);
}

/**
 * Brings the object's run in line with its specs: gathers what decideRun (core/bridge/decide-run.ts)
 * decides by, and does what it decides.
 */
async function ensureRun(ctx: BridgeContext, view: ObjectView, run: RunRequest): Promise<void> {
  const { key } = view;
  const { workflowId, memo } = run;
  let latest: RunFacts['latest'] = 'followed';
  if (!ctx.startedRunning(workflowId, memo)) {
    const found = await latestRunOf(ctx.client, view, workflowId);
    // An older build's run of a standalone chart in flight (legacy-chart-run.ts): it holds the release.
    if (found.workflowId !== workflowId && found.latest?.running) return ctx.afterRun(found.workflowId, key);
    latest = found.latest;
  }
  const settlesAt = ctx.specChanges.settlesAt(ctx.objects, view);
  const decision = decideRun({
    object: view,
    planned: memo,
    plannedType: run.workflowType,
    latest,
    settlesAt,
  });
  switch (decision.do) {
    case 'leave':
      return;
    case 'replan':
      // Signalled by run ID: a run that ended since it was described (e.g. it started over
      // with these very specs after an earlier signal) must not pass the re-plan to its
      // successor, which would start over once more. Then look again.
      try {
        await ctx.client.workflow
          .getHandle(workflowId, decision.runId)
          .signal(replanSignal, { input: run.input, memo });
      } catch (err) {
        if (err instanceof WorkflowNotFoundError) return ensureRun(ctx, view, run);
        throw err;
      }
      ctx.log('info', 're-plan sent', { key, workflowId, specs: memo.specs, from: decision.from });
      return ctx.afterRun(workflowId, key);
    case 'follow':
      return ctx.afterRun(workflowId, key);
    case 'wait':
      return ctx.specChanges.wake(key, decision.until, () => ctx.enqueue(key));
    case 'start':
      // Asked only now: a list call to the API server.
      if (await ownerNotCachedYet(view)) {
        ctx.log('info', 'not started: the API server has an object listing it that the cache lacks yet', {
          key,
        });
        return;
      }
      return startObjectRun(ctx, key, run);
  }
}

/**
 * Whether the API server holds a manifest listing this group (a group listing this chart) that
 * the cache does not have yet. Each kind has its own watch, so a group created after the manifest
 * that lists it can still reach the cache first (behind a few large manifests, say); run on its
 * own, it would deploy the unprefixed releases the manifest is about to deploy prefixed. Asked
 * only before a chart or group starts a run of its own or is marked Invalid alone, which is rare;
 * when the owner reaches the cache, it drives the object and the object's next reconcile defers
 * to it.
 */
async function ownerNotCachedYet(view: ObjectView): Promise<boolean> {
  const ownerKind = ownerKindOf(view.kind);
  if (!ownerKind) return false;
  const { items } = (await kubeApi(CustomObjectsApi).listNamespacedCustomObject({
    group: GROUP,
    version: VERSION,
    namespace: view.namespace,
    plural: kinds[ownerKind].plural,
  })) as { items: ArmadaObject[] };
  return items.some((owner) => drives(viewOf(ownerKind, owner), view));
}

/**
 * Deletion: run the uninstall path (a running deploy is cancelled first, which stops it
 * cleanly), and remove the finalizer once it has finished. Charts and groups a manifest lists
 * keep their finalizer until the manifest is gone, so its uninstall can still read them.
 */
async function finalize(ctx: BridgeContext, view: ObjectView): Promise<void> {
  const { kind, namespace, name, key } = view;
  if (!view.finalizers.includes(FINALIZER)) return;
  if (ownerOf(ctx, view)) return;
  let run;
  try {
    run =
      !view.parsed.valid || view.targetState === 'uninitialized' ? undefined : runOf(ctx, view, 'uninstall');
  } catch (err) {
    if (!(err instanceof PlanError)) throw err;
    ctx.log('warn', 'cannot plan the uninstall; removing the finalizer', { key, error: err.message });
  }
  if (run) {
    // The ID of the run that holds the object's releases (an older build's: legacy-chart-run.ts).
    const { workflowId: holder, latest } = await latestRunOf(ctx.client, view, run.workflowId);
    const decision = decideUninstall(latest);
    switch (decision.do) {
      case 'cancel':
        await cancelRun(ctx.client, holder, {
          by: BRIDGE_IDENTITY,
          reason: `${kind} ${namespace}/${name} is being deleted`,
        });
        ctx.afterRun(holder, key);
        return;
      case 'follow':
        ctx.afterRun(holder, key);
        return;
      case 'start':
        if (decision.failed)
          await recordEvent({ kind, namespace, name }, view.uid, {
            type: 'Warning',
            reason: 'UninstallFailed',
            message: `the uninstall run ${run.workflowId} ended ${decision.failed.toLowerCase()}; running it again`,
          });
        return startObjectRun(ctx, key, run);
      case 'done':
        break; // the finalizer goes
    }
  }
  await patchObject(view, {
    metadata: {
      finalizers: view.finalizers.filter((f) => f !== FINALIZER),
      resourceVersion: view.resourceVersion,
    },
  });
  ctx.log('info', 'finalizer removed', { key });
  // What this object listed may now be free to go.
  for (const owned of ownedKeys(view)) ctx.enqueue(owned);
}

async function ensureFinalizer(view: ObjectView): Promise<void> {
  if (view.finalizers.includes(FINALIZER)) return;
  await patchObject(view, {
    metadata: { finalizers: [...view.finalizers, FINALIZER], resourceVersion: view.resourceVersion },
  });
}

/**
 * `armada.airshipit.org/action`: sends the command to the run that steers the object (routeOf:
 * its canary, its own run, or the manifest or group that runs it), removes the annotation, and
 * records an Event with who asked (BY_ANNOTATION, the user the API server authenticated) and what the run
 * answered, or why it was refused (a Warning; `refusal` refuses it at once). `armada.airshipit.org/gate`
 * names the gate an approve is for.
 */
async function takeAction(
  ctx: BridgeContext,
  view: ObjectView,
  action: ActionRequest,
  refusal?: string,
): Promise<void> {
  const { kind, namespace, name } = view;
  const { command, reason, gate } = action;
  // Only the API server's word on who wrote it counts: without it no one is known to have asked.
  const by = action.by ?? `someone (no ${BY_ANNOTATION})`;
  let outcome: string;
  let type: 'Normal' | 'Warning' = 'Normal';
  if (refusal !== undefined) {
    outcome = `refused: ${refusal}`;
    type = 'Warning';
  } else if (action.by === undefined) {
    outcome = `refused: the API server wrote no ${BY_ANNOTATION}, so who asked is unknown: the admission policies of deploy/admission/ (${ACTION_BY_POLICY}) are not installed on this cluster`;
    type = 'Warning';
  } else if (!ACTIONS.includes(command)) {
    outcome = `unknown action "${command}"; use one of ${ACTIONS.join(', ')}`;
    type = 'Warning';
  } else if (command === 'undo' || command === 'retry') {
    const place = placeInCache(ctx, view);
    const target = `${kinds[kind].shortNames[0]}/${name}`;
    try {
      const req =
        command === 'undo'
          ? await undoRequest(ctx.client, place, { runId: action.run, now: action.now, by, target })
          : await retryRequest(ctx.client, place, target);
      outcome = `started ${req.options.staticSummary} (workflow ${await startRun(ctx.client, ctx.taskQueue, req)})`;
    } catch (err) {
      if (!(err instanceof RunRefused || err instanceof RunInProgress)) throw err;
      outcome = `refused: ${err.message}`;
      type = 'Warning';
    }
  } else {
    const verb = command as ControlCommand;
    try {
      const done = await control(
        ctx.client,
        routeOf(placeInCache(ctx, view), verb),
        verb,
        { by, reason, gate },
        ctx.steering,
      );
      outcome = `${done.answer} (${done.workflowId})`;
    } catch (err) {
      if (!(err instanceof ControlRefused)) throw err;
      outcome = `refused: ${err.message}`;
      type = 'Warning';
    }
  }
  await clearAction(ctx, view, action);
  await recordEvent({ kind, namespace, name }, view.uid, {
    type,
    reason: ACTION_EVENT_REASON,
    message: `${by} asked to ${command}${reason ? ` (${reason})` : ''}: ${outcome}`,
  });
  ctx.metrics.actionTaken(command, type === 'Normal');
  ctx.log(type === 'Normal' ? 'info' : 'warn', 'action', { key: view.key, action: command, by, outcome });
}

/** Where an object sits among the cached manifests and groups of its namespace. */
function placeInCache(ctx: BridgeContext, view: ObjectView) {
  const { kind, namespace, name } = view;
  const live = <K extends 'ArmadaChartGroup' | 'ArmadaManifest'>(k: K) =>
    ctx
      .objects(k)
      .list(namespace)
      .filter((o) => !gone(o));
  // A chart's spec as placeOf reads it: its release, and whether it has canary steps at all.
  const chart = { ...view.release, canary: view.canary ? {} : undefined };
  return placeOf(kind, namespace, name, chart, {
    groups: live('ArmadaChartGroup').map((g) => ({ name: g.name, spec: { chart_group: g.lists } })),
    manifests: live('ArmadaManifest').map((m) => ({
      name: m.name,
      spec: { chart_groups: m.lists, release_prefix: m.releasePrefix },
    })),
  });
}

async function markInvalid(ctx: BridgeContext, view: ObjectView, message: string): Promise<void> {
  const { kind, namespace, name } = view;
  if (view.statedInvalid === message) return; // said already
  ctx.log('warn', 'invalid object', { key: view.key, message });
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

async function clearInvalid(view: ObjectView): Promise<void> {
  if (view.statedInvalid === undefined) return;
  const { kind, namespace, name } = view;
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

/**
 * Says that the object's new generation is not deployed yet, when its status still says
 * `satisfied: true` of the one before (SATISFIED false, Ready False, Reconciling True, reason
 * NewGeneration), until its run writes the new generation's status. observedGeneration stays
 * the deployed one.
 */
async function markGenerationPending(view: ObjectView): Promise<void> {
  const pending = view.satisfiedBefore;
  if (!pending) return;
  const { kind, namespace, name } = view;
  await writeStatus({
    kind,
    namespace,
    name,
    observedGeneration: pending.observedGeneration,
    status: pendingGenerationStatus(pending),
  });
}

/**
 * Removes a taken action's annotations, only while the object still asks for that action: a JSON
 * patch that tests the annotation first. Another action written since (approve, then at once
 * promote) fails the test and stays, for the reconcile its watch event brings.
 */
async function clearAction(ctx: BridgeContext, view: ObjectView, action: ActionRequest): Promise<void> {
  const pointer = (annotation: string) =>
    `/metadata/annotations/${annotation.replaceAll('~', '~0').replaceAll('/', '~1')}`;
  try {
    await patchObject(
      view,
      [
        { op: 'test', path: pointer(ACTION_ANNOTATION), value: action.command },
        ...action.written.map((annotation) => ({ op: 'remove', path: pointer(annotation) })),
      ],
      PatchStrategy.JsonPatch,
    );
  } catch (err) {
    if (!isStatus(err, 422)) throw err;
    ctx.log('info', 'another action was written meanwhile; it is taken next', {
      key: view.key,
      taken: action.command,
    });
  }
}

/** A patch of the object (metadata only: finalizers, annotations); a JSON merge patch unless told. */
async function patchObject(
  view: ObjectView,
  body: object,
  strategy: PatchStrategy = PatchStrategy.MergePatch,
): Promise<void> {
  await kubeApi(CustomObjectsApi).patchNamespacedCustomObject(
    {
      group: GROUP,
      version: VERSION,
      namespace: view.namespace,
      plural: kinds[view.kind].plural,
      name: view.name,
      body,
    },
    setHeaderOptions('Content-Type', strategy),
  );
}
