import {
  ApplicationFailure,
  log,
  ParentClosePolicy,
  startChild,
  workflowInfo,
  type ChildWorkflowHandle,
  type SignalDefinition,
} from '@temporalio/workflow';
import type { RunControl } from './control';
import { carriedDown } from './control';
import { reportHeld } from './status';
import { passSafePoint } from './holds';
import { canaryRolledBack, canaryWorkflow } from './canary';
import { routeTraffic } from './traffic';
import { canarySteps, canaryTimeoutsOf } from '../core/plan/canary';
import { routeWeights } from '../core/plan/traffic';
import { canaryWorkflowId, runServiceAccount } from '../core/plan/names';
import { ArmadaKind, ArmadaName, ArmadaNamespace } from './search-attributes';
import { chartPolicySubject } from '../api/policy-subjects';
import { io, profile } from './activity-proxies';
import { NonRetryable, rootMessage } from '../core/failures';
import { replanSignal } from './messages';
import type { Hold } from '../core/control';
import {
  classifyRelease,
  nextAction,
  revisionBefore,
  type ObservedRelease,
  type ReleaseAction,
  type Unverified,
} from '../core/plan/release';
import {
  helmRequests,
  operationSeconds,
  type ChartObject,
  type HelmRequests,
} from '../core/plan/helm-requests';
import type { PreparedChart } from '../core/contracts/charts';
import type { ReleaseRef } from '../core/contracts/helm';
import type { ChartRun, WrittenRelease, ChartOutcome } from '../core/contracts/workflows';

/*
 * The release driver: one Helm release driven to its chart run's spec, observe (activity) →
 * decide (pure, core/plan/release.ts) → act (one activity), with a chart canary as the canary
 * child workflow. Both the chart workflow and the one-workflow run (workflows/run/) call it.
 */

/** The ArmadaChart a run deploys: its name and its own namespace (`default` for runs from before it was carried). */
export function chartObject(run: ChartRun): ChartObject {
  return { name: run.chart, namespace: run.resourceNamespace ?? 'default' };
}

/**
 * The canary child of a chart run while one runs: pause, resume, rollback and a re-plan sent to
 * the chart run go on to it (it rolls back at once on a re-plan; a Helm call in flight finishes
 * instead). One that came before the child started is passed on when it starts.
 */
export class CanaryChild {
  control?: RunControl;
  /** A lockstep member's (in the one-workflow run): its set takes approvals and promotes for it. */
  inSet = false;
  private handle?: ChildWorkflowHandle<typeof canaryWorkflow>;
  private replanTold = false;
  private ended = false;

  /** The canary child's workflow ID while it runs; undefined before it starts and once it ended. */
  get running(): string | undefined {
    return this.ended ? undefined : this.handle?.workflowId;
  }

