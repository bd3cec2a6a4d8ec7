import { kinds, type KindName } from '../../api/kinds';
import { ClaimIndex } from '../../bridge/claims';
import { releaseHolders, standaloneSuspects } from '../../bridge/standalone';
import { SETTLE_MS, SpecChanges, planKeys } from '../../bridge/settle';
import { ranForAnother } from '../../core/bridge/decide-run';
import {
  chartRelease,
  claimOf,
  describeProblems,
  gone,
  ownedKeys,
  ownerOf,
  sameForReconcile,
  validSpec,
  viewOf,
  type Cache,
  type ObjectView,
  type ViewCache,
  type Views,
} from '../../bridge/view';
import type { ArmadaObject } from '../../bridge/watch';

const API_VERSION = 'armada.airshipit.org/v1alpha1';

function object<K extends KindName>(
  kind: K,
  name: string,
  spec: Record<string, unknown>,
  metadata: Partial<ArmadaObject['metadata']> = {},
  status?: unknown,
): ArmadaObject & { kind: K } {
  return {
    apiVersion: API_VERSION,
    kind,
    metadata: { name, namespace: 'default', ...metadata },
    spec,
    ...(status !== undefined && { status }),
  };
}

const chart = (name: string, spec: Record<string, unknown> = {}, metadata = {}) =>
  object(
    'ArmadaChart',
    name,
    { release: name, namespace: 'apps', source: { type: 'local', location: 'charts/hello' }, ...spec },
    metadata,
  );
const group = (name: string, charts: string[], metadata = {}) =>
  object('ArmadaChartGroup', name, { chart_group: charts }, metadata);
const deployer = (name: string) =>
  object('Deployer', name, {
    type: 'canary',
    deployment: { name, namespace: 'web', image: 'registry.test/app', version: 'v1', replicas: 2 },
    steps: [{ percent: 50 }],
  });
const manifest = (name: string, prefix: string, groups: string[]) =>
  object('ArmadaManifest', name, { release_prefix: prefix, chart_groups: groups });

const view = <K extends KindName>(obj: ArmadaObject & { kind: K }) => viewOf(obj.kind, obj);

/** A cache of views, as the bridge's watches hold them. */
function cacheOf(objects: ArmadaObject[]): Views {
  const views = objects.map((o) => viewOf(o.kind as KindName, o));
  return <K extends KindName>(kind: K): ViewCache<K> => {
    const ofKind = views.filter((v) => v.kind === kind) as ObjectView<K>[];
    return {
      get: (namespace, name) => ofKind.find((v) => v.namespace === namespace && v.name === name),
      list: (namespace) => ofKind.filter((v) => namespace === undefined || v.namespace === namespace),
    };
  };
}

/** The views and the claims index, kept as the bridge's watch events keep it (each object added). */
function bridgeCacheOf(objects: ArmadaObject[]): Cache & { claims: ClaimIndex } {
  const views = cacheOf(objects);
  const claims = new ClaimIndex();
  for (const kind of Object.keys(kinds) as KindName[])
    for (const cached of views(kind).list()) claims.observe(cached, 'add');
  return { objects: views, claims };
}

