import { WorkflowFailedError } from '@temporalio/client';
import { ApplicationFailure } from '@temporalio/common';
import type { ManifestOutcome } from '../../core/contracts/workflows';
import { objectWorkflowId } from '../../core/plan/names';
import { formatSpecs } from '../../core/plan/specs';
import { armadactlHere as armadactl } from '../helpers/armadactl';
import { helm, helmHistory, sharedWorker, uniqueName } from '../helpers/env';
import {
  applyObjects,
  armadaObject,
  deploymentImages,
  installCrds,
  kubectl,
  settingsChart,
} from '../helpers/kube';
import { eventually, startBridge, type ProductProcess } from '../helpers/processes';

/**
 * docs/how-to/progressive-delivery.md, "Rollbacks undo Deployers", on the real stack: a manifest's groups roll out a Deployer
 * with their charts (bridge process, real worker, helm, sandbox cluster); its rollback after a
 * failed group, and `armadactl rollback --previous` of a finished run, put the Deployer back on
 * the version it replaced, with the releases. Everything lives in one namespace: the objects,
 * the releases and the Deployer's Deployments.
 */
describe('a manifest rollback undoes the Deployer its group promoted (bridge, real worker, helm, sandbox)', () => {
  const namespace = uniqueName('dpl-undo');
  const harness = sharedWorker();
  let bridge: ProductProcess;
  const manifestId = objectWorkflowId('ArmadaManifest', namespace, 'shop');

  /**
   * Manifest shop: group front (chart web, then Deployer api at `version`, sequenced) and group
   * back (chart jobs: examples/charts/tested, its post-install/upgrade hook pod exiting
   * `hookExitCode` when given, which the sandbox ends as the annotation says).
   */
  const shop = (version: string, hookExitCode?: number) => [
    armadaObject('ArmadaManifest', 'shop', {
      release_prefix: 'shop',
      chart_groups: ['front', 'back'],
      on_failure: 'rollback',
    }),
    armadaObject('ArmadaChartGroup', 'front', { chart_group: ['web'], deployers: ['api'], sequenced: true }),
    armadaObject('ArmadaChartGroup', 'back', { chart_group: ['jobs'] }),
    settingsChart('web', namespace, { version }),
    armadaObject('ArmadaChart', 'jobs', {
      release: 'jobs',
      namespace,
      source: { type: 'local', location: 'examples/charts/tested' },
      values: { hook: { enabled: hookExitCode !== undefined, exitCode: hookExitCode ?? 0 } },
      wait: { timeout: 60, resources: [] },
    }),
    armadaObject('Deployer', 'api', {
      type: 'canary',
      deployment: { name: 'api', namespace, image: 'registry.local/api', version, replicas: 2 },
      steps: [{ percent: 50 }],
    }),
  ];

  /** The memo the bridge gives a run of the objects as they are on the cluster now. */
  const specsOnCluster = async () => {
    const { items } = JSON.parse(await kubectl('get', 'amf,acg,act,dpl', '-n', namespace, '-o', 'json')) as {
      items: { kind: string; metadata: { name: string; generation: number } }[];
    };
    return formatSpecs(
      items.map((o) => ({ kind: o.kind, name: o.metadata.name, generation: o.metadata.generation })),
    );
  };

  /** Applies `objects` and follows the manifest run the bridge starts for them to its end: its outcome. */
  const deploy = async (objects: object[]): Promise<ManifestOutcome> => {
    await applyObjects(namespace, objects);
    const specs = await specsOnCluster();
    const runId = await eventually(
      `the manifest run of ${specs}`,
      async () => {
        for await (const run of harness().client.workflow.list({ query: `WorkflowId = '${manifestId}'` }))
          if (run.memo?.specs === specs) return run.runId;
        return undefined;
      },
      { process: bridge },
    );
    try {
      return await harness().client.workflow.getHandle(manifestId, runId).result();
    } catch (err) {
      if (!(err instanceof WorkflowFailedError && err.cause instanceof ApplicationFailure)) throw err;
      return err.cause.details?.[0] as ManifestOutcome;
    }
  };
  /** The Deployer's status once a rollback put it back on 1.0: kubectl get dpl's Phase column too. */
  const ROLLED_BACK_TO_1 = {
    phase: 'RolledBack',
    current_version: '1.0',
    conditions: expect.arrayContaining([
      expect.objectContaining({ type: 'Stalled', status: 'True', reason: 'RolledBack' }),
    ]),
  };
  const deployer = async () =>
    JSON.parse(await kubectl('get', 'dpl', 'api', '-n', namespace, '-o', 'json')).status as Record<
      string,
      unknown
    >;
  const history = async (release: string) =>
    (await helmHistory(release, namespace)).map(
      (h) =>
        `${h.revision} ${h.status} ${h.description?.startsWith('armada-digest') ? 'deploy' : h.description}`,
    );
  const webValue = async () =>
    JSON.parse(await helm('get', 'values', 'shop-web', '-n', namespace, '-o', 'json')).settings
      .version as string;

  beforeAll(async () => {
    await installCrds();
    await kubectl('create', 'namespace', namespace);
    process.env.ARMADA_TASK_QUEUE = harness().taskQueue;
    bridge = startBridge(namespace, { ARMADA_TASK_QUEUE: harness().taskQueue });
  });
  afterAll(async () => {
    await bridge?.stop();
    await kubectl('delete', 'namespace', namespace, '--wait=false');
  });

  it('a failed later group rolls the run back: the Deployer it promoted serves its old version again, the chart its old revision', async () => {
    expect((await deploy(shop('1.0'))).state).toBe('deployed');
    expect(await deploymentImages(namespace)).toEqual({ 'api-1.0': '2 registry.local/api:1.0' });

    // Group front upgrades web and promotes api to 2.0; group back's hook pod then fails.
    const outcome = await deploy(shop('2.0', 1));
    expect(outcome.state).toBe('rolled-back');
    expect(outcome.groups[1].failed).toEqual([
      expect.objectContaining({ chart: 'jobs', error: expect.stringContaining('pod shop-jobs-hook failed') }),
    ]);
    // Newest change first: back's release, then front's Deployer (rolled out after its chart), then web.
    expect(outcome.rolledBack).toEqual([
      `${namespace}/shop-jobs`,
      `Deployer/${namespace}/api → 1.0`,
      `${namespace}/shop-web`,
    ]);
    expect(await deploymentImages(namespace)).toEqual({ 'api-1.0': '2 registry.local/api:1.0' });
    expect(await deployer()).toMatchObject(ROLLED_BACK_TO_1);
    expect(await history('shop-web')).toEqual([
      '1 superseded deploy',
      '2 superseded deploy',
      '3 deployed Rollback to 1',
    ]);
    expect(await webValue()).toBe('1.0');
  });

  it('armadactl rollback --previous of a run that promoted the Deployer puts it back too', async () => {
    // The hook fixed: the run promotes api to 2.0 again and upgrades web to it.
    expect((await deploy(shop('2.0'))).state).toBe('deployed');
    expect(await deploymentImages(namespace)).toEqual({ 'api-2.0': '2 registry.local/api:2.0' });
    expect(await deployer()).toMatchObject({ phase: 'Completed', current_version: '2.0' });

    const undone = await armadactl('rollback', 'amf/shop', '-n', namespace, '--previous');
    expect(undone).toMatchObject({ code: 0 });
    // Newest first: api (rolled out after web); jobs, unchanged by the run, stays as it is.
    expect(undone.out.split('\n').at(-1)).toMatch(
      new RegExp(`put back: Deployer/${namespace}/api → 1\\.0, ${namespace}/shop-web$`),
    );
    expect(await deploymentImages(namespace)).toEqual({ 'api-1.0': '2 registry.local/api:1.0' });
    expect(await deployer()).toMatchObject(ROLLED_BACK_TO_1);
    expect(await webValue()).toBe('1.0');
  });
});