  /** The canary child that now runs. */
  follow(handle: ChildWorkflowHandle<typeof canaryWorkflow>): void {
    this.handle = handle;
    const ended = () => (this.ended = true);
    handle.result().then(ended, ended);
    const control = this.control!;
    if (!this.inSet) {
      control.approvalHint = `the canary runs as ${handle.workflowId}: approve it there (armadactl approve act/NAME)`;
      control.promoteRefusal = () =>
        `the canary runs as ${handle.workflowId}: promote it there (armadactl promote act/NAME)`;
    }
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

/** What the steps on one chart run's release share, fixed for the run. */
interface ReleaseRun {
  run: ChartRun;
  ref: ReleaseRef;
  requests: HelmRequests;
  /** The revision before this run; null when the release did not exist. */
  before: number | null;
  control: RunControl;
  canary: CanaryChild;
}

/** What the run has done to its release so far. */
interface ReleaseState {
  /** The release as last observed, or as the last helm write reported it. */
  current: ObservedRelease | null;
  /** What this run wrote (install or upgrade) and the checks that revision still owes. */
  written?: { action: 'install' | 'upgrade'; checks?: Unverified };
  /** Canary copies beside the release's Deployments, deleted once the release is written and checked. */
  canaryCopies: string[];
}

/** What to do after an action: observe the release again, or decide from what the run knows. */
type AfterAction = 'observe' | 'decide';

export async function driveRelease(
  run: ChartRun,
  control: RunControl,
  canary: CanaryChild,
): Promise<ChartOutcome> {
  const ref = releaseRef(run);
  const requests = helmRequests(ref, run.spec, chartObject(run), run.dependencies);
  const observing = observeRelease(run, ref);
  // The chart is fetched while the release is observed (both only read): one server round trip
  // less before the first helm write. Not for an uninstall, which needs no chart.
  const preparing = run.mode !== 'uninstall' ? prepareChart(run, requests) : undefined;
  preparing?.catch(() => undefined); // awaited below, unless the release is refused first
  const observed = await observing;
  refuseUnowned(run, observed);
  const release: ReleaseRun = { run, ref, requests, before: revisionBefore(observed), control, canary };
  if (run.mode === 'uninstall') {
    if (observed)
      await io.helmUninstall.executeWithOptions(
        profile.helmWrite(
          `helm uninstall ${run.release} in ${run.namespace}`,
          operationSeconds(requests.uninstall),
        ),
        [requests.uninstall],
      );
    return outcomeOf(release, 'uninstalled', null);
  }
  const prepared = await (preparing ?? prepareChart(run, requests));
  return converge(release, { current: observed, canaryCopies: [] }, prepared);
}

function observeRelease({ release, namespace }: ChartRun, ref: ReleaseRef): Promise<ObservedRelease | null> {
  return io.helmObserve.executeWithOptions(profile.long(`observe ${release} in ${namespace}`), [ref]);
}

function prepareChart({ release, spec }: ChartRun, requests: HelmRequests): Promise<PreparedChart> {
  return io.prepareChart.executeWithOptions(
    profile.long(`fetch chart of ${release} (${spec.source.type})`, requests.wait.timeoutSeconds),
    [requests.prepare],
  );
}

/**
 * Never upgrade, repair or uninstall someone else's release unasked (the bridge lets `adopt`
 * through only where an ArmadaPolicy allows adoption).
 */
function refuseUnowned({ release, namespace, spec }: ChartRun, observed: ObservedRelease | null): void {
  if (observed?.createdByArmada === false && !spec.adopt)
    throw ApplicationFailure.nonRetryable(
      `release ${namespace}/${release} exists and armada-temporal did not create it (none of its last 20 revisions records an armada-digest, and it has no armada.airshipit.org/deployed-by label); left untouched. Set adopt: true, where an ArmadaPolicy allows adoption, to take it over`,
      NonRetryable.ReleaseNotOwned,
    );
}

function outcomeOf(
  { run, ref, before }: ReleaseRun,
  action: ChartOutcome['action'],
  revision: number | null,
): ChartOutcome {
  const { chart, release, namespace } = run;
  return { chart, release, namespace, action, before, revision, ...(ref.actAs && { actAs: ref.actAs }) };
}

/**
 * Observe → decide (pure) → act, until the release runs the wanted chart and values. An action
 * that comes back a second time means the release does not converge. A failure after the run
 * wrote the release carries `before`, so a manifest's rollback still puts it back.
 */
async function converge(
  release: ReleaseRun,
  state: ReleaseState,
  prepared: PreparedChart,
): Promise<ChartOutcome> {
  const { run, ref } = release;
  const done = new Set<ReleaseAction['action']>();
  try {
    for (;;) {
      const action = nextAction(classifyRelease(state.current, prepared.digest, state.written?.checks), {
        isProtected: run.spec.protected !== undefined,
        continueProcessing: run.spec.protected?.continue_processing ?? false,
      });
      if (done.has(action.action)) {
        throw ApplicationFailure.nonRetryable(
          `release ${run.namespace}/${run.release} is still ${state.current?.status ?? 'absent'} after ${action.action}`,
          NonRetryable.ReleaseNotConverging,
        );
      }
      done.add(action.action);
      log.info('chart action', { release: run.release, namespace: run.namespace, action: action.action });
      const next = await act(release, state, action, prepared);
      if (next === 'observe') state.current = await observeRelease(run, ref);
      else if (next !== 'decide') return next;
    }
  } catch (err) {
    if (!state.written) throw err;
    throw ApplicationFailure.nonRetryable(rootMessage(err), NonRetryable.ChartFailedAfterWrite, {
      chart: run.chart,
      release: run.release,
      namespace: run.namespace,
      before: release.before,
      ...(ref.actAs && { actAs: ref.actAs }),
    } satisfies WrittenRelease);
  } finally {
    // The written release now runs the new revision at full size (or failed, and is left to the
    // manifest's rollback): copies outside Helm must not linger either way.
    if (state.canaryCopies.length) await removeCanaryCopies(release, state.canaryCopies);
  }
}

/** One action on the release: the run's outcome once it is done, else what to do next. */
async function act(
  release: ReleaseRun,
  state: ReleaseState,
  action: ReleaseAction,
  prepared: PreparedChart,
): Promise<ChartOutcome | AfterAction> {
  const { run, requests } = release;
  const { current, written } = state;
  switch (action.action) {
    case 'none':
      return written
        ? outcomeOf(release, written.action === 'install' ? 'installed' : 'upgraded', current!.revision)
        : outcomeOf(release, 'unchanged', current?.revision ?? null);
    case 'protected':
      if (action.then === 'skip') return outcomeOf(release, 'skipped', current?.revision ?? null);
      throw ApplicationFailure.nonRetryable(
        `release ${run.namespace}/${run.release} is failed and protected; fix it by hand or set protected.continue_processing`,
        NonRetryable.ProtectedReleaseFailed,
      );
    case 'rollback':
      await io.helmRollback.executeWithOptions(
        profile.helmWrite(
          `recover ${run.release}: helm rollback to ${action.revision}`,
          operationSeconds(requests.rollback(action.revision)),
        ),
        [requests.rollback(action.revision)],
      );
      return 'observe';
    case 'uninstall':
      await io.helmUninstall.executeWithOptions(
        profile.helmWrite(
          `recover ${run.release}: uninstall a failed first install`,
          operationSeconds(requests.recoverByUninstall),
        ),
        [requests.recoverByUninstall],
      );
      return 'observe';
    case 'install':
    case 'upgrade':
      return writeRelease(release, state, action.action, prepared);
    case 'wait':
      await io.waitForResources.executeWithOptions(
        profile.long(`wait for ${run.release} in ${run.namespace}`, requests.wait.timeoutSeconds),
        [requests.wait],
      );
      written!.checks!.wait = false;
      return 'decide';
    case 'test':
      await io.helmTest.executeWithOptions(
        profile.helmWrite(`helm test ${run.release}`, operationSeconds(requests.test!)),
        [requests.test!],
      );
      written!.checks!.test = false;
      return 'decide';
  }
}

/**
 * An install or upgrade, at the chart run's safe point: a pause holds before it; a rollback, a
 * cancellation or a re-plan write nothing (the run is skipped).
 */
async function writeRelease(
  release: ReleaseRun,
  state: ReleaseState,
  action: 'install' | 'upgrade',
  prepared: PreparedChart,
): Promise<ChartOutcome | AfterAction> {
  const { run, ref, requests } = release;
  const { spec } = run;
  const resource = chartObject(run);
  const held = (hold: Hold | null) => reportHeld('ArmadaChart', resource.namespace, resource.name, hold);
  // The chart's own windows hold its write, inside a manifest's or group's run too.
  if (!(await passSafePoint(release.control, held, spec.windows)))
    return outcomeOf(release, 'skipped', state.current?.revision ?? null);
  if (action === 'upgrade' && spec.upgrade?.pre?.delete?.length) {
    await io.deleteResources.executeWithOptions(profile.quick(`pre-upgrade deletes for ${run.release}`), [
      { namespace: run.namespace, resources: spec.upgrade.pre.delete, actAs: ref.actAs },
    ]);
  }
  // A canary steps copies of the new revision's Deployments first; the release itself is
  // upgraded only once they reach 100 %. A first install has no stable side to step from.
  if (action === 'upgrade' && spec.canary)
    state.canaryCopies = await runCanary(run, prepared, release.canary);
  // From here on the release has been written (even a failed upgrade records a revision).
  state.written = { action };
  const wrote = await io.helmUpgradeInstall.executeWithOptions(
    profile.helmWrite(`helm ${action} ${run.release} in ${run.namespace}`, requests.wait.timeoutSeconds),
    [requests.upgrade(prepared)],
  );
  // What helm reported is the release now, carrying the digest it was asked to record: no
  // observe before its checks.
  state.current = { ...wrote, digest: prepared.digest };
  state.written.checks = {
    revision: wrote.revision,
    wait: requests.waits,
    test: requests.test !== undefined,
  };
  return 'decide';
}

/** Deletes a chart canary's copies, the route first back to the stable Service they took traffic from. */
async function removeCanaryCopies({ run, ref }: ReleaseRun, copies: string[]): Promise<void> {
  const { release, namespace, spec } = run;
  await routeTraffic(ref, routeWeights(spec.canary?.traffic, release), 0, `${release} back to stable`);
  await io.deleteDeployments.executeWithOptions(profile.quick(`delete the canary copies of ${release}`), [
    { namespace, names: copies, actAs: ref.actAs },
  ]);
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

/** The release a failed chart had written, from its failure's details, if any. */
export function writtenRelease(err: unknown): WrittenRelease | undefined {
  for (let e: unknown = err; e instanceof Error; e = e.cause) {
    if (e instanceof ApplicationFailure && e.type === NonRetryable.ChartFailedAfterWrite)
      return e.details?.[0] as WrittenRelease;
  }
  return undefined;
}
