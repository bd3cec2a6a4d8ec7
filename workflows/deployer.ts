import { CancellationScope, ContinueAsNew, setHandler } from '@temporalio/workflow';
import { passSafePoint } from './holds';
import type * as activities from '../activities';
import type { DeployerSpec } from '../api/deployer';
import { deployerPolicySubject } from '../api/policy-subjects';
import type { DeployerObject, DeployerRef } from '../activities/kube/deployer';
import { io, profile } from './activity-proxies';
import { Canary, continueWithSameMemo } from './canary';
import { RunControl, startOver } from './control';
import { canaryProgressQuery, rootMessage, type CanaryStepRecord, type Carried } from './messages';
import {
  canarySteps,
  canaryTimeoutsOf,
  continuedRun,
  type CanaryResume,
  type DeploymentPair,
} from './plan/canary';
import { deployerDeploymentName, runServiceAccount } from './plan/names';
import { routeWeights } from './plan/traffic';
import { deployerVersionLabels } from '../kube/labels';
import { report, reportHeld } from './status';
import { routeTraffic } from './traffic';
import { RunNotifier } from './notify';
import { notifyTarget } from './plan/notifications';
import type { LockstepLink } from './plan/lockstep';

export interface DeployerRun {
  /** The Deployer custom resource. */
  name: string;
  namespace: string;
  spec: DeployerSpec;
  /** `uninstall` deletes every Deployment of the Deployer (the custom resource was deleted). */
  mode?: 'deploy' | 'uninstall';
  /** Pause and approvals from the run this one continued from (a re-plan, a long hold). */
  carried?: Carried;
  /** Events a run's history may reach before its canary's hold continues as new (see CanaryRun). */
  historyLimit?: number;
  /** Where the run this one continued from stood: its canary in a hold. */
  resume?: DeployerResume;
  /** The lockstep set its canary steps with (its group's; see workflows/lockstep.ts). */
  lockstep?: LockstepLink;
  /**
   * The run this one undoes (`armadactl rollback dpl/NAME --previous | --to-run`): it ends
   * RolledBack, as every undo does, not Completed: the Deployer then runs a version its spec
   * does not name.
   */
  undoes?: string;
}

/**
 * What a Deployer that continued as new keeps: the versions it found running when it began (the
 * stable side of the pair, and what it deletes once the new version serves), and its canary's
 * hold. It neither observes again (the stable side is scaled down by now) nor creates again.
 */
export interface DeployerResume {
  running: Awaited<ReturnType<typeof activities.observeOwnedDeployments>>;
  canary: CanaryResume;
}

export interface DeployerOutcome {
  result: 'deployed' | 'promoted' | 'rolled-back' | 'uninstalled';
  /** The version serving at the end. */
  version: string;
  /** The version replaced (or kept, after a rollback); none on a first deploy. */
  previous?: string;
  /** A first deploy that created the Deployer's first Deployment: undoing the run removes it. */
  created?: true;
  reason?: string;
  steps: CanaryStepRecord[];
}

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

/**
 * The run finds the Deployments its Deployer owns (its record of their UIDs, README "Canaries")
 * and records those it creates and deletes.
 */
async function rollOut(
  run: DeployerRun,
  control: RunControl,
  notifier: RunNotifier,
): Promise<DeployerOutcome> {
  const { deployment } = run.spec;
  const ref = {
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
  const target = deployerDeploymentName(deployment.name, deployment.version);
  // Answered until the canary knows its Deployments and takes the query over.
  setHandler(canaryProgressQuery, () => ({
    kind: 'canary',
    target: `${deployment.namespace}/${target}`,
    phase: 'Progressing',
    step: 0,
    steps: 0,
    percent: 0,
    waitingOn: 'start',
    history: [],
  }));
  const deployer = { namespace: run.namespace, name: run.name };
  const observing = profile.quick(`find the versions of ${deployment.namespace}/${deployment.name}`);
  const running =
    run.resume?.running ??
    (await io.observeOwnedDeployments.executeWithOptions(observing, [{ ...ref, deployer }]));
  if (run.mode === 'uninstall') {
    await io.deleteDeployments.executeWithOptions(
      profile.quick(`delete every version of ${deployment.name}`),
      [
        {
          namespace: deployment.namespace,
          names: running.map((v) => v.deployment),
          actAs: ref.actAs,
          deployer,
        },
      ],
    );
    return { result: 'uninstalled', version: '', steps: [] };
  }
  if (!run.resume) void notifier.notify({ event: 'started', reason: `version ${deployment.version}` });
  const old = running.filter((v) => v.version !== deployment.version);
  const stable = old[0];
  const firstDeploy = stable === undefined;
  const route = routeWeights(run.spec.traffic, deployment.name);
  const traffic = route && {
    ...route,
    canarySelector: deployerVersionLabels(deployment.name, deployment.version),
  };

  // A freeze or a closed window holds the rollout before it creates anything.
  if (!run.resume)
    await passSafePoint(control, (hold) => reportHeld('Deployer', run.namespace, run.name, hold));
  if (!run.resume)
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
  const pair: DeploymentPair = {
    canary: target,
    stable: stable?.deployment ?? null,
    replicas: deployment.replicas,
    stableReplicas: stable?.replicas ?? 0,
  };
  const canary = new Canary(
    {
      title: `${deployment.namespace}/${target}`,
      namespace: deployment.namespace,
      actAs: ref.actAs,
      pairs: [pair],
      // A first deploy has no stable side to share the traffic with.
      traffic: firstDeploy ? undefined : traffic,
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
  const outcome = await canary.run();
  // The new version serves alone on the stable side now (the old ones are at 0 replicas).
  if (outcome.result === 'promoted' && !firstDeploy)
    await routeTraffic(ref, traffic, 0, `${deployment.namespace}/${target} back to stable`);
  if (control.replan) {
    // Newer specs: a version in flight was rolled back for them (or reached 100 % first, and the
    // old versions go); the run starts over from what now serves.
    if (outcome.result !== 'rolled-back') await deleteVersions(ref, old, deployer);
    await notifier.settled();
    return startOver(control.replan, control);
  }
  if (outcome.result === 'rolled-back') {
    await notifier.settled();
    return {
      result: 'rolled-back',
      version: stable?.version ?? '',
      previous: stable?.version,
      reason: outcome.reason,
      steps: outcome.steps,
    };
  }
  await deleteVersions(ref, old, deployer);
  const [ending, message, phase] = run.undoes
    ? ['RolledBack', `undo of run ${run.undoes}: ${target} serves 100 %`, 'RolledBack']
    : ['Deployed', `${target} serves 100 %`, 'Completed'];
  await report('Deployer', run.namespace, run.name, ending, message, {
    phase,
    current_version: deployment.version,
  });
  await notifier.notify({ event: 'completed', reason: `${target} serves 100 %` });
  return {
    result: firstDeploy ? 'deployed' : 'promoted',
    version: deployment.version,
    previous: stable?.version,
    ...(!running.length && { created: true as const }),
    steps: outcome.steps,
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
