import { CustomObjectsApi } from '@kubernetes/client-node';
import { WorkflowFailedError } from '@temporalio/client';
import type { HttpRoute } from '../../activities/kube/traffic';
import { armadaChartSpec, type ArmadaChartSpecInput } from '../../api/chart';
import { deployerSpec } from '../../api/deployer';
import { CANARY_LABEL } from '../../core/labels';
import { deployerRun, startRun } from '../../runs/requests';
import { groupOutcomeOf } from '../helpers/plan-of-one';
import { approveUpdate, canaryProgressQuery, rollbackSignal } from '../../workflows/messages';
import { canaryWorkflowId } from '../../core/plan/names';
import { chartFailure, chartResult, startChart } from '../helpers/chart-runs';
import { kubeConfig, sharedWorker, uniqueName } from '../helpers/env';
import {
  applyObjects,
  deploymentsWatch,
  grantedRole,
  installCrds,
  kubectl,
  recordChanges,
  replicasOf,
  type Describe,
} from '../helpers/kube';
import { eventually, grantAnyNamespace } from '../helpers/processes';

const HTTPROUTE = { group: 'gateway.networking.k8s.io', version: 'v1', plural: 'httproutes' };

/**
 * An HTTPRoute whose rule 0 sends everything to `stable` (100) and nothing to `canary` (0), and
 * mirrors 5 to a third Service; rule 1 serves /static alone. Only rule 0's two weights may change.
 */
function httpRoute(name: string, stable: string, canary: string) {
  return {
    apiVersion: `${HTTPROUTE.group}/${HTTPROUTE.version}`,
    kind: 'HTTPRoute',
    metadata: { name },
    spec: {
      parentRefs: [{ name: 'gateway' }],
      rules: [
        {
          matches: [{ path: { type: 'PathPrefix', value: '/' } }],
          backendRefs: [
            { name: stable, port: 80, weight: 100 },
            { name: canary, port: 80, weight: 0 },
            { name: 'mirror', port: 8080, weight: 5 },
          ],
        },
        {
          matches: [{ path: { type: 'PathPrefix', value: '/static' } }],
          backendRefs: [{ name: 'static', port: 80 }],
        },
      ],
    },
  };
}

function service(name: string, selector: Record<string, string>) {
  return { apiVersion: 'v1', kind: 'Service', metadata: { name }, spec: { selector, ports: [{ port: 80 }] } };
}

/** Rule 0's weights of `stable` and `canary`, as `stable/canary`. */
function weights(route: HttpRoute, stable: string, canary: string): string {
  const refs = route.spec?.rules?.[0]?.backendRefs ?? [];
  const weight = (name: string) => refs.find((r) => r.name === name)?.weight;
  return `${weight(stable)}/${weight(canary)}`;
}

/** The route without its weights in rule 0 of the two Services: what must never change. */
function untouched(route: HttpRoute, stable: string, canary: string): unknown {
  const rules = route.spec?.rules ?? [];
  return {
    parentRefs: route.spec?.parentRefs,
    rule0: rules[0]?.backendRefs?.map((r) =>
      r.name === stable || r.name === canary ? { ...r, weight: undefined } : r,
    ),
    rule0Matches: rules[0]?.matches,
    rule1: rules[1],
  };
}

/** The route's weights or a Deployment's replicas, for watchedChanges: `route 75/25`, `shop-canary 1`. */
function routeOrReplicas(stable: string, canary: string): Describe {
  return (event) =>
    event.object.kind === 'HTTPRoute'
      ? ['route', weights(event.object as HttpRoute, stable, canary)]
      : replicasOf(event);
}

