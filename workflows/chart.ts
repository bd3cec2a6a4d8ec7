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
import { RunControl, startOver } from './control';
import { undoChanges } from './saga';
import { chartOutcomeStatus, chartState, report, reportPause, statusWriteFailures } from './status';
import { durationSeconds } from '../api/duration';
import { canaryRolledBack, canaryWorkflow } from './canary';
import { canarySteps } from './plan/canary';
import { canaryWorkflowId } from './plan/names';
import { ArmadaKind, ArmadaName, ArmadaNamespace } from './search-attributes';
import type { ArmadaChartSpec } from '../api/chart';
import { io, withSummary as summaryOf } from './activity-proxies';
import { NonRetryable } from './failures';
import { progressQuery, replanSignal, rootMessage, type Carried, type ChartProgress } from './messages';
import {
  classifyRelease,
  nextAction,
  revisionBefore,
  type ObservedRelease,
  type ReleaseAction,
} from './plan/release';

/** Seconds Helm and the Armada wait get when the spec gives none (Armada's default). */
const DEFAULT_TIMEOUT_SECONDS = 900;

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
}

export interface WrittenRelease {
  chart: string;
  release: string;
  namespace: string;
  before: number | null;
}

export interface ChartOutcome {
  chart: string;
  release: string;
  namespace: string;
  /** What this run did to the release (`rolled-back`: a standalone chart's rollback put it back). */
  action: 'installed' | 'upgraded' | 'unchanged' | 'skipped' | 'uninstalled' | 'rolled-back';
  /** The revision before this run; null when the release did not exist. */
  before: number | null;
  revision: number | null;
}

function waitTimeoutSeconds(spec: ArmadaChartSpec): number {
  return spec.wait?.timeout ?? DEFAULT_TIMEOUT_SECONDS;
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
    groups: [{ name: run.chart, sequenced: true, state: 'running', charts: [progress] }],
    ...control.progress(),
    ...statusWriteFailures(),
  }));
  control.listen((signal, req) => canary.signal(signal, req));
  // A chart of a group has its status written by the group, and its rollback is the saga of
  // the manifest or group that runs it; a standalone chart does both itself.
  if (workflowInfo().parent) return driveRelease(run, control, canary);
  const where = `${run.namespace}/${run.release}`;
  const resource = ['ArmadaChart', run.resourceNamespace ?? 'default', run.chart] as const;
  control.followPause((paused) => reportPause(...resource, paused));
  await report(...resource, 'Deploying', where);
  let outcome: ChartOutcome | undefined;
  try {
    outcome = await driveRelease(run, control, canary);
  } catch (err) {
    // A failure under a re-plan (its canary rolled back for it) is not the end: the new specs run.
    if (!control.replan) {
      phase = 'Failed';
      Object.assign(progress, { state: 'failed', error: rootMessage(err) });
      await report(...resource, 'Failed', rootMessage(err));
      throw err;
    }
  }
  if (control.replan) return startOver(control.replan, control);
  if (control.stopRequested && (outcome!.action === 'installed' || outcome!.action === 'upgraded')) {
    // A rollback asked for while helm wrote the release: put it back as it was before this run.
    await report(
      ...resource,
      'RollingBack',
      `rollback requested by ${control.stopRequested.by ?? 'an operator'}`,
    );
    await undoChanges([
      { chart: run.chart, release: run.release, namespace: run.namespace, before: outcome!.before },
    ]);
    outcome = { ...outcome!, action: 'rolled-back', revision: outcome!.before };
  }
  const done = chartOutcomeStatus(outcome!);
  phase = done.phase;
  Object.assign(progress, { state: chartState(outcome!), revision: outcome!.revision ?? undefined });
  await report(...resource, done.phase, done.message, { helm: done.helm });
  return outcome!;
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