describe('viewOf', () => {
  it('a valid chart: its spec parsed once with defaults filled in, and what the bridge reads of it', () => {
    const web = viewOf(
      'ArmadaChart',
      chart(
        'web',
        {},
        { generation: 3, uid: 'u-1', resourceVersion: '42', creationTimestamp: new Date(1000) },
      ),
    );
    expect(web).toMatchObject({
      kind: 'ArmadaChart',
      namespace: 'default',
      name: 'web',
      key: 'ArmadaChart/default/web',
      uid: 'u-1',
      resourceVersion: '42',
      generation: 3,
      createdAt: 1000,
      deleting: false,
      finalizers: [],
      lists: [],
      release: { namespace: 'apps', release: 'web' },
      canary: false,
      action: undefined,
      statedInvalid: undefined,
    });
    expect(web.parsed.valid && web.parsed.spec).toMatchObject({ release: 'web', target_state: 'deployed' });
    expect(validSpec(web).namespace).toBe('apps');
  });

  it('an invalid chart: each problem names its field and reason; the release it names is still read', () => {
    const bad = viewOf('ArmadaChart', chart('bad', { source: undefined, canary: { steps: [] } }));
    expect(bad.parsed.valid).toBe(false);
    const problems = bad.parsed.valid ? [] : bad.parsed.problems;
    expect(problems.map((p) => p.path)).toContain('spec.source');
    expect(describeProblems(problems)).toContain('spec.source: required');
    expect(bad.release).toEqual({ namespace: 'apps', release: 'bad' });
    expect(bad.canary).toBe(true);
    expect(() => validSpec(bad)).toThrow(/^ArmadaChart default\/bad is invalid: .*spec\.source: required/);
  });

  it('a manifest lists its groups and carries its release_prefix; a group lists its charts', () => {
    expect(view(manifest('demo', 'p', ['platform', 'apps']))).toMatchObject({
      lists: ['platform', 'apps'],
      releasePrefix: 'p',
      release: undefined,
    });
    expect(view(group('apps', ['web', 'db']))).toMatchObject({ lists: ['web', 'db'], canary: false });
  });

  it('the action annotation comes with its reason, its gate and who the API server says wrote it, never a field manager', () => {
    const annotated = chart(
      'web',
      {},
      {
        annotations: {
          'armada.airshipit.org/action': 'approve',
          'armada.airshipit.org/reason': 'looks good',
          'armada.airshipit.org/gate': 'step 1 (50 %)',
          'armada.airshipit.org/by': 'system:serviceaccount:team-a:alice',
          'armada.airshipit.org/author': 'bob',
        },
        // A field manager is the client's choice (kubectl annotate --field-manager=...): not read.
        managedFields: [
          {
            manager: 'ops-boss',
            fieldsV1: { 'f:metadata': { 'f:annotations': { 'f:armada.airshipit.org/action': {} } } },
          },
        ],
      },
    );
    expect(view(annotated).action).toEqual({
      command: 'approve',
      reason: 'looks good',
      gate: 'step 1 (50 %)',
      by: 'system:serviceaccount:team-a:alice',
      written: [
        'armada.airshipit.org/action',
        'armada.airshipit.org/reason',
        'armada.airshipit.org/gate',
        'armada.airshipit.org/by',
      ],
    });
    expect(view(annotated).author).toBe('bob');
    const unsigned = chart('web', {}, { annotations: { 'armada.airshipit.org/action': 'pause' } });
    expect(view(unsigned).action).toEqual({ command: 'pause', written: ['armada.airshipit.org/action'] });
    expect(view(unsigned).action?.by).toBeUndefined();
    expect(view(unsigned).author).toBeUndefined();
  });

  it('an undo action comes with the run it names and whether a Deployer goes back at once', () => {
    const undo = chart(
      'web',
      {},
      {
        annotations: {
          'armada.airshipit.org/action': 'undo',
          'armada.airshipit.org/run': '01a2-run',
          'armada.airshipit.org/now': 'true',
        },
      },
    );
    expect(view(undo).action).toEqual({
      command: 'undo',
      run: '01a2-run',
      now: true,
      written: ['armada.airshipit.org/action', 'armada.airshipit.org/run', 'armada.airshipit.org/now'],
    });
  });

  it('an Invalid condition that is True is what the bridge said; a False one says nothing', () => {
    const said = (status: string) =>
      view(
        object(
          'ArmadaChartGroup',
          'g',
          { chart_group: ['web'] },
          {},
          {
            conditions: [{ type: 'Invalid', status, message: 'spec.x: unknown field' }],
          },
        ),
      ).statedInvalid;
    expect(said('True')).toBe('spec.x: unknown field');
    expect(said('False')).toBeUndefined();
  });

  it('an object being deleted is gone only once its finalizer is removed', () => {
    const deleting = (finalizers: string[]) =>
      view(chart('web', {}, { deletionTimestamp: new Date(0), finalizers }));
    expect(deleting(['armada.airshipit.org/finalizer'])).toMatchObject({ deleting: true });
    expect(gone(deleting(['armada.airshipit.org/finalizer']))).toBe(false);
    expect(gone(deleting([]))).toBe(true);
    expect(gone(view(chart('web')))).toBe(false);
  });

  it('an update of the status alone is the same for reconcile; one of the spec, metadata or Invalid condition is not', () => {
    const at = (
      resourceVersion: string,
      status?: unknown,
      metadata: Record<string, unknown> = {},
      spec = {},
    ) =>
      view(
        object(
          'ArmadaChart',
          'web',
          { ...(chart('web').spec as object), ...spec },
          { resourceVersion, ...metadata },
          status,
        ),
      );
    const before = at('1', { phase: 'Deploying' });
    expect(sameForReconcile(before, at('2', { phase: 'Deployed', revision: 3 }))).toBe(true);
    expect(sameForReconcile(before, at('2', { phase: 'Deployed' }, { generation: 2 }))).toBe(false);
    expect(sameForReconcile(before, at('2', undefined, {}, { values: { v: 2 } }))).toBe(false);
    const annotated = { annotations: { 'armada.airshipit.org/action': 'pause' } };
    expect(sameForReconcile(before, at('2', undefined, annotated))).toBe(false);
    expect(sameForReconcile(before, at('2', undefined, { deletionTimestamp: new Date(0) }))).toBe(false);
    const invalid = { conditions: [{ type: 'Invalid', status: 'True', message: 'spec.x: unknown field' }] };
    expect(sameForReconcile(before, at('2', invalid))).toBe(false);
  });
});

