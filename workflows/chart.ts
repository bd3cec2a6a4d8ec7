import {
  ApplicationFailure,
  log,
  ParentClosePolicy,
  startChild,
  workflowInfo,
  setHandler,
  type ChildWorkflowHandle,
  type SignalDefinition,
} from '@temporalio/workflow';
import { carriedDown, RunControl, startOver } from './control';
import { undoChanges } from './saga';
import { report, reportHeld, reportPause, statusWriteFailures } from './status';
import { notificationSignal, RunNotifier } from './notify';
import { endingEvent, notifyTarget, type NotifiedApproval } from './plan/notifications';
import { passSafePoint } from './holds';
import { chartOutcomeStatus, chartRollback, chartState } from './plan/ending';
import { canaryRolledBack, canaryWorkflow } from './canary';
import { routeTraffic } from './traffic';
import { canarySteps, canaryTimeoutsOf } from './plan/canary';
import { routeWeights } from './plan/traffic';
import { canaryWorkflowId, runServiceAccount } from './plan/names';
import { ArmadaKind, ArmadaName, ArmadaNamespace } from './search-attributes';
import type { ArmadaChartSpec } from '../api/chart';
import { chartPolicySubject } from '../api/policy-subjects';
import { io, profile } from './activity-proxies';
import { NonRetryable } from './failures';
import {
  progressQuery,
  replanSignal,
  rootMessage,
  type Carried,
  type ChartProgress,
  type GroupProgress,
  type Hold,
} from './messages';
import {
  classifyRelease,
  nextAction,
  revisionBefore,
  type ObservedRelease,
  type ReleaseAction,
  type Unverified,
} from './plan/release';
import { helmRequests, operationSeconds, type ChartObject } from './plan/helm-requests';
import type { ChartDependency, PreparedChart } from '../activities/charts/prepare';
import type { ReleaseRef } from '../activities/helm/release';
import type { ServiceAccountRef } from '../kube/client';
import { chartWrites, isReleaseChange, type ReleaseChange } from './plan/rollback';
import type { LockstepLink } from './plan/lockstep';

export interface ChartRun {
  chart: string;
  release: string;
  namespace: string;
  spec: ArmadaChartSpec;
  /** `uninstall` removes the release (target_state uninstalled, or a manifest's deletion). */
  mode?: 'deploy' | 'uninstall';
  /** Namespace of the ArmadaChart custom resource (status, the canary's workflow ID); default `default`. */
  resourceNamespace?: string;
  /** Pause and approvals from the run this one continued from (a re-plan). */
  carried?: Carried;
  /** The lockstep set its canary steps with (its group's; see workflows/lockstep.ts). */
  lockstep?: LockstepLink;
  /** Its `dependencies`, resolved when the run was planned; absent when it lists none. */
  dependencies?: ChartDependency[];
}

/** A release a failed chart run had written before it failed: the saga's record of it. */
export type WrittenRelease = ReleaseChange;

export interface ChartOutcome {
  chart: string;
  release: string;
  namespace: string;
  /** What this run did to the release (`rolled-back`: a standalone chart's rollback put it back). */
  action: 'installed' | 'upgraded' | 'unchanged' | 'skipped' | 'uninstalled' | 'rolled-back';
  /** The revision before this run; null when the release did not exist. */
  before: number | null;
  revision: number | null;
  /** The ServiceAccount the run acted as (none: the worker itself). */
  actAs?: ServiceAccountRef;
  /** The writes of the runs a standalone chart's run continued from (re-plans), oldest first: undone with its own. */
  carriedChanges?: ReleaseChange[];
}

/**
 * Drives one Helm release: observe (activity) → decide (pure) → act (one activity), until the
 * release runs the wanted chart and values. A release left pending by a killed helm is first
 * recovered; an unchanged release is left alone (no new revision). After an install or upgrade:
 * the Armada wait, then `helm test` when enabled.
 *
 * The workflow ID is the release's lock (`helm:<namespace>/<release>`): one run per release.
 */
