import { CancellationScope, ContinueAsNew, setHandler } from '@temporalio/workflow';
import { passSafePoint } from './holds';
import { deployerOperatorPhase } from '../api/states';
import { deployerPolicySubject } from '../api/policy-subjects';
import type { DeployedVersion, DeployerObject, DeployerRef } from '../core/contracts/kube';
import { io, profile } from './activity-proxies';
import { Canary, continueWithSameMemo } from './canary';
import { RunControl, startOver } from './control';
import { canaryProgressQuery } from './messages';
import { rootMessage } from '../core/failures';
import { canarySteps, canaryTimeoutsOf, continuedRun, type DeploymentPair } from '../core/plan/canary';
import { deployerDeploymentName, runServiceAccount } from '../core/plan/names';
import { routeWeights } from '../core/plan/traffic';
import { deployerVersionLabels } from '../core/labels';
import { report, reportHeld } from './status';
import { routeTraffic } from './traffic';
import { RunNotifier } from './notify';
import { notifyTarget } from '../core/plan/notifications';
import type { DeployerRun, DeployerOutcome } from '../core/contracts/workflows';
import type { CanaryStepRecord } from '../core/progress';

/**
 * A Deployer's rollout, after the Deployer operator. First deploy (no other version running):
 * `<name>-<version>` at full size, done when Ready. A version change: the new Deployment at 0
 * replicas, stepped up while the old one steps down (the canary), then the old one deleted; a
 * rollback keeps the old one at its replicas and deletes the new one.
 */
export async function deployerWorkflow(run: DeployerRun): Promise<DeployerOutcome> {
  const control = new RunControl(run.carried);
  control.holds.use(run.spec.windows);
  control.promoteRefusal = () =>
    'the Deployer is starting its rollout; promote once it steps (armadactl status dpl/NAME)';
  control.listen();
  const notifier = new RunNotifier(
    run.mode === 'uninstall' ? undefined : notifyTarget('Deployer', run.namespace, run.name, run.spec),
    () => control.approvals,
  );
  return CancellationScope.nonCancellable(async () => {
    try {
      return await rollOut(run, control, notifier);
    } catch (err) {
      if (!(err instanceof ContinueAsNew))
        await notifier.notify({ event: 'failed', reason: rootMessage(err) });
      throw err;
    }
  });
}

/** What one rollout works from: the Deployer, the Deployments it finds, and what it steps to. */
interface Rollout {
  run: DeployerRun;
  ref: DeployerRef;
  /** The Deployer object, whose record of owned Deployments the activities read and write. */
  deployer: DeployerObject;
  /** The new version's Deployment. */
  target: string;
  /** The versions running as the run began; `old` those it replaces, `old[0]` the stable side. */
  running: DeployedVersion[];
  old: DeployedVersion[];
  /** No other version runs: nothing to step from. */
  firstDeploy: boolean;
}

/**
 * The run finds the Deployments its Deployer owns (its record of their UIDs, docs/how-to/progressive-delivery.md, "Canaries")
 * and records those it creates and deletes.
 */
async function rollOut(
  run: DeployerRun,
  control: RunControl,
  notifier: RunNotifier,
): Promise<DeployerOutcome> {
  const ref = deployerRef(run);
  const deployer = { namespace: run.namespace, name: run.name };
  const { deployment } = run.spec;
  const target = deployerDeploymentName(deployment.name, deployment.version);
  answerUntilCanary(`${deployment.namespace}/${target}`);
  const running =
    run.resume?.running ??
    (await io.observeOwnedDeployments.executeWithOptions(
      profile.quick(`find the versions of ${deployment.namespace}/${deployment.name}`),
      [{ ...ref, deployer }],
    ));
  if (run.mode === 'uninstall') return uninstall(ref, deployer, running);
  if (!run.resume) void notifier.notify({ event: 'started', reason: `version ${deployment.version}` });
  const old = running.filter((v) => v.version !== deployment.version);
  const rollout: Rollout = { run, ref, deployer, target, running, old, firstDeploy: old.length === 0 };
  if (!run.resume) {
    // A freeze or a closed window holds the rollout before it creates anything.
    await passSafePoint(control, (hold) => reportHeld('Deployer', run.namespace, run.name, hold));
    await createVersion(rollout);
  }
  const outcome = await stepCanary(rollout, control, notifier).run();
  // The new version serves alone on the stable side now (the old ones are at 0 replicas).
  if (outcome.result === 'promoted' && !rollout.firstDeploy)
    await routeTraffic(ref, trafficOf(run), 0, `${deployment.namespace}/${target} back to stable`);
  if (control.replan) {
    // Newer specs: a version in flight was rolled back for them (or reached 100 % first, and the
    // old versions go); the run starts over from what now serves.
    if (outcome.result !== 'rolled-back') await deleteVersions(ref, old, deployer);
    await notifier.settled();
    return startOver(control.replan, control);
  }
  if (outcome.result === 'rolled-back') {
    await notifier.settled();
    const stable = old[0];
    return {
      result: 'rolled-back',
      version: stable?.version ?? '',
      previous: stable?.version,
      reason: outcome.reason,
      steps: outcome.steps,
    };
  }
  return complete(rollout, outcome.steps, notifier);
}