describe('relations between cached views', () => {
  const cache = bridgeCacheOf([
    manifest('demo', 'p', ['apps']),
    object('ArmadaChartGroup', 'apps', { chart_group: ['web'], deployers: ['web', 'nginx'] }),
    chart('web'),
    deployer('web'),
    deployer('nginx'),
    deployer('solo'),
    chart('alone'),
    group('leaving', ['lonely'], { deletionTimestamp: new Date(0) }),
    chart('lonely'),
  ]);
  const { objects } = cache;
  const get = <K extends KindName>(kind: K, name: string) => objects(kind).get('default', name)!;

  it('a chart is driven by the group that lists it, and that group by its manifest', () => {
    expect(ownerOf(cache, get('ArmadaChart', 'web'))?.key).toBe('ArmadaChartGroup/default/apps');
    expect(ownerOf(cache, get('ArmadaChartGroup', 'apps'))?.key).toBe('ArmadaManifest/default/demo');
    expect(ownerOf(cache, get('ArmadaChart', 'alone'))).toBeUndefined();
    expect(ownerOf(cache, get('ArmadaManifest', 'demo'))).toBeUndefined();
  });

  it('a Deployer is driven by the group that lists it in deployers, never by a chart of its name', () => {
    expect(ownerOf(cache, get('Deployer', 'nginx'))?.key).toBe('ArmadaChartGroup/default/apps');
    expect(ownerOf(cache, get('Deployer', 'web'))?.key).toBe('ArmadaChartGroup/default/apps');
    expect(ownerOf(cache, get('Deployer', 'solo'))).toBeUndefined();
    const chartsOnly = bridgeCacheOf([group('apps', ['nginx']), deployer('nginx')]);
    expect(ownerOf(chartsOnly, chartsOnly.objects('Deployer').get('default', 'nginx')!)).toBeUndefined();
  });

  it('a group being deleted without its finalizer drives nothing', () => {
    expect(ownerOf(cache, get('ArmadaChart', 'lonely'))).toBeUndefined();
  });

  it('a group being deleted drives its charts until its finalizer is removed', () => {
    const leaving = (finalizers: string[]) =>
      view(group('apps', ['web'], { deletionTimestamp: new Date(0), finalizers }));
    const apps = bridgeCacheOf([group('apps', ['web']), chart('web')]);
    const web = apps.objects('ArmadaChart').get('default', 'web')!;
    apps.claims.observe(leaving(['armada.airshipit.org/finalizer']), 'update');
    expect(ownerOf(apps, web)?.key).toBe('ArmadaChartGroup/default/apps');
    apps.claims.observe(leaving([]), 'update');
    expect(ownerOf(apps, web)).toBeUndefined();
  });

  it('of two groups listing a chart, the one whose manifest holds it drives it; the release is prefixed', () => {
    const at = (minute: number) => ({ creationTimestamp: new Date(Date.UTC(2025, 0, 1, 10, minute)) });
    const rivals = bridgeCacheOf([
      object('ArmadaManifest', 'm', { release_prefix: 'p', chart_groups: ['b'] }, at(0)),
      group('a', ['web'], at(1)),
      group('b', ['web'], at(2)),
      chart('web', {}, at(3)),
    ]);
    const web = rivals.objects('ArmadaChart').get('default', 'web')!;
    expect(ownerOf(rivals, web)?.key).toBe('ArmadaChartGroup/default/b');
    expect(chartRelease(rivals, web)).toEqual({ namespace: 'apps', release: 'p-web' });
  });

  it('a chart in a manifest deploys the prefixed release; a standalone chart, its own', () => {
    expect(chartRelease(cache, get('ArmadaChart', 'web'))).toEqual({ namespace: 'apps', release: 'p-web' });
    expect(chartRelease(cache, get('ArmadaChart', 'alone'))).toEqual({
      namespace: 'apps',
      release: 'alone',
    });
  });

  it('what a manifest or group lists is reconciled again when it goes; a chart lists nothing', () => {
    expect(ownedKeys(get('ArmadaManifest', 'demo'))).toEqual(['ArmadaChartGroup/default/apps']);
    expect(ownedKeys(get('ArmadaChartGroup', 'apps'))).toEqual([
      'ArmadaChart/default/web',
      'Deployer/default/web',
      'Deployer/default/nginx',
    ]);
    expect(ownedKeys(get('Deployer', 'nginx'))).toEqual([]);
    expect(ownedKeys(get('ArmadaChart', 'web'))).toEqual([]);
  });

  it('a claim reads what the object lists and deploys, as rivalClaims takes it', () => {
    expect(claimOf(get('ArmadaManifest', 'demo')).spec).toEqual({
      target_state: undefined,
      release_prefix: 'p',
      chart_groups: ['apps'],
      release: undefined,
      namespace: undefined,
    });
    expect(claimOf(get('ArmadaChart', 'web'))).toMatchObject({
      kind: 'ArmadaChart',
      name: 'web',
      spec: { release: 'web', namespace: 'apps' },
    });
  });

  it('which charts deploy each release now', () => {
    expect(releaseHolders(cache)).toEqual(
      new Map([
        ['apps/p-web', ['ArmadaChart/default/web']],
        ['apps/alone', ['ArmadaChart/default/alone']],
        ['apps/lonely', ['ArmadaChart/default/lonely']],
      ]),
    );
  });
});

