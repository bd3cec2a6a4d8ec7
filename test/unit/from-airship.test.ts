import { convertAirshipDocuments, isAirshipDocument, type ConvertedDocument } from '../../api/from-airship';

/** An Armada document of `schema`, named `name`, its fields `data`. */
const armada = (schema: string, data: unknown, name = 'web') => ({
  schema,
  metadata: { schema: 'metadata/Document/v1', name },
  data,
});
const V1 = {
  chart_name: 'hello',
  release: 'web',
  namespace: 'apps',
  source: { type: 'local', location: 'charts/hello', subpath: '.' },
};
const V2 = { release: 'web', namespace: 'apps', source: { type: 'local', location: 'charts/hello' } };
const chartV1 = (data: object = {}) => armada('armada/Chart/v1', { ...V1, ...data });
const chartV2 = (data: object = {}) => armada('armada/Chart/v2', { ...V2, ...data });
const operator = (data: object = {}, metadata: object = {}) => ({
  apiVersion: 'armada.airshipit.org/v1',
  kind: 'ArmadaChart',
  metadata: { name: 'site-web', namespace: 'apps', ...metadata },
  data: {
    namespace: 'apps',
    source: { type: 'tar', location: 'https://charts.example.com/hello.tgz' },
    ...data,
  },
});

const convert = (...values: unknown[]): ConvertedDocument[] =>
  convertAirshipDocuments(values.map((value, i) => ({ doc: i + 1, value })));
/** The spec a document converts to; fails the test when it has problems. */
const specOf = (value: unknown) => {
  const [converted] = convert(value);
  expect(converted.problems).toEqual([]);
  return converted.object?.spec;
};
const problemsOf = (...values: unknown[]) => convert(...values).flatMap((c) => c.problems);

/** Armada v2's wait when a chart names no resources: every type, Armada's order. */
const V2_DEFAULT_WAIT = ['job', 'daemonset', 'statefulset', 'deployment', 'pod'].map((type) => ({ type }));

describe('which documents are airship’s', () => {
  it.each([
    ['an Armada chart', chartV2(), true],
    ['an Armada document of a schema version it does not know', armada('armada/Chart/v3', {}), true],
    ["an armada-operator's ArmadaChart", operator(), true],
    ['one of ours', { apiVersion: 'armada.airshipit.org/v1alpha1', kind: 'ArmadaChart' }, false],
    ['a Deckhand schema', { schema: 'deckhand/DataSchema/v1' }, false],
    ['a Namespace', { apiVersion: 'v1', kind: 'Namespace' }, false],
  ])('%s: %s', (_, value, airship) => expect(isAirshipDocument(value)).toBe(airship));
});