/** The Deployments a Deployer's run acts on, as its ServiceAccount. */
function deployerRef(run: DeployerRun): DeployerRef {
  const { deployment } = run.spec;
  return {
    name: deployment.name,
    namespace: deployment.namespace,
    actAs: runServiceAccount(run.spec.service_account_name, run.namespace),
    // Checked by the worker before each request made from this ref (activities/policy.ts).
    policy: deployerPolicySubject(
      { namespace: run.namespace, name: run.name },
      run.spec,
      run.spec.service_account_name,
    ),
  };
}

/** The canary progress query, answered until the canary knows its Deployments and takes it over. */
function answerUntilCanary(target: string): void {
  setHandler(canaryProgressQuery, () => ({
    kind: 'canary',
    target,
    phase: 'Progressing',
    step: 0,
    steps: 0,
    percent: 0,
    waitingOn: 'start',
    history: [],
  }));
}

/** The Deployer's object was deleted: every version goes. */
async function uninstall(
  ref: DeployerRef,
  deployer: DeployerObject,
  running: DeployedVersion[],
): Promise<DeployerOutcome> {
  await io.deleteDeployments.executeWithOptions(profile.quick(`delete every version of ${ref.name}`), [
    { namespace: ref.namespace, names: running.map((v) => v.deployment), actAs: ref.actAs, deployer },
  ]);
  return { result: 'uninstalled', version: '', steps: [] };
}

/** The traffic split between the versions' Services, when the spec routes traffic. */
function trafficOf(run: DeployerRun) {
  const { deployment } = run.spec;
  const route = routeWeights(run.spec.traffic, deployment.name);
  return (
    route && {
      ...route,
      canarySelector: deployerVersionLabels(deployment.name, deployment.version),
    }
  );
}

/** The new version's Deployment: at full size on a first deploy, else at 0 for the canary to step up. */
async function createVersion({ run, ref, deployer, target, firstDeploy }: Rollout): Promise<void> {
  const { deployment } = run.spec;
  await io.createDeployerDeployment.executeWithOptions(
    profile.quick(`create ${target} at ${firstDeploy ? deployment.replicas : 0} replicas`),
    [
      {
        ...ref,
        image: deployment.image,
        version: deployment.version,
        labels: deployment.labels,
        replicas: firstDeploy ? deployment.replicas : 0,
        deployer,
      },
    ],
  );
}

/** The canary that steps the new version up and the stable one down (continuing as new in a long hold). */
function stepCanary(rollout: Rollout, control: RunControl, notifier: RunNotifier): Canary {
  const { run, ref, target, running, firstDeploy } = rollout;
  const { deployment } = run.spec;
  const stable = rollout.old[0];
  const pair: DeploymentPair = {
    canary: target,
    stable: stable?.deployment ?? null,
    replicas: deployment.replicas,
    stableReplicas: stable?.replicas ?? 0,
  };
  return new Canary(
    {
      title: `${deployment.namespace}/${target}`,
      namespace: deployment.namespace,
      actAs: ref.actAs,
      pairs: [pair],
      // A first deploy has no stable side to share the traffic with.
      traffic: firstDeploy ? undefined : trafficOf(run),
      // A first deploy has nothing to step from: one step, straight to 100 %.
      steps: firstDeploy ? [{ percent: 100 }] : canarySteps(run.spec.steps),
      ...canaryTimeoutsOf(run.spec),
      // A first deploy is no canary: nothing runs beside it to judge it against, as a chart's first install.
      analysis: firstDeploy ? undefined : run.spec.analysis,
      resource: { kind: 'Deployer', namespace: run.namespace, name: run.name },
      historyLimit: run.historyLimit,
      resume: run.resume?.canary,
      windows: run.spec.windows,
      // A first deploy steps nothing: as a chart's first install, it leaves the set once it ends.
      ...(run.lockstep && !firstDeploy && { lockstep: run.lockstep }),
    },
    control,
    (resume) =>
      continueWithSameMemo<typeof deployerWorkflow>(
        continuedRun(run, { running, canary: resume }, control.carry()),
      ),
    notifier,
  );
}

/** The new version serves 100 %: the old ones go, and the Deployer says so. */
async function complete(
  { run, ref, deployer, target, running, old, firstDeploy }: Rollout,
  steps: CanaryStepRecord[],
  notifier: RunNotifier,
): Promise<DeployerOutcome> {
  const { deployment } = run.spec;
  await deleteVersions(ref, old, deployer);
  const [ending, message] = run.undoes
    ? (['RolledBack', `undo of run ${run.undoes}: ${target} serves 100 %`] as const)
    : (['Deployed', `${target} serves 100 %`] as const);
  await report('Deployer', run.namespace, run.name, ending, message, {
    phase: deployerOperatorPhase(ending),
    current_version: deployment.version,
  });
  await notifier.notify({ event: 'completed', reason: `${target} serves 100 %` });
  return {
    result: firstDeploy ? 'deployed' : 'promoted',
    version: deployment.version,
    previous: old[0]?.version,
    ...(!running.length && { created: true as const }),
    steps,
  };
}

/** Deletes the Deployments of versions no longer served, and from `deployer`'s record. */
async function deleteVersions(
  { namespace, actAs }: DeployerRef,
  versions: { deployment: string }[],
  deployer: DeployerObject,
): Promise<void> {
  if (!versions.length) return;
  const names = versions.map((v) => v.deployment);
  await io.deleteDeployments.executeWithOptions(profile.quick(`delete ${names.join(', ')}`), [
    { namespace, names, actAs, deployer },
  ]);
}