describe('standaloneSuspects', () => {
  const objects = cacheOf([
    manifest('demo', 'p', ['platform', 'apps', 'missing']),
    group('platform', ['settings']),
    group('apps', ['web', 'db']),
    chart('settings'),
    chart('web'),
    chart('db'),
  ]);
  const demo = objects('ArmadaManifest').get('default', 'demo')!;

  it('only the listed charts and groups that may have run on their own are looked at', () => {
    const found = standaloneSuspects(
      objects,
      demo,
      new Set(['ArmadaChart/default/web', 'ArmadaChartGroup/default/platform', 'ArmadaChart/default/other']),
    );
    expect(found.groups.map((g) => g.name)).toEqual(['platform']);
    expect(found.charts.map((c) => c.name)).toEqual(['web']);
  });

  it('a chart run started by any of its cached groups counts as a standalone one', () => {
    expect(standaloneSuspects(objects, demo, new Set()).groupRuns).toEqual([
      'ArmadaChartGroup:default/platform',
      'ArmadaChartGroup:default/apps',
    ]);
  });

  it('nothing to look at when none of them ran alone', () => {
    const found = standaloneSuspects(objects, demo, new Set());
    expect([found.groups, found.charts]).toEqual([[], []]);
  });
});

describe('spec changes settle before a manifest or group starts its run', () => {
  const objects = cacheOf([
    manifest('m', 'p', ['apps', 'missing']),
    object('ArmadaChartGroup', 'apps', { chart_group: ['web', 'api'], deployers: ['worker'] }),
    chart('web'),
    chart('api'),
    deployer('worker'),
    chart('elsewhere'),
  ]);
  const m = objects('ArmadaManifest').get('default', 'm')!;

  it('covers the manifest, its groups and what they list (a missing one by its key), nothing else', () => {
    expect(planKeys(objects, m)).toEqual([
      'ArmadaManifest/default/m',
      'ArmadaChartGroup/default/apps',
      'ArmadaChart/default/web',
      'ArmadaChart/default/api',
      'Deployer/default/worker',
      'ArmadaChartGroup/default/missing',
    ]);
  });

  it('waits SETTLE_MS after the latest change of any of them; changes elsewhere do not count', () => {
    const changes = new SpecChanges();
    expect(changes.settlesAt(objects, m, 10_000)).toBeUndefined();
    changes.changed('ArmadaChart/default/web', 10_000);
    changes.changed('Deployer/default/worker', 10_300);
    changes.changed('ArmadaChart/default/elsewhere', 10_900);
    expect(changes.settlesAt(objects, m, 10_400)).toBe(10_300 + SETTLE_MS);
    expect(changes.settlesAt(objects, m, 10_300 + SETTLE_MS)).toBeUndefined();
    changes.changed('ArmadaChartGroup/default/missing', 11_000);
    changes.forget('ArmadaChartGroup/default/missing');
    expect(changes.settlesAt(objects, m, 11_400)).toBeUndefined();
  });
});

