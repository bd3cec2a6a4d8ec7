import type { V1Pod } from '@kubernetes/client-node';
import { judgePrometheus, podsOf, queryValues, type Sample } from '../../activities/prometheus';
import { canaryAnalysis } from '../../api/analysis';
import { analysisUrls } from '../../api/policy-subjects';
import { armadaChartSpec } from '../../api/chart';
import { deployerSpec } from '../../api/deployer';
import { queryTemplateProblem, renderQuery, type QuerySide } from '../../api/prometheus-query';

const canarySide: QuerySide = {
  namespace: 'shop',
  pods: ['web-canary-5d9f-abcde', 'web-canary-5d9f-fghij'],
  labels: { app: 'web', canary: 'true' },
};

describe('renderQuery', () => {
  it.each([
    ['the namespace', 'up{namespace="{{namespace}}"}', 'up{namespace="shop"}'],
    [
      'the selector of exactly the side’s pods',
      'max(errors{ {{selector}} })',
      'max(errors{ namespace="shop",pod=~"web-canary-5d9f-abcde|web-canary-5d9f-fghij" })',
    ],
    [
      'the selector right after a brace',
      'errors{{{selector}}}',
      'errors{namespace="shop",pod=~"web-canary-5d9f-abcde|web-canary-5d9f-fghij"}',
    ],
    ['a label of every pod, spaces inside the braces', 'up{app="{{ labels.app }}"}', 'up{app="web"}'],
    ['no placeholder at all', 'vector(1)', 'vector(1)'],
  ])('renders %s', (_, template, rendered) => {
    expect(renderQuery(template, canarySide)).toBe(rendered);
  });

  it('escapes a dot of a pod name for the regular expression, inside a PromQL string', () => {
    const side = { ...canarySide, pods: ['web-1.2-abc-xyz'] };
    expect(renderQuery('{{selector}}', side)).toBe('namespace="shop",pod=~"web-1\\\\.2-abc-xyz"');
  });

  it('refuses a label not every pod carries, naming it', () => {
    expect(() => renderQuery('up{t="{{labels.tier}}"}', canarySide)).toThrow(
      'label tier of {{labels.tier}} is not on every pod',
    );
  });
});

describe('queryTemplateProblem', () => {
  it.each([
    ['{{namespace}} {{selector}} {{labels.app.kubernetes.io/name}}', undefined],
    ['up{ {{pod}} }', 'unknown placeholder {{pod}}: use {{namespace}}, {{selector}} or {{labels.<key>}}'],
    [
      'up{a="{{labels.}}"}',
      'unknown placeholder {{labels.}}: use {{namespace}}, {{selector}} or {{labels.<key>}}',
    ],
    ['up{a="{{labels.bad key}}"}', expect.stringMatching(/^unknown placeholder \{\{labels\.bad key\}\}/)],
    ['up{a="{{namespace"}', expect.stringMatching(/^"\{\{" or "\}\}" outside a placeholder/)],
  ])('%s → %s', (template, problem) => {
    expect(queryTemplateProblem(template)).toEqual(problem);
  });
});