export async function chartWorkflow(run: ChartRun): Promise<ChartOutcome> {
  const canary = new CanaryChild();
  const control = new RunControl(run.carried, {
    approvalHint: run.spec.canary
      ? `a chart's gates are its canary's steps: approve act/${run.chart} while a step waits`
      : `ArmadaChart ${run.chart} has no canary, so no approval gates`,
  });
  control.holds.use(run.spec.windows);
  control.onReplan = (replan) => canary.signal(replanSignal, replan);
  canary.control = control;
  const progress: ChartProgress = {
    chart: run.chart,
    release: run.release,
    namespace: run.namespace,
    state: 'deploying',
  };
  let phase = 'Running';
  setHandler(progressQuery, () => ({
    phase,
    groups: [{ name: run.chart, sequenced: true, state: groupStateOf(phase), charts: [progress] }],
    ...control.progress(),
    ...statusWriteFailures(),
  }));
  control.listen((signal, req) => canary.signal(signal, req));
  // The canary's approval steps are steered by its own ID: its events name its approvals, and
  // the chart's own events (its ending) the ones its last event named.
  let canaryApprovals: readonly NotifiedApproval[] = [];
  const notifier = new RunNotifier(
    run.mode === 'uninstall'
      ? undefined
      : notifyTarget('ArmadaChart', chartObject(run).namespace, run.chart, run.spec),
    () => canaryApprovals,
  );
  // The canary child's events come here, to be notified in this run's order.
  setHandler(notificationSignal, (event) => {
    canaryApprovals = event.approvals ?? canaryApprovals;
    void notifier.forward(event);
  });
  const finished = (outcome: ChartOutcome) => {
    phase = chartOutcomeStatus(outcome).phase;
    Object.assign(progress, { state: chartState(outcome), revision: outcome.revision ?? undefined });
    return outcome;
  };
  const failed = (err: unknown) => {
    phase = 'Failed';
    Object.assign(progress, { state: 'failed', error: rootMessage(err) });
  };
  // A chart of a group has its status written by the group, and its rollback is the saga of
  // the manifest or group that runs it; a standalone chart does both itself.
  if (workflowInfo().parent) {
    try {
      return finished(await driveRelease(run, control, canary));
    } catch (err) {
      failed(err);
      throw err;
    } finally {
      await notifier.settled();
    }
  }
  const where = `${run.namespace}/${run.release}`;
  const resource = ['ArmadaChart', chartObject(run).namespace, run.chart] as const;
  control.followPause((paused) => reportPause(...resource, paused));
  await report(...resource, 'Deploying', where);
  void notifier.notify({ event: 'started', reason: where });
  let outcome: ChartOutcome | undefined;
  try {
    outcome = await driveRelease(run, control, canary);
  } catch (err) {
    // A failure under a re-plan (its canary rolled back for it) is not the end: the new specs run.
    if (!control.replan) {
      failed(err);
      await report(...resource, 'Failed', rootMessage(err));
      await notifier.notify({ event: 'failed', reason: rootMessage(err) });
      throw err;
    }
  }
  // The writes of the runs this one continued from (re-plans): undone with its own.
  const carried = (run.carried?.changes ?? []).filter(isReleaseChange);
  if (control.replan) {
    await notifier.settled();
    return startOver(control.replan, control, [...carried, ...(outcome ? chartWrites(outcome) : [])]);
  }
  const undo = chartRollback(outcome!, control.stopRequested !== null, carried);
  if (undo.length) {
    // A rollback asked for while helm wrote the release: put it back as it was before this run
    // and the runs it continued from.
    await report(
      ...resource,
      'RollingBack',
      `rollback requested by ${control.stopRequested!.by ?? 'an operator'}`,
    );
    await undoChanges(undo);
    outcome = { ...outcome!, action: 'rolled-back', revision: undo[0].before };
  } else if (carried.length) outcome = { ...outcome!, carriedChanges: carried };
  const done = chartOutcomeStatus(finished(outcome!));
  await report(...resource, done.phase, done.message, { helm: done.helm });
  await notifier.notify({ ...endingEvent(outcome!.action), reason: done.message });
  return outcome!;
}

