import { jsonShape } from '../../api/chart';
import { durationSeconds } from '../../api/duration';
import { formatPath, validateObject } from '../../api/validate';

const chart = (spec: Record<string, unknown>) => ({
  apiVersion: 'armada.airshipit.org/v1alpha1',
  kind: 'ArmadaChart',
  metadata: { name: 'web' },
  spec: { release: 'web', namespace: 'apps', source: { type: 'local', location: 'charts/web' }, ...spec },
});

const problemsOf = (doc: unknown) => validateObject(doc).problems;

describe('durationSeconds', () => {
  it.each([
    [90, 90],
    ['30s', 30],
    ['5m', 300],
    ['1h30m', 5400],
    ['500ms', 0.5],
    ['1.5h', 5400],
    ['5 minutes', null],
    ['', null],
    ['-5s', null],
  ])('%j is %j seconds', (value, seconds) => {
    expect(durationSeconds(value)).toBe(seconds);
  });
});

describe('formatPath', () => {
  it('writes array indexes in brackets, as kubectl does', () => {
    expect(formatPath(['spec', 'canary', 'steps', 1, 'percent'])).toBe('spec.canary.steps[1].percent');
  });
});

describe('validateObject', () => {
  it('accepts a minimal chart', () => {
    expect(problemsOf(chart({}))).toEqual([]);
  });

  it.each([
    [
      'canary percents must increase strictly',
      chart({ canary: { steps: [{ percent: 30 }, { percent: 30 }] } }),
      {
        path: 'spec.canary.steps[1].percent',
        message: "percent must be greater than the previous step's 30",
      },
    ],
    [
      'a duration must parse',
      chart({ canary: { steps: [{ percent: 10, sleep: '5 minutes' }] } }),
      {
        path: 'spec.canary.steps[0].sleep',
        message: 'sleep "5 minutes" is not a duration such as "30s", "5m" or "1h30m"',
      },
    ],
    [
      'a repo source needs the chart name',
      chart({ source: { type: 'repo', location: 'https://charts.example.com' } }),
      { path: 'spec.source.chart', message: 'required when source.type is repo' },
    ],
    [
      'an oci source needs an oci:// reference',
      chart({ source: { type: 'oci', location: 'https://registry.example.com/web' } }),
      { path: 'spec.source.location', message: 'must be an oci:// reference when source.type is oci' },
    ],
    [
      'a release name longer than Helm allows',
      chart({ release: 'r'.repeat(54) }),
      { path: 'spec.release', message: 'a Helm release name must be at most 53 characters' },
    ],
    [
      'a missing field says so',
      { ...chart({}), spec: { namespace: 'apps', source: { type: 'local', location: 'x' } } },
      { path: 'spec.release', message: 'required' },
    ],
    [
      'an unknown field is named',
      chart({ sequenced: true }),
      { path: 'spec.sequenced', message: 'unknown field' },
    ],
    [
      'an unknown enum value lists the allowed ones',
      chart({ target_state: 'running' }),
      { path: 'spec.target_state', message: 'must be one of "uninitialized", "deployed", "uninstalled"' },
    ],
    [
      'timeouts must be positive',
      chart({ wait: { timeout: 0 } }),
      { path: 'spec.wait.timeout', message: 'wait.timeout must be positive' },
    ],
    [
      'a group lists each chart once',
      {
        apiVersion: 'armada.airshipit.org/v1alpha1',
        kind: 'ArmadaChartGroup',
        metadata: { name: 'g' },
        spec: { chart_group: ['a', 'b', 'a'] },
      },
      { path: 'spec.chart_group[2]', message: 'chart "a" is listed twice (also at index 0)' },
    ],
    [
      'a manifest approval gate names one of its groups',
      {
        apiVersion: 'armada.airshipit.org/v1alpha1',
        kind: 'ArmadaManifest',
        metadata: { name: 'm' },
        spec: { release_prefix: 'p', chart_groups: ['a'], approval: { before: ['b'] } },
      },
      { path: 'spec.approval.before[0]', message: '"b" is not one of chart_groups' },
    ],
    [
      'an unknown kind lists the known ones',
      { apiVersion: 'armada.airshipit.org/v1alpha1', kind: 'Chart', metadata: { name: 'x' }, spec: {} },
      {
        path: 'kind',
        message: 'must be one of ArmadaChart, ArmadaChartGroup, ArmadaManifest, Deployer, ArmadaPolicy',
      },
    ],
  ])('%s', (_name, doc, problem) => {
    expect(problemsOf(doc)).toContainEqual(problem);
  });
});