describe('judgePrometheus', () => {
  const canary = (...values: number[]): Sample => ({ query: 'q{canary}', values });
  const stable = (...values: number[]): Sample => ({ query: 'q{stable}', values });

  it.each<[string, Parameters<typeof judgePrometheus>, { ok: boolean; message: string }]>([
    [
      'a value under max passes',
      [{ max: 0.1 }, canary(0.05)],
      { ok: true, message: 'q{canary} = 0.05 (max 0.1)' },
    ],
    [
      'the max itself passes',
      [{ max: 0.1 }, canary(0.1)],
      { ok: true, message: 'q{canary} = 0.1 (max 0.1)' },
    ],
    [
      'a value over max fails',
      [{ max: 0.1 }, canary(0.5)],
      { ok: false, message: 'q{canary} = 0.5, above max 0.1' },
    ],
    [
      'a value under min fails',
      [{ min: 0.99 }, canary(0.9)],
      { ok: false, message: 'q{canary} = 0.9, below min 0.99' },
    ],
    [
      'several series: the worst counts (highest for max)',
      [{ max: 0.1 }, canary(0.01, 0.2, 0.05)],
      { ok: false, message: 'q{canary} = 0.2, above max 0.1' },
    ],
    [
      'several series: the worst counts (lowest for min)',
      [{ min: 0.5 }, canary(0.9, 0.4)],
      { ok: false, message: 'q{canary} = 0.4, below min 0.5' },
    ],
    [
      'an empty result fails, never passes',
      [{ max: 0.1 }, canary()],
      { ok: false, message: 'q{canary}: empty result (no series matched)' },
    ],
    [
      'NaN fails',
      [{ max: 0.1 }, canary(NaN)],
      { ok: false, message: 'q{canary}: NaN (e.g. a rate divided by no requests)' },
    ],
    [
      'an error is the reason',
      [{ max: 0.1 }, { query: 'q', error: 'GET http://p:9090: timed out after 10s' }],
      { ok: false, message: 'q: GET http://p:9090: timed out after 10s' },
    ],
    [
      'max: a canary worse than the stable by more than the margin fails',
      [{ max: 0.5, stable: { deployments: ['web'], margin: 0.05 } }, canary(0.3), stable(0.1)],
      {
        ok: false,
        message:
          'canary q{canary} = 0.3, stable q{stable} = 0.1: the canary is worse by 0.2, more than margin 0.05',
      },
    ],
    [
      'max: worse by exactly the margin passes',
      [{ max: 0.5, stable: { deployments: ['web'], margin: 0.2 } }, canary(0.3), stable(0.1)],
      { ok: true, message: 'canary q{canary} = 0.3, stable q{stable} = 0.1 (max 0.5, margin 0.2)' },
    ],
    [
      'max: a canary better than the stable passes',
      [{ max: 0.5, stable: { deployments: ['web'], margin: 0 } }, canary(0.1), stable(0.3)],
      { ok: true, message: 'canary q{canary} = 0.1, stable q{stable} = 0.3 (max 0.5, margin 0)' },
    ],
    [
      'min: a canary lower than the stable by more than the margin fails',
      [{ min: 0.5, stable: { deployments: ['web'], margin: 0.01 } }, canary(0.95), stable(0.99)],
      {
        ok: false,
        message:
          'canary q{canary} = 0.95, stable q{stable} = 0.99: the canary is worse by 0.04, more than margin 0.01',
      },
    ],
    [
      'the bound is judged before the comparison',
      [{ max: 0.1, stable: { deployments: ['web'], margin: 1 } }, canary(0.3), stable(0.3)],
      { ok: false, message: 'q{canary} = 0.3, above max 0.1' },
    ],
    [
      'an empty stable result fails the comparison',
      [{ max: 0.5, stable: { deployments: ['web'], margin: 0.1 } }, canary(0.1), stable()],
      { ok: false, message: 'stable: q{stable}: empty result (no series matched)' },
    ],
  ])('%s', (_, args, expected) => {
    expect(judgePrometheus(...args)).toMatchObject(expected);
  });
});

describe('queryValues', () => {
  const success = (data: object) => JSON.stringify({ status: 'success', data });
  it.each<[string, number, string, ReturnType<typeof queryValues>]>([
    [
      'a vector: one value per series',
      200,
      success({
        resultType: 'vector',
        result: [
          { metric: {}, value: [1, '0.5'] },
          { metric: {}, value: [1, '2'] },
        ],
      }),
      { values: [0.5, 2] },
    ],
    ['an empty vector', 200, success({ resultType: 'vector', result: [] }), { values: [] }],
    ['a scalar', 200, success({ resultType: 'scalar', result: [1, '3'] }), { values: [3] }],
    [
      'NaN and +Inf as Prometheus writes them',
      200,
      success({ resultType: 'vector', result: [{ value: [1, 'NaN'] }, { value: [1, '+Inf'] }] }),
      { values: [NaN, Infinity] },
    ],
    [
      'a matrix is refused',
      200,
      success({ resultType: 'matrix', result: [] }),
      { error: 'a matrix result; the query must return an instant vector or a scalar' },
    ],
    [
      "Prometheus' own error",
      400,
      JSON.stringify({ status: 'error', errorType: 'bad_data', error: 'parse error at char 5' }),
      { error: 'status 400, Prometheus bad_data: parse error at char 5' },
    ],
    ['not JSON', 502, 'Bad Gateway', { error: 'status 502, body is not JSON: "Bad Gateway"' }],
  ])('%s', (_, status, body, expected) => {
    expect(queryValues(status, body)).toEqual(expected);
  });
});