describe('canary traffic weights on a Gateway API HTTPRoute (real worker, helm, sandbox cluster)', () => {
  const harness = sharedWorker();
  const routes = kubeConfig().makeApiClient(CustomObjectsApi);
  const namespaces: string[] = [];

  const readRoute = async (namespace: string, name: string) =>
    (await routes.getNamespacedCustomObject({ ...HTTPROUTE, namespace, name })) as HttpRoute;
  /**
   * Records the namespace's HTTPRoutes and Deployments from now on; resolves once the watches
   * have delivered the `present` objects, so what follows is only what the run changes.
   * `untilDeleted(name)` waits until the watch sees Deployment `name` deleted, stops, and
   * resolves to the timeline of what changed since.
   */
  const record = async (namespace: string, present: number, stable: string, canary: string) => {
    const recording = await recordChanges(
      [
        {
          path: `/apis/${HTTPROUTE.group}/${HTTPROUTE.version}/namespaces/${namespace}/httproutes`,
          labelSelector: '',
        },
        deploymentsWatch(namespace),
      ],
      present,
    );
    return {
      untilDeleted: (name: string) => recording.changesUntilDeleted(name, routeOrReplicas(stable, canary)),
    };
  };
  /** Checks the route is back on the stable Service, with nothing else of it changed since `original`. */
  const expectBackOnStable = async (
    namespace: string,
    original: HttpRoute,
    stable: string,
    canary: string,
  ) => {
    const after = await readRoute(namespace, original.metadata!.name!);
    expect(weights(after, stable, canary)).toBe('100/0');
    expect(untouched(after, stable, canary)).toEqual(untouched(original, stable, canary));
  };

  beforeAll(async () => {
    await installCrds();
  });
  afterAll(async () => {
    if (namespaces.length) await kubectl('delete', 'namespace', ...namespaces, '--wait=false');
  });

  describe('an ArmadaChart canary', () => {
    const namespace = uniqueName('gw-shop');
    const crNamespace = uniqueName('gw-shop-cr');
    const release = 'shop';
    const spec = (tag: string, canary: Partial<NonNullable<ArmadaChartSpecInput['canary']>>) =>
      armadaChartSpec.parse({
        release,
        namespace,
        source: { type: 'local', location: 'examples/charts/hello' },
        values: { replicaCount: 4, image: { tag } },
        wait: { timeout: 60 },
        canary: { traffic: { gateway_api: { route: 'shop' } }, ...canary },
      });
    const run = (tag: string, canary: Partial<NonNullable<ArmadaChartSpecInput['canary']>>) =>
      startChart(harness(), {
        chart: 'shop',
        release,
        namespace,
        spec: spec(tag, canary),
        resourceNamespace: crNamespace,
      });
    const canaryRun = () => harness().client.workflow.getHandle(canaryWorkflowId(crNamespace, 'shop'));

    beforeAll(async () => {
      namespaces.push(namespace, crNamespace);
      await kubectl('create', 'namespace', crNamespace);
      // A first install has no stable side to step from: it leaves the route alone.
      const installed = await chartResult(await run('1.0.0', { steps: [{ percent: 50 }] }));
      expect(installed).toMatchObject({ action: 'installed', revision: 1 });
      await applyObjects(namespace, [
        service('shop-canary', {
          'app.kubernetes.io/name': 'hello',
          'app.kubernetes.io/instance': release,
          [CANARY_LABEL]: 'true',
        }),
        httpRoute('shop', 'shop', 'shop-canary'),
      ]);
    });

    it('steps the weights with the replicas, 75/25 → 50/50 → 0/100, then back to the stable Service once upgraded', async () => {
      const original = await readRoute(namespace, 'shop');
      const watched = await record(namespace, 2, 'shop', 'shop-canary');
      // Steps held until approved, not for a sleep: the route and the progress are read while the
      // step surely holds (a 2 s sleep could end between a slow query and the read).
      const handle = await run('2.0.0', {
        steps: [
          { percent: 25, approval: true },
          { percent: 50, approval: true },
        ],
      });
      // At every step, read the route from the API server; the progress shows the weights too.
      const atSteps: string[] = [];
      const shown: (string | undefined)[] = [];
      for (const step of [1, 2]) {
        const progress = await eventually(
          `the approval of step ${step}`,
          async () => {
            const now = await canaryRun().query(canaryProgressQuery);
            return now.waitingOn === 'approval' && now.step === step ? now : undefined;
          },
          { pauseMs: 100 },
        );
        atSteps.push(weights(await readRoute(namespace, 'shop'), 'shop', 'shop-canary'));
        shown.push(progress.weights);
        await canaryRun().executeUpdate(approveUpdate, {
          args: [{ by: 'gateway-traffic test', gate: progress.gate?.name }],
        });
      }
      expect(await chartResult(handle)).toMatchObject({ action: 'upgraded', before: 1, revision: 2 });
      const changes = await watched.untilDeleted('shop-canary');

      expect(atSteps).toEqual(['75/25', '50/50']);
      expect(shown).toEqual([
        'HTTPRoute shop rule 0: shop 75 / shop-canary 25',
        'HTTPRoute shop rule 0: shop 50 / shop-canary 50',
      ]);
      await expectBackOnStable(namespace, original, 'shop', 'shop-canary');
      // Each step: the canary scaled up (and Ready), then its weight, then the stable scaled
      // down. Promoted: 0/100; the release upgraded (the stable back to 4), then the route back
      // to the stable Service, and only then the copy deleted.
      expect(changes).toEqual([
        'shop-canary 0',
        'shop-canary 1',
        'route 75/25',
        'shop 3',
        'shop-canary 2',
        'route 50/50',
        'shop 2',
        'shop-canary 4',
        'route 0/100',
        'shop 0',
        'shop 4',
        'route 100/0',
        'shop-canary deleted',
      ]);
    });

    it('a rollback puts the weights back to 100/0 before it scales anything', async () => {
      const watched = await record(namespace, 2, 'shop', 'shop-canary');
      const handle = await run('3.0.0', { steps: [{ percent: 50, approval: true }] });
      await eventually(
        'the approval step',
        async () =>
          (await canaryRun().query(canaryProgressQuery)).waitingOn === 'approval' ? true : undefined,
        { pauseMs: 100 },
      );
      expect(weights(await readRoute(namespace, 'shop'), 'shop', 'shop-canary')).toBe('50/50');
      await canaryRun().signal(rollbackSignal, { by: 'gateway-traffic test', reason: 'bad canary' });
      const failure = await handle.result().then(
        () => undefined,
        (err: unknown) => err,
      );
      expect(failure).toBeInstanceOf(WorkflowFailedError);
      // The canary's CanaryRolledBack is the chart's failure in the run's outcome.
      expect(await chartFailure(handle)).toMatchObject({
        chart: 'shop',
        error: expect.stringMatching(/rolled back/),
      });
      const changes = await watched.untilDeleted('shop-canary');

      expect(changes).toEqual([
        'shop-canary 0',
        'shop-canary 2',
        'route 50/50',
        'shop 2',
        'route 100/0',
        'shop 4',
        'shop-canary deleted',
      ]);
    });
  });

  describe('a Deployer', () => {
    const namespace = uniqueName('gw-web');
    const crNamespace = uniqueName('gw-web-cr');
    /** The Deployer's run as the bridge and armadactl start it (deployerRun); what its rollout did. */
    const deploy = async (version: string, more: object = {}) => {
      const spec = deployerSpec.parse({
        type: 'canary',
        deployment: { name: 'web', namespace, image: 'nginx', version, labels: { app: 'web' }, replicas: 10 },
        steps: [{ percent: 30, sleep: 1 }],
        traffic: { gateway_api: { route: 'web' } },
        ...more,
      });
      const request = deployerRun({ kind: 'Deployer', name: 'web', namespace: crNamespace, spec });
      const { client, taskQueue } = harness();
      const workflowId = await startRun(client, taskQueue, request);
      const { deployers = [] } = await groupOutcomeOf(client.workflow.getHandle(workflowId));
      if (deployers.length !== 1)
        throw new Error(`run ${workflowId} rolled out ${deployers.length} Deployers`);
      return deployers[0];
    };

    beforeAll(async () => {
      namespaces.push(namespace, crNamespace);
      await kubectl('create', 'namespace', namespace);
      await kubectl('create', 'namespace', crNamespace);
      // The Services the Deployer's traffic names by default: web (every version) and web-canary,
      // which the Deployer points at each new version as it steps it.
      await applyObjects(namespace, [
        service('web', { app: 'web' }),
        service('web-canary', { app: 'web' }),
        httpRoute('web', 'web', 'web-canary'),
      ]);
    });

    /** The canary Service's selector, as the API server has it. */
    const canarySelector = async () =>
      (
        JSON.parse(await kubectl('get', 'service', 'web-canary', '-n', namespace, '-o', 'json')) as {
          spec: { selector: Record<string, string> };
        }
      ).spec.selector;
    const selecting = (version: string) => ({
      app: 'web',
      'armada.airshipit.org/deployer': 'web',
      'armada.airshipit.org/version': version,
    });

    it('a first deploy leaves the route alone; a version change steps it 70/30 → 0/100, then back to web', async () => {
      const original = await readRoute(namespace, 'web');
      expect(await deploy('1.0.0')).toMatchObject({ result: 'deployed', version: '1.0.0' });
      expect((await readRoute(namespace, 'web')).metadata?.resourceVersion).toBe(
        original.metadata?.resourceVersion,
      );

      const watched = await record(namespace, 2, 'web', 'web-canary');
      expect(await deploy('2.0.0')).toMatchObject({
        result: 'promoted',
        version: '2.0.0',
        previous: '1.0.0',
      });
      const changes = await watched.untilDeleted('web-1.0.0');

      await expectBackOnStable(namespace, original, 'web', 'web-canary');
      // The first deploy had no canary; the version change pointed the canary Service at 2.0.0.
      expect(await canarySelector()).toEqual(selecting('2.0.0'));
      expect(changes).toEqual([
        'web-2.0.0 0',
        'web-2.0.0 3',
        'route 70/30',
        'web-1.0.0 7',
        'web-2.0.0 10',
        'route 0/100',
        'web-1.0.0 0',
        'route 100/0',
        'web-1.0.0 deleted',
      ]);
    });

    it('a route that does not exist rolls the version back, naming the route, the rule and the Services', async () => {
      const outcome = await deploy('3.0.0', { traffic: { gateway_api: { route: 'no-such-route' } } });
      expect(outcome).toMatchObject({ result: 'rolled-back', version: '2.0.0' });
      expect(outcome.reason).toContain(
        `traffic weights not set: HTTPRoute ${namespace}/no-such-route not found (rule 0, Services web and web-canary)`,
      );
      const deployments = JSON.parse(await kubectl('get', 'deployments', '-n', namespace, '-o', 'json')) as {
        items: { metadata: { name: string }; spec: { replicas: number } }[];
      };
      expect(deployments.items.map((d) => `${d.metadata.name} ${d.spec.replicas}`)).toEqual(['web-2.0.0 10']);
      // Nothing fits without the route: the canary Service still selects the version that serves.
      expect(await canarySelector()).toEqual(selecting('2.0.0'));
    });

    it("sets the weights as the Deployer's ServiceAccount: refused until it may update the route", async () => {
      // `team` may do anything to the core, apps and batch kinds of the Deployments' namespace.
      const team = { namespace: crNamespace, name: 'team' };
      // A run acting as a ServiceAccount is held to its namespace unless a policy grants more,
      // whoever starts it (the worker checks: activities/policy.ts).
      grantAnyNamespace(crNamespace);
      await applyObjects(crNamespace, [
        { apiVersion: 'v1', kind: 'ServiceAccount', metadata: { name: 'team' } },
      ]);
      await applyObjects(
        namespace,
        grantedRole('team', team, [{ apiGroups: ['', 'apps', 'batch'], resources: ['*'], verbs: ['*'] }]),
      );
      const refused = await deploy('3.1.0', { service_account_name: 'team' });
      expect(refused).toMatchObject({ result: 'rolled-back', version: '2.0.0' });
      expect(refused.reason).toContain(
        `traffic weights not set: read HTTPRoute ${namespace}/web: HTTP 403: httproutes.gateway.networking.k8s.io "web" is forbidden: User "system:serviceaccount:${crNamespace}:team" cannot get resource "httproutes"`,
      );
      expect(weights(await readRoute(namespace, 'web'), 'web', 'web-canary')).toBe('100/0');

      await applyObjects(
        namespace,
        grantedRole('team-routes', team, [
          { apiGroups: ['gateway.networking.k8s.io'], resources: ['httproutes'], verbs: ['get', 'update'] },
        ]),
      );
      const watched = await record(namespace, 2, 'web', 'web-canary');
      expect(await deploy('3.1.0', { service_account_name: 'team' })).toMatchObject({
        result: 'promoted',
        version: '3.1.0',
      });
      expect(await watched.untilDeleted('web-2.0.0')).toContain('route 70/30');
      expect(weights(await readRoute(namespace, 'web'), 'web', 'web-canary')).toBe('100/0');
      expect(await canarySelector()).toEqual(selecting('3.1.0'));
    });
  });
});