describe('manifests and groups', () => {
  it.each(['v1', 'v2'])(
    'an armada/Manifest/%s becomes an ArmadaManifest named as the document',
    (version) => {
      const [converted] = convert(
        armada(`armada/Manifest/${version}`, { release_prefix: 'site', chart_groups: ['a', 'b'] }, 'site'),
      );
      expect(converted).toMatchObject({
        label: `armada/Manifest/${version} site`,
        problems: [],
        object: {
          apiVersion: 'armada.airshipit.org/v1alpha1',
          kind: 'ArmadaManifest',
          metadata: { name: 'site' },
          spec: { release_prefix: 'site', chart_groups: ['a', 'b'] },
        },
      });
    },
  );

  it('an armada/ChartGroup keeps chart_group, sequenced and description, and drops data.name (Armada reads metadata.name)', () => {
    const group = armada(
      'armada/ChartGroup/v2',
      { name: 'other', description: 'd', sequenced: true, chart_group: ['a', 'b'] },
      'platform',
    );
    expect(convert(group)[0].object).toEqual({
      apiVersion: 'armada.airshipit.org/v1alpha1',
      kind: 'ArmadaChartGroup',
      metadata: { name: 'platform' },
      spec: { chart_group: ['a', 'b'], sequenced: true, description: 'd' },
    });
  });

  it('a v1 group’s test_charts is the test default of the charts it lists', () => {
    const group = armada('armada/ChartGroup/v1', { test_charts: false, chart_group: ['web', 'api'] }, 'apps');
    const [, web, api, other] = convert(
      group,
      chartV1(),
      chartV2({ test: { enabled: true } }),
      armada('armada/Chart/v2', V2, 'other'),
    );
    expect(web.object?.spec).toMatchObject({ test: { enabled: false } });
    expect(api.object?.spec).toMatchObject({ test: { enabled: true } }); // the chart's own setting wins
    expect(other.object?.spec).toMatchObject({ test: { enabled: true } }); // in no group: Armada's default
  });

  it('refuses a chart two groups disagree on testing, unless it says itself', () => {
    const groups = [true, false].map((test_charts, i) =>
      armada('armada/ChartGroup/v1', { test_charts, chart_group: ['web'] }, `g${i}`),
    );
    expect(problemsOf(...groups, chartV1())).toEqual([
      {
        path: 'data.test',
        message:
          'not supported: its ChartGroups disagree on testing it (g0: test_charts true, g1: test_charts false): set test.enabled',
      },
    ]);
    expect(problemsOf(...groups, chartV1({ test: false }))).toEqual([]);
  });
});