/** The ArmadaChart a run deploys: its name and its own namespace (`default` for runs from before it was carried). */
function chartObject(run: ChartRun): ChartObject {
  return { name: run.chart, namespace: run.resourceNamespace ?? 'default' };
}

/** The one group row of a chart run's progress, by the run's phase. */
function groupStateOf(phase: string): GroupProgress['state'] {
  return phase === 'Running' ? 'running' : phase === 'Failed' ? 'failed' : 'done';
}

/**
 * The canary child of a chart run while one runs: pause, resume, rollback and a re-plan sent to
 * the chart run go on to it (it rolls back at once on a re-plan; a Helm call in flight finishes
 * instead). One that came before the child started is passed on when it starts.
 */
class CanaryChild {
  control?: RunControl;
  private handle?: ChildWorkflowHandle<typeof canaryWorkflow>;
  private replanTold = false;

  /** The canary child that now runs. */
  follow(handle: ChildWorkflowHandle<typeof canaryWorkflow>): void {
    this.handle = handle;
    const control = this.control!;
    control.approvalHint = `the canary runs as ${handle.workflowId}: approve it there (armadactl approve act/NAME)`;
    control.promoteRefusal = () =>
      `the canary runs as ${handle.workflowId}: promote it there (armadactl promote act/NAME)`;
    if (control.replan) this.signal(replanSignal, control.replan);
  }

  signal<Args extends unknown[]>(signal: SignalDefinition<Args>, ...args: Args): void {
    if (!this.handle) return;
    if (signal.name === replanSignal.name) {
      if (this.replanTold) return;
      this.replanTold = true;
    }
    this.handle.signal(signal, ...args).catch(() => undefined);
  }
}

/**
 * The release a chart run drives, acting as the chart's ServiceAccount, with what the chart asks
 * of the ArmadaPolicies: every request made from it is checked by the worker before it runs, so
 * a run started without the bridge is refused at its first activity. An uninstall fetches no
 * chart and adopts nothing: only its namespace and ServiceAccount are checked.
 */
function releaseRef(run: ChartRun): ReleaseRef {
  const { release, namespace, spec } = run;
  const object = chartObject(run);
  const subject = chartPolicySubject(object, spec, spec.service_account_name, namespace);
  const placed = {
    kind: subject.kind,
    ...object,
    target: subject.target,
    serviceAccount: subject.serviceAccount,
  };
  return {
    release,
    namespace,
    actAs: runServiceAccount(spec.service_account_name, object.namespace),
    policy: { ...(run.mode === 'uninstall' ? placed : subject), release },
  };
}