describe('validateObject on hostile input', () => {
  const nested = (levels: number): unknown => {
    let value: unknown = 1;
    for (let i = 0; i < levels; i++) value = { n: value };
    return value;
  };

  it('measures values as JSON without recursing, whatever the depth', () => {
    expect(jsonShape({ a: [1, 'é'], b: null })).toEqual({
      bytes: JSON.stringify({ a: [1, 'é'], b: null }).length + 1,
      depth: 2,
    });
    expect(jsonShape(nested(9000))).toEqual({ bytes: 9000 * 6 + 1, depth: 9000 });
  });

  it.each([
    [
      'values over 512 KiB',
      chart({ values: { blob: 'x'.repeat(1.2 * 1024 * 1024) } }),
      { path: 'spec.values', message: 'Helm values must be at most 512 KiB as JSON; these are 1.2 MiB' },
    ],
    [
      'values nested 200 levels',
      chart({ values: nested(200) }),
      { path: 'spec.values', message: 'Helm values must nest at most 32 levels deep; these nest 200' },
    ],
    [
      'a timeout of 10^12 seconds',
      chart({ wait: { timeout: 1e12 } }),
      { path: 'spec.wait.timeout', message: 'wait.timeout must be at most 30 days (2592000 s)' },
    ],
    [
      'a duration string of 10^12 seconds',
      chart({ canary: { steps: [{ percent: 10, sleep: '277777778h' }] } }),
      { path: 'spec.canary.steps[0].sleep', message: 'sleep must be at most 30 days (2592000 s)' },
    ],
    [
      'a label key with a NUL in it',
      chart({ wait: { labels: { 'app\u0000': 'web' } } }),
      { path: 'spec.wait.labels.app\u0000', message: '"app\\u0000" is not a Kubernetes label key' },
    ],
    [
      'a label value with a newline',
      chart({ wait: { labels: { app: 'web\n' } } }),
      { path: 'spec.wait.labels.app', message: '"web\\n" is not a Kubernetes label value' },
    ],
    [
      'a git reference that helm or git would read as an option',
      chart({
        source: { type: 'git', location: 'https://git.example.com/c.git', reference: '--upload-pack=sh' },
      }),
      {
        path: 'spec.source.reference',
        message: 'must not start with "-" ("--upload-pack=sh" would be read as an option)',
      },
    ],
    [
      'a location with a control character',
      chart({ source: { type: 'local', location: 'charts/web\r\n' } }),
      { path: 'spec.source.location', message: 'must not contain control characters' },
    ],
  ])('refuses %s, naming the field', (_name, doc, problem) => {
    expect(problemsOf(doc)).toContainEqual(problem);
  });

  it('never repeats a megabyte of hostile input in a problem', () => {
    const key = 'k'.repeat(1024 * 1024);
    const problems = [
      ...problemsOf(chart({ wait: { labels: { [key]: 'x' } } })),
      ...problemsOf({
        apiVersion: 'armada.airshipit.org/v1alpha1',
        kind: 'ArmadaManifest',
        metadata: { name: 'm' },
        spec: { release_prefix: 'p', chart_groups: ['a'], approval: { before: [key] } },
      }),
    ];
    expect(problems).toHaveLength(2);
    for (const p of problems) expect(p.path.length + p.message.length).toBeLessThan(300);
  });

  it('takes a timeout of exactly 30 days', () => {
    expect(problemsOf(chart({ wait: { timeout: 30 * 24 * 3600 } }))).toEqual([]);
  });
});
