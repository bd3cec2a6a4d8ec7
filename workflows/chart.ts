import {
  ApplicationFailure,
  log,
  ParentClosePolicy,
  patched,
  setHandler,
  startChild,
  workflowInfo,
  type ChildWorkflowHandle,
} from '@temporalio/workflow';
import { announceReplan, startOver } from './control';
import { chartOutcomeStatus, report } from './status';
import { durationSeconds } from '../api/duration';
import { canaryRolledBack, canaryWorkflow } from './canary';
import { canarySteps } from './plan/canary';
import { canaryWorkflowId } from './plan/names';
import { ArmadaKind, ArmadaName, ArmadaNamespace } from './search-attributes';
import type { ArmadaChartSpec } from '../api/chart';
import { io, withSummary as summaryOf } from './activity-proxies';
import { NonRetryable } from './failures';
import { replanSignal, rootMessage, type Replan } from './messages';
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
  /** What this run did to the release. */
  action: 'installed' | 'upgraded' | 'unchanged' | 'skipped' | 'uninstalled';
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
  // A chart of a group has its status written by the group; a standalone chart writes its own.
  if (workflowInfo().parent || !patched('standalone-chart-status')) return driveRelease(run);
  const replan = new ChartReplan().listen();
  const where = `${run.namespace}/${run.release}`;
  const resource = ['ArmadaChart', run.resourceNamespace ?? 'default', run.chart] as const;
  await report(...resource, 'Deploying', where);
  let outcome: ChartOutcome | undefined;
  try {
    outcome = await driveRelease(run, replan);
  } catch (err) {
    // A failure under a re-plan (its canary rolled back for it) is not the end: the new specs run.
    if (!replan.pending) {
      await report(...resource, 'Failed', rootMessage(err));
      throw err;
    }
  }
  if (replan.pending) return startOver(replan.pending);
  const done = chartOutcomeStatus(outcome!);
  await report(...resource, done.phase, done.message, { helm: done.helm });
  return outcome!;
}

/**
 * A standalone chart run's re-plan: the newest specs the bridge sent, passed on to the canary
 * child while one runs (it rolls back at once; a Helm call in flight finishes instead).
 */
class ChartReplan {
  pending: Replan | null = null;
  private canary?: ChildWorkflowHandle<typeof canaryWorkflow>;
  private told = false;

  listen(): this {
    setHandler(replanSignal, (replan) => {
      this.pending = replan;
      announceReplan(replan);
      this.tellCanary();
    });
    return this;
  }

  /** The canary child that now runs. */
  follow(canary: ChildWorkflowHandle<typeof canaryWorkflow>): void {
    this.canary = canary;
    this.tellCanary();
  }

  private tellCanary(): void {
    if (!this.pending || !this.canary || this.told) return;
    this.told = true;
    this.canary.signal(replanSignal, this.pending).catch(() => undefined);
  }
}

async function driveRelease(run: ChartRun, replan?: ChartReplan): Promise<ChartOutcome> {
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
        if (action.action === 'upgrade' && spec.upgrade?.pre?.delete?.length) {
          await io.deleteResources.executeWithOptions(summaryOf(`pre-upgrade deletes for ${release}`), [
            { namespace, resources: spec.upgrade.pre.delete },
          ]);
        }
        // A canary steps copies of the new revision's Deployments first; the release itself
        // is upgraded only once they reach 100 %. A first install has no stable side to step from.
        const canaryCopies =
          action.action === 'upgrade' && spec.canary ? await runCanary(run, prepared.ref, replan) : [];
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
async function runCanary(run: ChartRun, chart: string, replan?: ChartReplan): Promise<string[]> {
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
  replan?.follow(child);
  const outcome = await child.result();
  if (outcome.result === 'rolled-back') throw canaryRolledBack(outcome, `${namespace}/${release}`);
  return pairs.map((p) => p.canary);
}