describe('podsOf', () => {
  const pod = (
    name: string,
    replicaSet: string,
    labels: Record<string, string>,
    deleting = false,
  ): V1Pod => ({
    metadata: {
      name,
      labels,
      ownerReferences: [{ apiVersion: 'apps/v1', kind: 'ReplicaSet', name: replicaSet, uid: name }],
      ...(deleting && { deletionTimestamp: new Date() }),
    },
  });
  const pods = [
    pod('web-7c9-a', 'web-7c9', { app: 'web', 'pod-template-hash': '7c9' }),
    pod('web-7c9-b', 'web-7c9', { app: 'web', 'pod-template-hash': '7c9' }),
    pod('web-canary-5d9-c', 'web-canary-5d9', { app: 'web', canary: 'true', 'pod-template-hash': '5d9' }),
    pod('web-7c9-d', 'web-7c9', { app: 'web', 'pod-template-hash': '7c9' }, true),
    pod('api-1b2-e', 'api-1b2', { app: 'api' }),
  ];

  it('takes the pods whose ReplicaSet is the Deployment’s: web’s are not web-canary’s', () => {
    expect(podsOf(pods, 'shop', ['web'])).toEqual({
      namespace: 'shop',
      pods: ['web-7c9-a', 'web-7c9-b'],
      labels: { app: 'web', 'pod-template-hash': '7c9' },
    });
    expect(podsOf(pods, 'shop', ['web-canary']).pods).toEqual(['web-canary-5d9-c']);
  });

  it('keeps only the labels all its pods share, and none without pods', () => {
    expect(podsOf(pods, 'shop', ['web', 'api']).labels).toEqual({});
    expect(podsOf(pods, 'shop', ['gone'])).toEqual({ namespace: 'shop', pods: [], labels: {} });
  });
});

describe('the analysis schema', () => {
  const prometheus = { address: 'http://127.0.0.1:9090', query: 'max(e{ {{selector}} })', max: 0.1 };
  const issues = (analysis: unknown) => {
    const parsed = canaryAnalysis.safeParse(analysis);
    return parsed.success ? [] : parsed.error.issues.map((i) => `${i.path.join('.')}: ${i.message}`);
  };

  it.each<[string, unknown, string[]]>([
    ['an HTTP check', { url: 'http://x/ok', interval: '5s' }, []],
    ['a Prometheus check compared to the stable', { prometheus, compare_to_stable: { margin: 0.01 } }, []],
    ['neither', { interval: '5s' }, ['url: give url (an HTTP check) or prometheus']],
    [
      'an unknown placeholder',
      { prometheus: { ...prometheus, query: 'up{ {{pods}} }' } },
      ['prometheus.query: unknown placeholder {{pods}}: use {{namespace}}, {{selector}} or {{labels.<key>}}'],
    ],
    [
      'both min and max',
      { prometheus: { ...prometheus, min: 0 } },
      ['prometheus.max: give exactly one of min and max: the bound also says which way is worse'],
    ],
    [
      'an HTTP field beside prometheus',
      { prometheus, interval: '5s' },
      [
        'interval: interval is for an HTTP check; with prometheus, set prometheus.interval and prometheus.failure_limit',
      ],
    ],
    [
      'compare_to_stable without prometheus',
      { url: 'http://x/ok', compare_to_stable: { margin: 1 } },
      ['compare_to_stable: compare_to_stable needs prometheus'],
    ],
  ])('%s', (_, analysis, expected) => {
    expect(issues(analysis)).toEqual(expected);
  });

  it('names every URL an analysis makes the worker reach, for the url_prefixes of ArmadaPolicies', () => {
    expect(analysisUrls({ prometheus }, 'spec.analysis')).toEqual([
      { path: 'spec.analysis.prometheus.address', url: 'http://127.0.0.1:9090' },
    ]);
    expect(analysisUrls({ url: 'http://x/ok' }, 'spec.canary.analysis')).toEqual([
      { path: 'spec.canary.analysis.url', url: 'http://x/ok' },
    ]);
    expect(analysisUrls(undefined, 'spec.analysis')).toEqual([]);
  });

  it('is the same definition on ArmadaChart canaries and Deployers, and Deployer steps take approval', () => {
    const chartAnalysis = armadaChartSpec.shape.canary.unwrap().shape.analysis.unwrap();
    expect(deployerSpec.shape.analysis.unwrap()).toBe(chartAnalysis);
    expect(chartAnalysis).toBe(canaryAnalysis);
    const deployer = deployerSpec.parse({
      type: 'canary',
      deployment: { name: 'web', namespace: 'web', image: 'nginx', version: '1.0', replicas: 2 },
      steps: [{ percent: 50, approval: true }],
      analysis: { prometheus },
    });
    expect(deployer.steps[0].approval).toBe(true);
  });
});