async function driveRelease(run: ChartRun, control: RunControl, canary: CanaryChild): Promise<ChartOutcome> {
  const { release, namespace, spec } = run;
  const ref = releaseRef(run);
  const requests = helmRequests(ref, spec, chartObject(run), run.dependencies);
  const observe = () =>
    io.helmObserve.executeWithOptions(profile.long(`observe ${release} in ${namespace}`), [ref]);
  const prepare = () =>
    io.prepareChart.executeWithOptions(
      profile.long(`fetch chart of ${release} (${spec.source.type})`, requests.wait.timeoutSeconds),
      [requests.prepare],
    );
  const observing = observe();
  // The chart is fetched while the release is observed (both only read): one server round trip
  // less before the first helm write. Not for an uninstall, which needs no chart.
  const preparing = run.mode !== 'uninstall' ? prepare() : undefined;
  preparing?.catch(() => undefined); // awaited below, unless the release is refused first
  const observed = await observing;
  // Never upgrade, repair or uninstall someone else's release unasked (the bridge lets `adopt`
  // through only where an ArmadaPolicy allows adoption).
  if (observed?.createdByArmada === false && !spec.adopt)
    throw ApplicationFailure.nonRetryable(
      `release ${namespace}/${release} exists and armada-temporal did not create it (none of its last 20 revisions records an armada-digest, and it has no armada.airshipit.org/deployed-by label); left untouched. Set adopt: true, where an ArmadaPolicy allows adoption, to take it over`,
      NonRetryable.ReleaseNotOwned,
    );
  const before = revisionBefore(observed);
  const outcome = (action: ChartOutcome['action'], revision: number | null): ChartOutcome => ({
    chart: run.chart,
    release,
    namespace,
    action,
    before,
    revision,
    ...(ref.actAs && { actAs: ref.actAs }),
  });

  if (run.mode === 'uninstall') {
    if (observed)
      await io.helmUninstall.executeWithOptions(
        profile.helmWrite(`helm uninstall ${release} in ${namespace}`, operationSeconds(requests.uninstall)),
        [requests.uninstall],
      );
    return outcome('uninstalled', null);
  }

  const prepared = await (preparing ?? prepare());

  let current: ObservedRelease | null = observed;
  /** What this run wrote (install or upgrade) and the checks that revision still owes. */
  let written: { action: 'install' | 'upgrade'; checks?: Unverified } | undefined;
  /** Canary copies beside the release's Deployments, deleted once the release is written and checked. */
  let canaryCopies: string[] = [];
  const done = new Set<ReleaseAction['action']>();
  try {
    for (;;) {
      const action = nextAction(classifyRelease(current, prepared.digest, written?.checks), {
        isProtected: spec.protected !== undefined,
        continueProcessing: spec.protected?.continue_processing ?? false,
      });
      if (done.has(action.action)) {
        throw ApplicationFailure.nonRetryable(
          `release ${namespace}/${release} is still ${current?.status ?? 'absent'} after ${action.action}`,
          NonRetryable.ReleaseNotConverging,
        );
      }
      done.add(action.action);
      log.info('chart action', { release, namespace, action: action.action });

      switch (action.action) {
        case 'none':
          return written
            ? outcome(written.action === 'install' ? 'installed' : 'upgraded', current!.revision)
            : outcome('unchanged', current?.revision ?? null);
        case 'protected':
          if (action.then === 'skip') return outcome('skipped', current?.revision ?? null);
          throw ApplicationFailure.nonRetryable(
            `release ${namespace}/${release} is failed and protected; fix it by hand or set protected.continue_processing`,
            NonRetryable.ProtectedReleaseFailed,
          );
        case 'rollback':
          await io.helmRollback.executeWithOptions(
            profile.helmWrite(
              `recover ${release}: helm rollback to ${action.revision}`,
              operationSeconds(requests.rollback(action.revision)),
            ),
            [requests.rollback(action.revision)],
          );
          break;
        case 'uninstall':
          await io.helmUninstall.executeWithOptions(
            profile.helmWrite(
              `recover ${release}: uninstall a failed first install`,
              operationSeconds(requests.recoverByUninstall),
            ),
            [requests.recoverByUninstall],
          );
          break;
        case 'install':
        case 'upgrade': {
          // The chart run's safe point, before it writes the release: a pause holds here; a
          // rollback, a cancellation or a re-plan write nothing.
          const resource = chartObject(run);
          const held = (hold: Hold | null) =>
            reportHeld('ArmadaChart', resource.namespace, resource.name, hold);
          if (!(await passSafePoint(control, held))) return outcome('skipped', current?.revision ?? null);
          if (action.action === 'upgrade' && spec.upgrade?.pre?.delete?.length) {
            await io.deleteResources.executeWithOptions(profile.quick(`pre-upgrade deletes for ${release}`), [
              { namespace, resources: spec.upgrade.pre.delete, actAs: ref.actAs },
            ]);
          }
          // A canary steps copies of the new revision's Deployments first; the release itself
          // is upgraded only once they reach 100 %. A first install has no stable side to step from.
          if (action.action === 'upgrade' && spec.canary)
            canaryCopies = await runCanary(run, prepared, canary);
          // From here on the release has been written (even a failed upgrade records a revision):
          // a failure carries `before`, so a manifest rollback still puts the release back.
          written = { action: action.action };
          const wrote = await io.helmUpgradeInstall.executeWithOptions(
            profile.helmWrite(
              `helm ${action.action} ${release} in ${namespace}`,
              requests.wait.timeoutSeconds,
            ),
            [requests.upgrade(prepared)],
          );
          // What helm reported is the release now, carrying the digest it was asked to record:
          // no observe before its checks.
          current = { ...wrote, digest: prepared.digest };
          written.checks = { revision: wrote.revision, wait: true, test: requests.test !== undefined };
          continue;
        }
        case 'wait':
          await io.waitForResources.executeWithOptions(
            profile.long(`wait for ${release} in ${namespace}`, requests.wait.timeoutSeconds),
            [requests.wait],
          );
          written!.checks!.wait = false;
          continue;
        case 'test':
          await io.helmTest.executeWithOptions(
            profile.helmWrite(`helm test ${release}`, operationSeconds(requests.test!)),
            [requests.test!],
          );
          written!.checks!.test = false;
          continue;
      }
      current = await observe();
    }
  } catch (err) {
    if (!written) throw err;
    throw ApplicationFailure.nonRetryable(rootMessage(err), NonRetryable.ChartFailedAfterWrite, {
      chart: run.chart,
      release,
      namespace,
      before,
      ...(ref.actAs && { actAs: ref.actAs }),
    } satisfies WrittenRelease);
  } finally {
    // The written release now runs the new revision at full size (or failed, and is left to the
    // manifest's rollback): copies outside Helm must not linger either way.
    if (canaryCopies.length) {
      // The route goes back to the stable Service before the copies it sends traffic to go.
      await routeTraffic(ref, routeWeights(spec.canary?.traffic, release), 0, `${release} back to stable`);
      await io.deleteDeployments.executeWithOptions(profile.quick(`delete the canary copies of ${release}`), [
        { namespace, names: canaryCopies, actAs: ref.actAs },
      ]);
    }
  }
}