describe('armada/Chart: what maps onto our fields', () => {
  it('a v1 chart keeps chart_name and turns on helm tests and Helm’s own wait, as Armada v1 does', () => {
    expect(specOf(chartV1({ values: { a: 1 } }))).toEqual({
      chart_name: 'hello',
      release: 'web',
      namespace: 'apps',
      source: { type: 'local', location: 'charts/hello', subpath: '.' },
      values: { a: 1 },
      wait: { native: { enabled: true } },
      test: { enabled: true },
    });
  });

  it('a v2 chart tests by default, waits for every resource type and not with Helm’s own wait', () => {
    expect(specOf(chartV2())).toEqual({
      release: 'web',
      namespace: 'apps',
      source: { type: 'local', location: 'charts/hello' },
      wait: { resources: V2_DEFAULT_WAIT },
      test: { enabled: true },
    });
  });

  it.each([
    ['v1 timeout becomes wait.timeout', chartV1({ timeout: 60 }), { timeout: 60, native: { enabled: true } }],
    [
      'v1 wait.timeout wins over timeout, as in Armada',
      chartV1({ timeout: 60, wait: { timeout: 30 } }),
      { timeout: 30, native: { enabled: true } },
    ],
    [
      'v1 wait.native off is kept',
      chartV1({ wait: { native: { enabled: false } } }),
      { native: { enabled: false } },
    ],
    [
      'v1 wait.resources keep their order; wait.labels are merged under each one’s labels',
      chartV1({
        wait: {
          labels: { app: 'web', tier: 'a' },
          resources: [{ type: 'deployment', labels: { tier: 'b' } }, { type: 'job' }],
        },
      }),
      {
        labels: { app: 'web', tier: 'a' },
        resources: [
          { type: 'deployment', labels: { app: 'web', tier: 'b' } },
          { type: 'job', labels: { app: 'web', tier: 'a' } },
        ],
        native: { enabled: true },
      },
    ],
    [
      'v2 wait.labels go to each of the default resource types',
      chartV2({ wait: { labels: { app: 'web' } } }),
      { labels: { app: 'web' }, resources: V2_DEFAULT_WAIT.map((r) => ({ ...r, labels: { app: 'web' } })) },
    ],
    [
      'a v2 map drops a type mapped to false, replaces one with its settings, and lists several for one',
      chartV2({
        wait: {
          resources: {
            job: false,
            pod: { labels: { app: 'web' }, required: false },
            deployment: { min_ready: '100%' },
            daemonset: [{ labels: { c: 'one' } }, { labels: { c: 'two' }, allow_async_updates: true }],
          },
        },
      }),
      {
        resources: [
          { type: 'daemonset', labels: { c: 'one' } },
          { type: 'daemonset', labels: { c: 'two' } },
          { type: 'statefulset' },
          { type: 'deployment', min_ready: '100%' },
          { type: 'pod', labels: { app: 'web' } },
        ],
      },
    ],
    [
      'min_ready is carried as written, a percentage or a count, for each of the controllers Armada counts it for',
      chartV2({
        wait: {
          resources: [
            { type: 'deployment', min_ready: '50%' },
            { type: 'statefulset', min_ready: 2 },
            { type: 'daemonset', labels: { app: 'agent' }, min_ready: '80%' },
          ],
        },
      }),
      {
        resources: [
          { type: 'deployment', min_ready: '50%' },
          { type: 'statefulset', min_ready: 2 },
          { type: 'daemonset', labels: { app: 'agent' }, min_ready: '80%' },
        ],
      },
    ],
    [
      'a v1 min_ready is carried too',
      chartV1({ wait: { resources: [{ type: 'deployment', min_ready: 2 }] } }),
      { resources: [{ type: 'deployment', min_ready: 2 }], native: { enabled: true } },
    ],
    [
      'a v2 map’s min_ready for a type is carried',
      chartV2({ wait: { resources: { job: false, pod: false, deployment: { min_ready: '50%' } } } }),
      {
        resources: [{ type: 'daemonset' }, { type: 'statefulset' }, { type: 'deployment', min_ready: '50%' }],
      },
    ],
    ['a v2 empty list waits for nothing', chartV2({ wait: { resources: [] } }), { resources: [] }],
    [
      'a v2 list replaces the default',
      chartV2({
        wait: { timeout: 90, resources: [{ type: 'pod', required: false }], native: { enabled: true } },
      }),
      { timeout: 90, resources: [{ type: 'pod' }], native: { enabled: true } },
    ],
  ])('%s', (_, doc, wait) => {
    expect((specOf(doc) as { wait: object }).wait).toEqual(wait);
  });

  it.each([
    ['v1 test: false', chartV1({ test: false }), { enabled: false }],
    ['v1 test: true', chartV1({ test: true }), { enabled: true }],
    [
      'test.timeout, and options.cleanup accepted with no effect (Armada ignores it since Helm 3)',
      chartV2({ test: { timeout: 60, options: { cleanup: true } } }),
      { enabled: true, timeout: 60 },
    ],
    ['test.enabled: false', chartV2({ test: { enabled: false } }), { enabled: false }],
  ])('%s', (_, doc, test) => expect((specOf(doc) as { test: object }).test).toEqual(test));

  it.each([
    [
      'git without a reference fetches master, as Armada does',
      { type: 'git', location: 'https://git.example.com/charts.git', subpath: 'web' },
      { type: 'git', location: 'https://git.example.com/charts.git', subpath: 'web', reference: 'master' },
    ],
    [
      'git with a reference, over SSH with auth_method SSH (the worker’s own SSH setup)',
      {
        type: 'git',
        location: 'ssh://git@git.example.com/charts.git',
        reference: 'v1.2',
        auth_method: 'SSH',
      },
      { type: 'git', location: 'ssh://git@git.example.com/charts.git', reference: 'v1.2' },
    ],
    [
      'a tar source with a subpath',
      { type: 'tar', location: 'https://charts.example.com/all.tgz', subpath: 'web' },
      { type: 'tar', location: 'https://charts.example.com/all.tgz', subpath: 'web' },
    ],
    [
      'a reference outside git is dropped (Armada ignores it)',
      { type: 'local', location: 'charts/hello', reference: 'master' },
      { type: 'local', location: 'charts/hello' },
    ],
    [
      'a tar source through a proxy keeps its proxy_server',
      { type: 'tar', location: 'https://charts.example.com/all.tgz', proxy_server: 'http://proxy:3128' },
      { type: 'tar', location: 'https://charts.example.com/all.tgz', proxy_server: 'http://proxy:3128' },
    ],
    [
      'a git source through a proxy with a login keeps its proxy_server',
      { type: 'git', location: 'https://g.example.com/x.git', proxy_server: 'http://u:p@proxy:3128' },
      {
        type: 'git',
        location: 'https://g.example.com/x.git',
        reference: 'master',
        proxy_server: 'http://u:p@proxy:3128',
      },
    ],
  ])('source: %s', (_, source, expected) =>
    expect(specOf(chartV2({ source }))).toMatchObject({ source: expected }),
  );

  it('source: a local chart’s proxy_server is dropped (Armada fetches nothing for it; ours refuses it)', () => {
    const source = { type: 'local', location: 'charts/hello', proxy_server: 'http://proxy:3128' };
    expect((specOf(chartV2({ source })) as { source: object }).source).toEqual({
      type: 'local',
      location: 'charts/hello',
    });
  });

  it.each([
    [
      'v2 upgrade.options.force and pre.delete of jobs and pods (their names only label Armada’s log)',
      chartV2({
        upgrade: {
          options: { force: true, no_hooks: false, recreate_pods: false },
          pre: { delete: [{ name: 'x', type: 'job', labels: { app: 'web' } }, { type: 'pod' }] },
        },
      }),
      {
        options: { force: true },
        pre: { delete: [{ type: 'job', labels: { app: 'web' } }, { type: 'pod' }] },
      },
    ],
    [
      'v1 pre.delete of jobs: their CronJobs too, as Armada v1 deletes them; cronjobs alone in both',
      chartV1({
        upgrade: {
          no_hooks: false,
          pre: { delete: [{ type: 'job', labels: { app: 'web' } }, { type: 'cronjob' }] },
        },
      }),
      {
        pre: {
          delete: [
            { type: 'job', labels: { app: 'web' } },
            { type: 'cronjob', labels: { app: 'web' } },
            { type: 'cronjob' },
          ],
        },
      },
    ],
    [
      'v1 upgrade with no_hooks false, and pre.create and post that Armada ignores',
      chartV1({
        upgrade: {
          no_hooks: false,
          pre: { create: [{ type: 'pod' }], delete: [{ type: 'pod', labels: { a: 'b' } }] },
          post: { create: [{ type: 'pod' }] },
        },
        install: { no_hooks: false },
      }),
      { pre: { delete: [{ type: 'pod', labels: { a: 'b' } }] } },
    ],
  ])('%s', (_, doc, upgrade) => expect((specOf(doc) as { upgrade: object }).upgrade).toEqual(upgrade));

  it('upgrade with nothing of ours left in it is left out', () => {
    expect(specOf(chartV1({ upgrade: { no_hooks: false } }))).not.toHaveProperty('upgrade');
  });

  it('protected and delete.timeout carry over as they are', () => {
    expect(
      specOf(chartV2({ protected: { continue_processing: true }, delete: { timeout: 30 } })),
    ).toMatchObject({
      protected: { continue_processing: true },
      delete: { timeout: 30 },
    });
  });
});

