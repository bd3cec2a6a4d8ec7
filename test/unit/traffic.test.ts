import {
  currentWeights,
  RouteMismatch,
  withWeights,
  type HttpRoute,
  type RouteWeightsRequest,
} from '../../activities/kube/traffic';
import { armadaChartSpec } from '../../api/chart';
import { deployerSpec } from '../../api/deployer';
import { routeWeights } from '../../core/plan/traffic';

/** Rule 0 splits web / web-canary and mirrors 5 to a third Service; rule 1 serves /static alone. */
function route(): HttpRoute {
  return {
    apiVersion: 'gateway.networking.k8s.io/v1',
    kind: 'HTTPRoute',
    metadata: { name: 'shop', namespace: 'apps', resourceVersion: '42' },
    spec: {
      parentRefs: [{ name: 'gateway' }],
      rules: [
        {
          matches: [{ path: { type: 'PathPrefix', value: '/' } }],
          backendRefs: [
            { name: 'web', port: 80, weight: 100 },
            { name: 'web-canary', port: 80, weight: 0, filters: [{ type: 'RequestHeaderModifier' }] },
            { name: 'mirror', port: 8080, weight: 5 },
          ],
        },
        { backendRefs: [{ name: 'static', port: 80 }] },
      ],
    },
  };
}

const request = (percent: number, more: Partial<RouteWeightsRequest> = {}): RouteWeightsRequest => ({
  namespace: 'apps',
  route: 'shop',
  rule: 0,
  stableService: 'web',
  canaryService: 'web-canary',
  percent,
  ...more,
});

describe('withWeights', () => {
  it('gives the canary Service the percent and the stable Service the rest, keeping every other field', () => {
    const before = route();
    const after = withWeights(before, request(30));
    const expected = route();
    expected.spec!.rules![0].backendRefs![0].weight = 70;
    expected.spec!.rules![0].backendRefs![1].weight = 30;
    expect(after).toEqual(expected);
    // The route read is left as it was (it is compared with the result).
    expect(before).toEqual(route());
  });

  it('keeps the resourceVersion read, so a concurrent write makes the replace conflict', () => {
    expect(withWeights(route(), request(10)).metadata?.resourceVersion).toBe('42');
  });

  it('puts all the traffic back on the stable Service at 0 %', () => {
    const refs = withWeights(route(), request(0)).spec!.rules![0].backendRefs!;
    expect(refs.map((r) => [r.name, r.weight])).toEqual([
      ['web', 100],
      ['web-canary', 0],
      ['mirror', 5],
    ]);
  });

  it('sets the weights of the rule named, not of the others', () => {
    const base = route();
    base.spec!.rules![1].backendRefs!.push({ name: 'static-canary', port: 80 });
    const after = withWeights(
      base,
      request(50, { rule: 1, stableService: 'static', canaryService: 'static-canary' }),
    );
    expect(after.spec!.rules![0]).toEqual(route().spec!.rules![0]);
    expect(after.spec!.rules![1].backendRefs).toEqual([
      { name: 'static', port: 80, weight: 50 },
      { name: 'static-canary', port: 80, weight: 50 },
    ]);
  });

  it('refuses a rule the route does not have, naming the route and the rule', () => {
    expect(() => withWeights(route(), request(10, { rule: 2 }))).toThrow(
      new RouteMismatch('HTTPRoute apps/shop has no rule 2 (it has 2)'),
    );
  });

  it('refuses a rule without a backendRef to either Service, naming the Service', () => {
    expect(() => withWeights(route(), request(10, { canaryService: 'shop-canary' }))).toThrow(
      new RouteMismatch('HTTPRoute apps/shop rule 0 has no backendRef to Service shop-canary'),
    );
    expect(() => withWeights(route(), request(10, { rule: 1, stableService: 'static' }))).toThrow(
      'HTTPRoute apps/shop rule 1 has no backendRef to Service web-canary',
    );
  });

  it('does not take a backendRef of another kind or namespace for the Service of that name', () => {
    const base = route();
    base.spec!.rules![0].backendRefs![1] = {
      name: 'web-canary',
      kind: 'ServiceImport',
      group: 'multicluster.x-k8s.io',
    };
    expect(() => withWeights(base, request(10))).toThrow('has no backendRef to Service web-canary');
    base.spec!.rules![0].backendRefs![1] = { name: 'web-canary', namespace: 'other' };
    expect(() => withWeights(base, request(10))).toThrow('has no backendRef to Service web-canary');
    base.spec!.rules![0].backendRefs![1] = {
      name: 'web-canary',
      namespace: 'apps',
      kind: 'Service',
      group: '',
    };
    expect(withWeights(base, request(10)).spec!.rules![0].backendRefs![1].weight).toBe(10);
  });
});

