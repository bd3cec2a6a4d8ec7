import { WorkflowFailedError } from '@temporalio/client';
import { ApplicationFailure } from '@temporalio/common';
import type * as activities from '../../activities';
import type { DeployedVersion } from '../../core/contracts/kube';
import { armadaChartSpec } from '../../api/chart';
import { armadaChartGroupSpec } from '../../api/chart-group';
import { deployerSpec } from '../../api/deployer';
import { armadaManifestSpec } from '../../api/manifest';
import { groupWorkflow, manifestWorkflow, undoWorkflow } from '../../workflows';
import type { GroupOutcome, ManifestOutcome } from '../../core/contracts/workflows';
import { rollbackSignal } from '../../workflows/messages';
import { planGroup, planManifest } from '../../core/plan/manifest';
import { objectWorkflowId } from '../../core/plan/names';
import { sharedWorker, uniqueName } from '../helpers/env';
import { saveHistory, savingHistories } from '../helpers/histories';
import { eventually } from '../helpers/processes';
import { fakeHelm } from './fake-helm';

/**
 * A manifest's and a standalone group's rollback undo the Deployers the run rolled out, on the
 * real Temporal dev server with Helm and Kubernetes stubbed: the Deployments of each Deployer's
 * namespace live in `running`, as observeOwnedDeployments finds them and the writes leave them.
 */
const helm = fakeHelm({ failOn: 'undo-broken' });
const running = new Map<string, DeployedVersion[]>();
/** Every Deployment write, in order: `create ns/name@replicas`, `scale ns/name@replicas`, `delete ns/name`. */
const writes: string[] = [];
const stubs: Partial<typeof activities> = {
  ...helm.activities,
  async observeOwnedDeployments(ref) {
    return running.get(ref.namespace) ?? [];
  },
  async createDeployerDeployment(req) {
    const deployment = `${req.name}-${req.version}`;
    const versions = running.get(req.namespace) ?? [];
    if (!versions.some((v) => v.deployment === deployment))
      running.set(req.namespace, [...versions, { deployment, version: req.version, replicas: req.replicas }]);
    writes.push(`create ${req.namespace}/${deployment}@${req.replicas}`);
    return deployment;
  },
  async scaleDeployment(req) {
    const version = running.get(req.namespace)?.find((v) => v.deployment === req.name);
    if (version) version.replicas = req.replicas;
    writes.push(`scale ${req.namespace}/${req.name}@${req.replicas}`);
    return req.replicas;
  },
  async deleteDeployments(req) {
    running.set(
      req.namespace,
      (running.get(req.namespace) ?? []).filter((v) => !req.names.includes(v.deployment)),
    );
    writes.push(...req.names.map((name) => `delete ${req.namespace}/${name}`));
  },
};
const harness = sharedWorker({ activities: stubs });

/** A Deployer rolling out v2 of Deployments in a namespace of its own; `from`: the version running there now. */
function deployer(from?: string) {
  const namespace = uniqueName('dpl');
  if (from) running.set(namespace, [{ deployment: `app-${from}`, version: from, replicas: 3 }]);
  const spec = deployerSpec.parse({
    type: 'canary',
    deployment: { name: 'app', namespace, image: 'registry.test/app', version: 'v2', replicas: 3 },
    steps: [{ percent: 50 }, { percent: 100 }],
  });
  return { namespace, spec };
}

const chart = (release: string, namespace: string) =>
  armadaChartSpec.parse({ release, namespace, source: { type: 'local', location: 'x' }, values: { v: 2 } });