describe('armada/Chart dependencies, as Armada builds them', () => {
  const group = (...charts: string[]) => ({
    schema: 'armada/ChartGroup/v2',
    metadata: { name: 'services' },
    data: { chart_group: charts },
  });
  const named = (name: string, data: Record<string, unknown>) => ({ ...chartV2(data), metadata: { name } });
  const specs = (...docs: unknown[]) =>
    convert(...docs).map((d) => (d.object?.spec ?? {}) as Record<string, unknown>);

  it('carry the list as written: names, or an empty list that replaces the vendored subcharts', () => {
    const [listed, empty, absent] = specs(
      chartV2({ dependencies: ['helm-toolkit'] }),
      chartV2({ dependencies: [] }),
      chartV2(),
    );
    expect([listed.dependencies, empty.dependencies, absent.dependencies]).toEqual([
      ['helm-toolkit'],
      [],
      undefined,
    ]);
  });

  it('a chart no group lists but another depends on is dependency_only; a grouped one is not', () => {
    const [, toolkit, web, db] = specs(
      group('web', 'db'),
      named('helm-toolkit', {}),
      named('web', { dependencies: ['helm-toolkit', 'db'] }),
      named('db', { dependencies: ['helm-toolkit'] }),
    );
    expect([toolkit.dependency_only, web.dependency_only, db.dependency_only]).toEqual([
      true,
      undefined,
      undefined,
    ]);
  });
});