describe('ranForAnother: whether a run of the same specs was for an earlier object of the name', () => {
  const created = Date.parse('2026-11-25T12:00:00Z');
  const run = (startedAt: number, uid?: string) => ({ startedAt, memo: { mode: 'deploy' as const, uid } });

  it.each([
    ['an hour before the object was created: an earlier object of that name', created - 3_600_000, true],
    ['just after it was created: its own', created + 150, false],
    ['a little before it, within the clocks’ skew: taken as its own', created - 800, false],
  ])('a run that names no object, started %s', (_, startedAt, earlier) => {
    expect(ranForAnother(run(startedAt), { createdAt: created })).toBe(earlier);
  });

  it('takes a run that names no object for the object’s own when its creation time is unknown', () => {
    expect(ranForAnother(run(0), { createdAt: 0 })).toBe(false);
  });

  // Temporal's clock 3 s behind the API server's made an object's own run look older than the
  // object (so every end of a run started another), and 3 s ahead hid an earlier object's run.
  it.each([
    ['Temporal’s clock 3 s behind: the object’s own run started “before” it', -3_000, 'u1', false],
    ['Temporal’s clock 3 s ahead: an earlier object’s run started “after” this one', 3_000, 'u0', true],
    ['clocks agreeing: an earlier object’s run started before it', -3_600_000, 'u0', true],
  ])('%s: told by the uid the run names', (_, skew, uid, earlier) => {
    expect(ranForAnother(run(created + skew, uid), { uid: 'u1', createdAt: created })).toBe(earlier);
  });
});