async function driveRelease(run: ChartRun, control: RunControl, canary: CanaryChild): Promise<ChartOutcome> {
  const { release, namespace, spec } = run;
  const ref = { release, namespace };
  const observed = await io.helmObserve.executeWithOptions(summaryOf(`observe ${release} in ${namespace}`), [
    ref,
  ]);
  const before = revisionBefore(observed);
  const outcome = (action: ChartOutcome['action'], revision: number | null): ChartOutcome => ({
    chart: run.chart,
    release,
    namespace,
    action,
    before,
    revision,
  });

  if (run.mode === 'uninstall') {
    if (observed)
      await io.helmUninstall.executeWithOptions(summaryOf(`helm uninstall ${release} in ${namespace}`), [
        { ...ref, timeoutSeconds: spec.delete?.timeout },
      ]);
    return outcome('uninstalled', null);
  }

  const prepared = await io.prepareChart.executeWithOptions(
    summaryOf(`fetch chart of ${release} (${spec.source.type})`),
    [{ source: spec.source, values: spec.values }],
  );

  let current: ObservedRelease | null = observed;
  const done = new Set<ReleaseAction['action']>();
  for (;;) {
    const action = nextAction(classifyRelease(current, prepared.digest), {
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
        return outcome('unchanged', current?.revision ?? null);
      case 'protected':
        if (action.then === 'skip') return outcome('skipped', current?.revision ?? null);
        throw ApplicationFailure.nonRetryable(
          `release ${namespace}/${release} is failed and protected; fix it by hand or set protected.continue_processing`,
          NonRetryable.ProtectedReleaseFailed,
        );
      case 'rollback':
        await io.helmRollback.executeWithOptions(
          summaryOf(`recover ${release}: helm rollback to ${action.revision}`),
          [{ ...ref, revision: action.revision, timeoutSeconds: waitTimeoutSeconds(spec) }],
        );
        break;
      case 'uninstall':
        await io.helmUninstall.executeWithOptions(
          summaryOf(`recover ${release}: uninstall a failed first install`),
          [{ ...ref, timeoutSeconds: waitTimeoutSeconds(spec) }],
        );
        break;
      case 'install':
      case 'upgrade': {
        // The chart run's safe point, before it writes the release: a pause holds here; a
        // rollback, a cancellation or a re-plan write nothing.
        if (!(await control.mayContinue())) return outcome('skipped', current?.revision ?? null);
        if (action.action === 'upgrade' && spec.upgrade?.pre?.delete?.length) {
          await io.deleteResources.executeWithOptions(summaryOf(`pre-upgrade deletes for ${release}`), [
            { namespace, resources: spec.upgrade.pre.delete },
          ]);
        }
        // A canary steps copies of the new revision's Deployments first; the release itself
        // is upgraded only once they reach 100 %. A first install has no stable side to step from.
        const canaryCopies =
          action.action === 'upgrade' && spec.canary ? await runCanary(run, prepared.ref, canary) : [];
        // From here on the release has been written (even a failed upgrade records a revision):
        // a failure carries `before`, so a manifest rollback still puts the release back.
        let result;
        try {
          result = await io.helmUpgradeInstall.executeWithOptions(
            summaryOf(`helm ${action.action} ${release} in ${namespace}`),
            [
              {
                ...ref,
                chart: prepared.ref,
                values: spec.values,
                digest: prepared.digest,
                timeoutSeconds: waitTimeoutSeconds(spec),
                nativeWait: spec.wait?.native?.enabled,
                force: spec.upgrade?.options?.force,
                noHooks: spec.upgrade?.options?.no_hooks,
              },
            ],
          );
          await io.waitForResources.executeWithOptions(summaryOf(`wait for ${release} in ${namespace}`), [
            { release, namespace, wait: spec.wait, timeoutSeconds: waitTimeoutSeconds(spec) },
          ]);
          if (spec.test?.enabled) {
            await io.helmTest.executeWithOptions(summaryOf(`helm test ${release}`), [
              { ...ref, timeoutSeconds: spec.test.timeout },
            ]);
          }
        } catch (err) {
          const written: WrittenRelease = { chart: run.chart, release, namespace, before };
          throw ApplicationFailure.nonRetryable(
            rootMessage(err),
            NonRetryable.ChartFailedAfterWrite,
            written,
          );
        } finally {
          // The upgraded release now runs the new revision at full size (or failed, and is left
          // to the manifest's rollback): copies outside Helm must not linger either way.
          if (canaryCopies.length)
            await io.deleteDeployments.executeWithOptions(
              summaryOf(`delete the canary copies of ${release}`),
              [{ namespace, names: canaryCopies }],
            );
        }
        return outcome(action.action === 'install' ? 'installed' : 'upgraded', result.revision);
      }
    }
    current = await io.helmObserve.executeWithOptions(summaryOf(`observe ${release} in ${namespace}`), [ref]);
  }
}

/**
 * The canary of a chart upgrade: copies of the new revision's Deployments (at 0 replicas) beside
 * the release's own, stepped by the canary child workflow. Returns the copies to delete once the
 * release is upgraded; throws CanaryRolledBack when the canary rolled back (the copies are gone,
 * the stables restored, the release never touched).
 */
async function runCanary(run: ChartRun, chart: string, follower: CanaryChild): Promise<string[]> {
  const { release, namespace, spec } = run;
  const canary = spec.canary!;
  const pairs = await io.createCanaryCopies.executeWithOptions(summaryOf(`canary copies of ${release}`), [
    { release, namespace, chart, values: spec.values },
  ]);
  if (!pairs.length) {
    log.warn('canary: the chart has no Deployments; upgrading at once', { release, namespace });
    return [];
  }
  const resourceNamespace = run.resourceNamespace ?? 'default';
  const seconds = (value: number | string | undefined) =>
    value === undefined ? undefined : (durationSeconds(value) ?? undefined);
  const child = await startChild(canaryWorkflow, {
    workflowId: canaryWorkflowId(resourceNamespace, run.chart),
    args: [
      {
        title: release,
        namespace,
        pairs,
        steps: canarySteps(canary.steps),
        stepTimeoutSeconds: seconds(canary.step_timeout),
        approvalTimeoutSeconds: seconds(canary.approval_timeout),
        onTimeout: canary.on_timeout,
        analysis: canary.analysis,
        resource: { kind: 'ArmadaChart', namespace: resourceNamespace, name: run.chart },
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
