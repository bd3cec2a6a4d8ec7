import {
  armadaObject,
  applyObjects,
  deploymentImages,
  deploymentState,
  eventMessages,
  handLabelledDeployment,
  installCrds,
  kubectl,
} from '../helpers/kube';
import { sharedWorker, uniqueName } from '../helpers/env';
import { eventually, startBridge, type ProductProcess } from '../helpers/processes';

/**
 * Issue 34.4: a Deployer's set is the Deployments it created (their UIDs in its status), not
 * whatever carries its label. Bridge process, real worker, sandbox cluster.
 */
describe('a Deployer scales and deletes only the Deployments it created (bridge, real worker, sandbox)', () => {
  const namespace = uniqueName('dpl-own');
  const harness = sharedWorker();
  let bridge: ProductProcess;

  const web = (version: string) =>
    armadaObject('Deployer', 'web', {
      type: 'canary',
      deployment: { name: 'web', namespace, image: 'registry.local/web', version, replicas: 2 },
      steps: [{ percent: 50 }],
    });
  const status = async () =>
    JSON.parse(await kubectl('get', 'dpl', 'web', '-n', namespace, '-o', 'json')).status as {
      phase?: string;
      current_version?: string;
      owned_deployments?: Record<string, string>;
    };
  /** Applies the Deployer at `version` and waits for its run to complete it. */
  const deploy = async (version: string) => {
    await applyObjects(namespace, [web(version)]);
    await eventually(
      `Deployer web Completed at ${version}`,
      async () => {
        const s = await status();
        return s.phase === 'Completed' && s.current_version === version ? true : undefined;
      },
      { process: bridge },
    );
  };
  const uid = async (name: string) =>
    (await kubectl('get', 'deployment', name, '-n', namespace, '-o', 'jsonpath={.metadata.uid}')).trim();

  beforeAll(async () => {
    await installCrds();
    await kubectl('create', 'namespace', namespace);
    bridge = startBridge(namespace, { ARMADA_TASK_QUEUE: harness().taskQueue });
  });
  afterAll(async () => {
    await bridge?.stop();
    await kubectl('delete', 'namespace', namespace, '--wait=false');
  });

  it('hand-labelled Deployments, one even named as the Deployer names its own, are left as they are through a version change, each named in a Warning Event', async () => {
    await deploy('1.0');
    const recorded = (await status()).owned_deployments;
    // More replicas than the Deployer's own: on the code before, the label made `intruder` the
    // stable side, scaled down step by step, and then both were deleted with web-1.0.
    await applyObjects(namespace, [
      handLabelledDeployment('intruder', 'web', '0.9', 5),
      handLabelledDeployment('web-0.8', 'web', '0.8', 3),
    ]);
    const before = [
      await deploymentState(namespace, 'intruder'),
      await deploymentState(namespace, 'web-0.8'),
    ];

    await deploy('2.0');
    expect([
      await deploymentState(namespace, 'intruder'),
      await deploymentState(namespace, 'web-0.8'),
    ]).toEqual(before);
    expect(recorded).toEqual({ 'web-1.0': expect.any(String) });
    expect(await deploymentImages(namespace)).toEqual({
      intruder: '5 nginx:hand',
      'web-0.8': '3 nginx:hand',
      'web-2.0': '2 registry.local/web:2.0',
    });
    expect((await status()).owned_deployments).toEqual({ 'web-2.0': await uid('web-2.0') });
    const notOwned = (name: string) =>
      `Deployment ${namespace}/${name} carries armada.airshipit.org/deployer=web but Deployer ${namespace}/web did not create it (not owned): it is never scaled or deleted`;
    expect(await eventMessages(namespace, 'NotOwned')).toEqual([notOwned('intruder'), notOwned('web-0.8')]);
  });
});