describe('armada/Chart: what is refused, naming the field and why', () => {
  it.each([
    [
      'an auth method other than SSH',
      chartV2({ source: { ...V2.source, auth_method: 'token' } }),
      'data.source.auth_method',
      /with SSH only, not "token"/,
    ],
    [
      'a source type Armada does not have',
      chartV2({ source: { type: 'repo', location: 'https://r' } }),
      'data.source.type',
      /local, tar, git/,
    ],
    [
      'min_ready on a pod wait, which Armada refuses too',
      chartV2({ wait: { resources: [{ type: 'pod', min_ready: '50%' }] } }),
      'data.wait.resources[0].min_ready',
      /Armada takes min_ready on deployment, daemonset and statefulset waits only/,
    ],
    [
      'min_ready on a v1 job wait, even "100%"',
      chartV1({ wait: { resources: [{ type: 'job', min_ready: '100%' }] } }),
      'data.wait.resources[0].min_ready',
      /refuses a chart with one on a pod or job wait/,
    ],
    [
      'min_ready on the pods of a v2 map',
      chartV2({ wait: { resources: { pod: { min_ready: 2 } } } }),
      'data.wait.resources.pod.min_ready',
      /deployment, daemonset and statefulset waits only/,
    ],
    [
      'required: true',
      chartV2({ wait: { resources: { pod: { required: true } } } }),
      'data.wait.resources.pod.required',
      /counts a type it finds nothing of as ready/,
    ],
    [
      'allow_async_updates: false',
      chartV2({ wait: { resources: { statefulset: [{ allow_async_updates: false }] } } }),
      'data.wait.resources.statefulset[0].allow_async_updates',
      /OnDelete or partitioned update as far as it rolls/,
    ],
    [
      'a resource type to wait for that we have not',
      chartV2({ wait: { resources: { cronjob: {} } } }),
      'data.wait.resources.cronjob',
      /waits for deployment, daemonset, statefulset, pod, job only, not "cronjob"/,
    ],
    [
      'v1 upgrade.no_hooks: true',
      chartV1({ upgrade: { no_hooks: true } }),
      'data.upgrade.no_hooks',
      /skips hooks on upgrades only.* skips them on the first install too/,
    ],
    [
      'v2 upgrade.options.no_hooks: true',
      chartV2({ upgrade: { options: { no_hooks: true } } }),
      'data.upgrade.options.no_hooks',
      /--no-hooks/,
    ],
    [
      'recreate_pods: true',
      chartV2({ upgrade: { options: { recreate_pods: true } } }),
      'data.upgrade.options.recreate_pods',
      /Helm 2's --recreate-pods/,
    ],
    [
      'v1 upgrade.pre.update',
      chartV1({ upgrade: { no_hooks: false, pre: { update: [{ type: 'daemonset' }] } } }),
      'data.upgrade.pre.update',
      /deletes DaemonSets and creates them again/,
    ],
    [
      'a pre-upgrade delete of a type Armada deletes nothing of',
      chartV2({ upgrade: { pre: { delete: [{ type: 'deployment' }] } } }),
      'data.upgrade.pre.delete[0].type',
      /Armada deletes pods, jobs and cronjobs only/,
    ],
  ])('%s', (_, doc, path, message) => {
    const problems = problemsOf(doc);
    expect(problems).toEqual([{ path, message: expect.stringMatching(message) }]);
    expect(problems[0].message).toMatch(/^not supported: /);
  });

  it.each([
    [
      'a field v2 dropped',
      chartV2({ chart_name: 'hello' }),
      'data.chart_name',
      'not a field of armada/Chart/v2',
    ],
    ['a field no version has', chartV1({ foo: 1 }), 'data.foo', 'not a field of armada/Chart/v1'],
    [
      'a key beside schema, metadata and data',
      { ...chartV2(), spec: {} },
      'spec',
      'not a field of an Armada document',
    ],
    [
      'v1 upgrade without no_hooks, which v1 requires',
      chartV1({ upgrade: {} }),
      'data.upgrade.no_hooks',
      'required',
    ],
    [
      'v1 source without subpath',
      chartV1({ source: { type: 'local', location: 'x' } }),
      'data.source.subpath',
      'required',
    ],
    [
      'a test that is neither a boolean nor an object',
      chartV1({ test: 'yes' }),
      'data.test',
      'must be true, false or an object',
    ],
    [
      'wait.resources in neither of v2’s shapes',
      chartV2({ wait: { resources: 'all' } }),
      'data.wait.resources',
      'must be a list of resources, or a map of resource type to a resource, a list of them or false',
    ],
    [
      'a schema version armada-temporal does not read',
      armada('armada/Chart/v3', V2),
      'schema',
      'armada-temporal reads armada/Chart, armada/ChartGroup and armada/Manifest documents of v1 and v2',
    ],
    [
      'a document Deckhand has yet to render',
      { ...chartV2(), metadata: { name: 'web', substitutions: [{ src: {}, dest: {} }] } },
      'metadata.substitutions',
      expect.stringMatching(/^not supported: Deckhand has not rendered this document yet/),
    ],
    [
      'an abstract Deckhand document',
      { ...chartV2(), metadata: { name: 'web', layeringDefinition: { abstract: true, layer: 'global' } } },
      'metadata.layeringDefinition.abstract',
      expect.stringMatching(/^not supported: an abstract Deckhand document/),
    ],
  ])('%s', (_, doc, path, message) => expect(problemsOf(doc)).toEqual([{ path, message }]));

  it('names the document: schema and metadata.name', () => {
    expect(convert(chartV2({ dependencies: [] }))[0].label).toBe('armada/Chart/v2 web');
  });
});