/**
 * The canary of a chart upgrade: copies of the new revision's Deployments (at 0 replicas) beside
 * the release's own, stepped by the canary child workflow. Returns the copies to delete once the
 * release is upgraded; throws CanaryRolledBack when the canary rolled back (the copies are gone,
 * the stables restored, the release never touched).
 */
async function runCanary(run: ChartRun, chart: PreparedChart, follower: CanaryChild): Promise<string[]> {
  const { release, namespace, spec } = run;
  const canary = spec.canary!;
  const ref = releaseRef(run);
  const requests = helmRequests(ref, spec, chartObject(run), run.dependencies);
  const pairs = await io.createCanaryCopies.executeWithOptions(
    profile.long(`canary copies of ${release}`, requests.wait.timeoutSeconds),
    [requests.canaryCopies(chart)],
  );
  if (!pairs.length) {
    log.warn('canary: the chart has no Deployments; upgrading at once', { release, namespace });
    return [];
  }
  const resourceNamespace = chartObject(run).namespace;
  const child = await startChild(canaryWorkflow, {
    workflowId: canaryWorkflowId(resourceNamespace, run.chart),
    args: [
      {
        title: release,
        namespace,
        pairs,
        steps: canarySteps(canary.steps),
        ...canaryTimeoutsOf(canary),
        analysis: canary.analysis,
        traffic: routeWeights(canary.traffic, release),
        ...(spec.windows && { windows: spec.windows }),
        ...carriedDown(follower.control!.handedDown()),
        resource: { kind: 'ArmadaChart', namespace: resourceNamespace, name: run.chart },
        actAs: ref.actAs,
        ...(spec.notifications && { notifyParent: true }),
        ...(run.lockstep && { lockstep: run.lockstep }),
      },
    ],
    staticSummary: `canary of ${namespace}/${release}: ${pairs.map((p) => p.canary).join(', ')}`,
    typedSearchAttributes: [
      { key: ArmadaKind, value: 'ArmadaChart' },
      { key: ArmadaName, value: run.chart },
      { key: ArmadaNamespace, value: resourceNamespace },
    ],
    parentClosePolicy: ParentClosePolicy.REQUEST_CANCEL,
    memo: workflowInfo().memo,
  });
  follower.follow(child);
  const outcome = await child.result();
  if (outcome.result === 'rolled-back') throw canaryRolledBack(outcome, `${namespace}/${release}`);
  return pairs.map((p) => p.canary);
}