describe('a rollback undoes the Deployers the run rolled out (stubbed activities, real dev server)', () => {
  it('a manifest that rolls back puts a promoted Deployer back at once and removes one it first deployed, newest change first', async () => {
    const namespace = uniqueName('ns');
    const prefix = uniqueName('undo');
    const promoted = deployer('v1');
    const fresh = deployer();
    // The release of group A's chart exists at revision 1; group B's chart fails.
    helm.releases.set(`${prefix}-a`, {
      revision: 1,
      status: 'deployed',
      digest: 'old',
      lastDeployedRevision: 1,
    });
    const plan = planManifest({
      namespace: 'default',
      manifest: {
        name: uniqueName('m'),
        spec: armadaManifestSpec.parse({
          release_prefix: prefix,
          chart_groups: ['ga', 'gb'],
          on_failure: 'rollback',
        }),
      },
      groups: {
        ga: armadaChartGroupSpec.parse({ chart_group: ['a'], sequenced: true, deployers: ['web', 'api'] }),
        gb: armadaChartGroupSpec.parse({ chart_group: ['b'] }),
      },
      charts: { a: chart('a', namespace), b: chart('b', namespace) },
      deployers: { web: promoted.spec, api: fresh.spec },
    });
    plan.groups[1].charts[0].release = 'undo-broken';
    const workflowId = uniqueName('m');
    const failure = await harness()
      .client.workflow.execute(manifestWorkflow, {
        taskQueue: harness().taskQueue,
        workflowId,
        args: [{ plan }],
      })
      .catch((err: unknown) => err);
    expect(failure).toBeInstanceOf(WorkflowFailedError);
    const outcome = ((failure as WorkflowFailedError).cause as ApplicationFailure)
      .details?.[0] as ManifestOutcome;
    expect(outcome.state).toBe('rolled-back');
    // Group A's Deployers rolled out after its chart, api last: undone first.
    expect(outcome.rolledBack).toEqual([
      `${namespace}/undo-broken`, // written before it failed
      'Deployer/default/api removed',
      'Deployer/default/web → v1',
      `${namespace}/${prefix}-a`,
    ]);
    expect(running.get(promoted.namespace)).toEqual([{ deployment: 'app-v1', version: 'v1', replicas: 3 }]);
    expect(running.get(fresh.namespace)).toEqual([]);
    // web: v1 created again beside v2 at 0, at its full replicas in its one step, v2 then deleted.
    const web = writes.filter((w) => w.includes(promoted.namespace));
    const undo = web.slice(web.lastIndexOf(`create ${promoted.namespace}/app-v1@0`));
    expect(undo.filter((w) => w.startsWith(`scale ${promoted.namespace}/app-v1`))).toEqual([
      `scale ${promoted.namespace}/app-v1@3`,
    ]);
    expect(undo.at(-1)).toBe(`delete ${promoted.namespace}/app-v2`);
    expect(helm.calls.filter((c) => c.name === 'rollback').map((c) => c.release)).toContain(`${prefix}-a`);
    expect(helm.statusWrites).toEqual(
      expect.arrayContaining([
        expect.objectContaining({ object: 'Deployer/web', phase: 'RolledBack' }),
        expect.objectContaining({ object: 'Deployer/api', phase: 'RolledBack' }),
      ]),
    );
    // What kubectl reads after: web at the version it went back to; api names no version (merge
    // patch null), not the one just deleted.
    const last = (object: string) => helm.statusFields.filter((w) => w.object === object).at(-1)?.status;
    expect(last('Deployer/web')).toMatchObject({ phase: 'RolledBack', current_version: 'v1' });
    expect(last('Deployer/api')).toMatchObject({ phase: 'RolledBack', current_version: null });
    if (savingHistories) await saveHistory(workflowId, undefined, 'rollback-undoes-deployers--manifest');
  });

  it("a standalone group's rollback puts its promoted Deployer back; one the run found at its version stays", async () => {
    const promoted = deployer('v1');
    const unchanged = deployer('v2');
    const held = deployer('v1');
    const release = uniqueName('c');
    const group = planGroup({
      namespace: 'default',
      name: uniqueName('g'),
      spec: armadaChartGroupSpec.parse({
        chart_group: ['c'],
        sequenced: true,
        deployers: ['same', 'web2', 'held'],
      }),
      charts: { c: chart(release, 'apps') },
      deployers: {
        same: unchanged.spec,
        web2: promoted.spec,
        held: { ...held.spec, steps: [{ percent: 50, approval: true }, { percent: 100 }] },
      },
    });
    const handle = await harness().client.workflow.start(groupWorkflow, {
      taskQueue: harness().taskQueue,
      workflowId: uniqueName('g'),
      args: [{ namespace: 'default', group }],
    });
    // `held` waits at its approval gate, after the others rolled out: the group is rolled back then.
    await eventually('held at its approval gate, past 0 %', async () =>
      writes.find((w) => w.startsWith(`scale ${held.namespace}/app-v2@`) && !w.endsWith('@0')),
    );
    // The group's rollback lets a running Deployer finish: `held` is rolled back at its gate.
    await handle.signal(rollbackSignal, { by: 'test' });
    await harness()
      .client.workflow.getHandle(objectWorkflowId('Deployer', 'default', 'held'))
      .signal(rollbackSignal, { by: 'test' });
    const outcome: GroupOutcome = await handle.result();
    expect(outcome.deployers?.map((d) => [d.name, d.result])).toEqual([
      ['same', 'deployed'],
      ['web2', 'promoted'],
      ['held', 'rolled-back'],
    ]);
    // Its chart (installed) before its Deployers: undone after them.
    expect(outcome.rolledBack).toEqual(['Deployer/default/web2 → v1', `apps/${release}`]);
    expect(running.get(promoted.namespace)).toEqual([{ deployment: 'app-v1', version: 'v1', replicas: 3 }]);
    expect(running.get(held.namespace)).toEqual([{ deployment: 'app-v1', version: 'v1', replicas: 3 }]);
    expect(running.get(unchanged.namespace)).toEqual([{ deployment: 'app-v2', version: 'v2', replicas: 3 }]);
    if (savingHistories) await saveHistory(handle.workflowId, undefined, 'rollback-undoes-deployers--group');
  });

  it('an undo of a finished run (armadactl rollback --to-run) puts its Deployer back as its releases', async () => {
    const { namespace, spec } = deployer();
    running.set(namespace, [{ deployment: 'app-v2', version: 'v2', replicas: 3 }]);
    const release = uniqueName('r');
    helm.releases.set(release, { revision: 2, status: 'deployed', digest: 'new', lastDeployedRevision: 2 });
    const workflowId = objectWorkflowId('ArmadaManifest', 'default', uniqueName('m'));
    const outcome = await harness().client.workflow.execute(undoWorkflow, {
      taskQueue: harness().taskQueue,
      workflowId,
      args: [
        {
          kind: 'ArmadaManifest',
          namespace: 'default',
          name: 'm',
          undoes: { workflowId, runId: 'earlier' },
          changes: [
            { chart: 'a', release, namespace: 'apps', before: 1 },
            {
              deployer: { name: 'web3', workflowId: objectWorkflowId('Deployer', 'default', 'web3'), spec },
              namespace: 'default',
              previous: 'v1',
            },
          ],
        },
      ],
    });
    expect(outcome.rolledBack).toEqual(['Deployer/default/web3 → v1', `apps/${release}`]);
    expect(running.get(namespace)).toEqual([{ deployment: 'app-v1', version: 'v1', replicas: 3 }]);
    expect(helm.releases.get(release)?.digest).toBe('rolled-back-to-1');
  });
});