describe("the armada-operator's ArmadaChart (armada.airshipit.org/v1)", () => {
  it('is one release named after the object, from a .tgz, tests off and the operator’s default wait', () => {
    const [converted] = convert(operator({ chart_name: 'hello', release: 'web', values: { a: 1 } }));
    expect(converted.problems).toEqual([]);
    expect(converted.label).toBe('armada.airshipit.org/v1 ArmadaChart site-web');
    expect(converted.object).toEqual({
      apiVersion: 'armada.airshipit.org/v1alpha1',
      kind: 'ArmadaChart',
      metadata: { name: 'site-web', namespace: 'apps' },
      spec: {
        chart_name: 'hello',
        release: 'site-web',
        namespace: 'apps',
        source: { type: 'tar', location: 'https://charts.example.com/hello.tgz' },
        values: { a: 1 },
      },
    });
  });

  it('exported from a cluster, keeps name, namespace, labels and annotations, and drops what the server and operator set', () => {
    const labels = { team: 'web', 'armada.airshipit.org/release-name': 'web' };
    const [converted] = convert({
      ...operator(),
      metadata: {
        name: 'site-web',
        namespace: 'apps',
        labels,
        annotations: {
          'kubectl.kubernetes.io/last-applied-configuration': '{"apiVersion":"armada.airshipit.org/v1"}',
          'example.com/owner': 'team-web',
        },
        uid: '0b3c5b1e-7d4a-4f5e-9c1e-2a9f8d6b4c21',
        resourceVersion: '48213',
        generation: 3,
        creationTimestamp: '2026-01-05T10:00:00Z',
        finalizers: ['finalizers.armada.airshipit.org'],
        ownerReferences: [{ apiVersion: 'v1', kind: 'ConfigMap', name: 'site', uid: 'f00' }],
        managedFields: [{ manager: 'armada-controller', operation: 'Update', fieldsType: 'FieldsV1' }],
      },
      status: { observedGeneration: 3, helmStatus: 'deployed', conditions: [] },
    });
    expect(converted.problems).toEqual([]);
    expect(converted.object?.metadata).toEqual({
      name: 'site-web',
      namespace: 'apps',
      labels,
      annotations: { 'example.com/owner': 'team-web' },
    });
  });

  it('leaves out labels and annotations it has none of (the last-applied annotation alone counts as none)', () => {
    const annotations = { 'kubectl.kubernetes.io/last-applied-configuration': '{}' };
    const [converted] = convert({ ...operator(), metadata: { name: 'web', labels: {}, annotations } });
    expect(converted.object?.metadata).toEqual({ name: 'web' });
  });

  it.each([
    [
      'helm test gets the wait’s timeout',
      { test: { enabled: true }, wait: { timeout: 120 } },
      { test: { enabled: true, timeout: 120 }, wait: { timeout: 120 } },
    ],
    [
      'helm test without a wait timeout gets the operator’s 900 s',
      { test: { enabled: true } },
      { test: { enabled: true, timeout: 900 } },
    ],
    [
      'wait.labels merged into each resource; the resource’s namespace may be the release’s own',
      { wait: { labels: { app: 'web' }, resources: [{ type: 'deployment', namespace: 'apps' }] } },
      { wait: { labels: { app: 'web' }, resources: [{ type: 'deployment', labels: { app: 'web' } }] } },
    ],
    [
      'min_ready carried: a percentage as written, a count written as a string as the count it means',
      {
        wait: {
          resources: [
            { type: 'deployment', min_ready: '50%' },
            { type: 'statefulset', min_ready: '2' },
            { type: 'daemonset', min_ready: '' },
          ],
        },
      },
      {
        wait: {
          resources: [
            { type: 'deployment', min_ready: '50%' },
            { type: 'statefulset', min_ready: 2 },
            { type: 'daemonset' },
          ],
        },
      },
    ],
    [
      'Helm’s own wait only with a timeout, as the operator passes --wait',
      { wait: { timeout: 60, native: { enabled: true } } },
      { wait: { timeout: 60, native: { enabled: true } } },
    ],
    ['no Helm wait without a timeout', { wait: { timeout: 0, native: { enabled: true } } }, {}],
    [
      'pre-upgrade deletes: no type is jobs; deployments and cronjobs too',
      {
        upgrade: {
          pre: {
            cleanup: false,
            update_crd: false,
            delete: [{ labels: { a: 'b' } }, { type: 'deployment' }, { type: 'cronjob' }],
          },
        },
      },
      {
        upgrade: {
          pre: {
            delete: [{ type: 'job', labels: { a: 'b' } }, { type: 'deployment' }, { type: 'cronjob' }],
          },
        },
      },
    ],
    [
      'the release namespace defaults to the object’s, where the operator installs it',
      { namespace: undefined },
      { namespace: 'apps' },
    ],
  ])('%s', (_, data, expected) => {
    const [converted] = convert({ ...operator(data), status: { helmStatus: 'deployed' } });
    expect(converted.problems).toEqual([]);
    expect(converted.object?.spec).toMatchObject(expected);
    if (!('wait' in expected)) expect(converted.object?.spec).not.toHaveProperty('wait');
  });

  it.each([
    [
      'a source type other than tar',
      { source: { type: 'git', location: 'x' } },
      'data.source.type',
      /downloads every chart as a .tgz/,
    ],
    [
      'a release namespace other than the object’s (where the operator installs it)',
      { namespace: 'other' },
      'data.namespace',
      /installs the release in the object's namespace "apps" but waits and deletes in "other"/,
    ],
    [
      'a wait in another namespace',
      { wait: { resources: [{ type: 'pod', namespace: 'kube-system' }] } },
      'data.wait.resources[0].namespace',
      /in the release's namespace only/,
    ],
    [
      'a wait for a condition',
      { wait: { resources: [{ type: 'pod', condition: 'Ready' }] } },
      'data.wait.resources[0].condition',
      /not for a condition/,
    ],
    [
      'a delay before the wait',
      { wait: { resources: [{ type: 'pod', delay: 5 }] } },
      'data.wait.resources[0].delay',
      /no delay before it/,
    ],
    [
      'a wait for a kind we have not',
      { wait: { resources: [{ type: 'tigerastatus' }] } },
      'data.wait.resources[0].type',
      /not "tigerastatus"/,
    ],
    [
      'min_ready on a pod wait, which the operator ignores',
      { wait: { resources: [{ type: 'pod', min_ready: '50%' }] } },
      'data.wait.resources[0].min_ready',
      /ignores min_ready on a pod or job wait and waits for all of them/,
    ],
    [
      'pre-upgrade cleanup',
      { upgrade: { pre: { cleanup: true } } },
      'data.upgrade.pre.cleanup',
      /does not uninstall it and install it again/,
    ],
    [
      'pre-upgrade update_crd',
      { upgrade: { pre: { update_crd: true } } },
      'data.upgrade.pre.update_crd',
      /crds\//,
    ],
    [
      'a pre-upgrade delete of another type',
      { upgrade: { pre: { delete: [{ type: 'secret' }] } } },
      'data.upgrade.pre.delete[0].type',
      /jobs, pods, cronjobs and deployments only/,
    ],
  ])('refuses %s', (_, data, path, message) =>
    expect(problemsOf(operator(data))).toEqual([{ path, message: expect.stringMatching(message) }]),
  );

  it('refuses what its CRD does not define', () => {
    expect(problemsOf({ ...operator(), status: {}, spec: {} })).toEqual([
      { path: 'spec', message: "not a field of the armada-operator's ArmadaChart" },
    ]);
  });

  it('names our own apiVersion for an ArmadaChart with a spec and no data under the operator’s', () => {
    const { apiVersion, kind, metadata } = operator();
    expect(problemsOf({ apiVersion, kind, metadata, spec: {} })).toEqual([
      {
        path: 'spec',
        message:
          "not a field of the armada-operator's ArmadaChart, which keeps its fields under data; armada-temporal's ArmadaChart, with a spec, is armada.airshipit.org/v1alpha1",
      },
    ]);
  });

  it('asks for a namespace when it has none', () => {
    expect(problemsOf(operator({ namespace: undefined }, { namespace: undefined }))).toEqual([
      { path: 'data.namespace', message: expect.stringMatching(/^required: /) },
    ]);
  });
});

describe('where a field of ours came from in the document', () => {
  it.each([
    ['a field of the same name', chartV2(), 'spec.source.location', 'data.source.location'],
    ['v1 timeout, read as wait.timeout', chartV1({ timeout: 5 }), 'spec.wait.timeout', 'data.timeout'],
    [
      'an entry of a v2 wait map',
      chartV2({
        wait: {
          resources: { job: false, daemonset: false, statefulset: false, deployment: { labels: { a: 'b' } } },
        },
      }),
      'spec.wait.resources[0].labels.a',
      'data.wait.resources.deployment.labels.a',
    ],
    ['the metadata', chartV2(), 'metadata.name', 'metadata.name'],
    ["an operator chart's release, its name", operator(), 'spec.release', 'metadata.name'],
  ])('%s', (_, doc, ours, theirs) => expect(convert(doc)[0].sourcePath(ours)).toBe(theirs));
});