describe('currentWeights', () => {
  it("reads both Services' weights, a missing weight being the API's default of 1", () => {
    expect(currentWeights(route(), request(0))).toEqual({ stable: 100, canary: 0 });
    expect(
      currentWeights(route(), request(0, { rule: 1, stableService: 'static', canaryService: 'none' })),
    ).toEqual({ stable: 1, canary: 1 });
  });
});

describe('routeWeights', () => {
  it('is undefined without traffic.gateway_api', () => {
    expect(routeWeights(undefined, 'web')).toBeUndefined();
  });

  it('defaults to rule 0, the given stable Service and <stable>-canary', () => {
    expect(routeWeights({ gateway_api: { route: 'shop' } }, 'web')).toEqual({
      route: 'shop',
      rule: 0,
      stableService: 'web',
      canaryService: 'web-canary',
    });
    expect(routeWeights({ gateway_api: { route: 'shop', stable_service: 'front' } }, 'web')).toMatchObject({
      stableService: 'front',
      canaryService: 'front-canary',
    });
  });

  it('takes the names and the rule the spec gives', () => {
    expect(
      routeWeights(
        { gateway_api: { route: 'shop', rule: 2, stable_service: 'a', canary_service: 'b' } },
        'web',
      ),
    ).toEqual({ route: 'shop', rule: 2, stableService: 'a', canaryService: 'b' });
  });
});

describe('traffic in the ArmadaChart canary and Deployer schemas (one definition)', () => {
  const chart = (traffic: unknown) =>
    armadaChartSpec.safeParse({
      release: 'web',
      namespace: 'apps',
      source: { type: 'local', location: 'examples/charts/hello' },
      canary: { steps: [{ percent: 50 }], traffic },
    });
  const deployer = (traffic: unknown) =>
    deployerSpec.safeParse({
      type: 'canary',
      deployment: { name: 'web', namespace: 'apps', image: 'nginx', version: '1.0', replicas: 2 },
      steps: [{ percent: 50 }],
      traffic,
    });
  const problems = (result: ReturnType<typeof chart> | ReturnType<typeof deployer>) =>
    result.success ? [] : result.error.issues.map((i) => `${i.path.join('.')}: ${i.message}`);

  it.each([
    ['a chart canary', chart, 'canary.traffic'],
    ['a Deployer', deployer, 'traffic'],
  ])('%s takes a route and rejects bad input, naming the field', (_, parse, at) => {
    expect(problems(parse({ gateway_api: { route: 'shop', rule: 1, stable_service: 'web' } }))).toEqual([]);
    expect(problems(parse({ gateway_api: {} }))).toEqual([
      `${at}.gateway_api.route: Invalid input: expected string, received undefined`,
    ]);
    expect(problems(parse({ gateway_api: { route: 'shop', rule: -1 } }))).toEqual([
      `${at}.gateway_api.rule: traffic.gateway_api.rule must be 0 or more`,
    ]);
    expect(problems(parse({ gateway_api: { route: 'Shop_1' } }))).toEqual([
      `${at}.gateway_api.route: traffic.gateway_api.route must be a DNS-1123 name: lower case letters, digits, '-' and '.'`,
    ]);
    expect(
      problems(parse({ gateway_api: { route: 'shop', stable_service: 'web', canary_service: 'web' } })),
    ).toEqual([`${at}.gateway_api.canary_service: canary_service must differ from stable_service`]);
    expect(problems(parse({ gateway_api: { route: 'shop', weights: 3 } }))).toHaveLength(1);
    expect(problems(parse({ istio: {} }))).toHaveLength(2);
  });
});
