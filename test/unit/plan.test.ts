import type { ChartDependency } from '../../core/contracts/charts';
import { type ArmadaChartSpec, armadaChartSpec } from '../../api/chart';
import { armadaChartGroupSpec } from '../../api/chart-group';
import { armadaManifestSpec } from '../../api/manifest';
import { deployerSpec, type DeployerSpec } from '../../api/deployer';
import { deployerRun } from '../../runs/requests';
import {
  planGroup,
  planManifest,
  PlanError,
  rivalClaims,
  type ManifestDocuments,
} from '../../core/plan/manifest';
import { chartDoc, claimKey, deployerDoc, groupDoc, manifestDoc } from '../fixtures/claim-documents';
import { prefixedRelease, releaseWorkflowId } from '../../core/plan/names';
import { classifyRelease, nextAction, revisionBefore, type ObservedRelease } from '../../core/plan/release';
import { resolveDependencies } from '../../core/plan/dependencies';
import { helmRequests } from '../../core/plan/helm-requests';
import { compensations } from '../../core/plan/rollback';
import { formatSpecs, generationIn } from '../../core/plan/specs';

const chart = (release: string, namespace = 'apps'): ArmadaChartSpec =>
  armadaChartSpec.parse({ release, namespace, source: { type: 'local', location: `charts/${release}` } });

function docs(overrides: Partial<ManifestDocuments> = {}): ManifestDocuments {
  return {
    namespace: 'default',
    manifest: {
      name: 'demo',
      spec: armadaManifestSpec.parse({ release_prefix: 'demo', chart_groups: ['platform', 'apps'] }),
    },
    groups: {
      platform: armadaChartGroupSpec.parse({ chart_group: ['settings', 'backend'], sequenced: true }),
      apps: armadaChartGroupSpec.parse({ chart_group: ['web'] }),
    },
    charts: { settings: chart('settings'), backend: chart('backend'), web: chart('web') },
    ...overrides,
  };
}

describe('names', () => {
  it('prefixes releases as Armada does', () => {
    expect(prefixedRelease('demo', 'web')).toBe('demo-web');
    expect(prefixedRelease(undefined, 'web')).toBe('web');
  });
  it('locks a release by namespace and name', () => {
    expect(releaseWorkflowId('apps', 'demo-web')).toBe('helm:apps/demo-web');
  });
});

describe('planManifest', () => {
  it('keeps group and chart order and names releases <prefix>-<release>', () => {
    const plan = planManifest(docs());
    expect(plan.groups.map((g) => [g.name, g.sequenced, g.charts.map((c) => c.release)])).toEqual([
      ['platform', true, ['demo-settings', 'demo-backend']],
      ['apps', false, ['demo-web']],
    ]);
    expect(plan.groups[1].charts[0].workflowId).toBe('helm:apps/demo-web');
  });

  it('marks the groups behind an approval gate', () => {
    const manifest = {
      name: 'demo',
      spec: armadaManifestSpec.parse({
        release_prefix: 'demo',
        chart_groups: ['platform', 'apps'],
        approval: { before: ['apps'] },
      }),
    };
    expect(planManifest(docs({ manifest })).groups.map((g) => g.approval)).toEqual([
      undefined,
      { timeoutSeconds: undefined, onTimeout: 'stop' },
    ]);
  });

  it.each([
    [
      'a missing group',
      { groups: { platform: docs().groups.platform } },
      'ArmadaManifest demo lists chart group "apps", which does not exist',
    ],
    [
      'a missing chart',
      { charts: { settings: chart('settings'), web: chart('web') } },
      'ArmadaChartGroup platform lists chart "backend", which does not exist',
    ],
    [
      'a chart in two groups',
      { groups: { ...docs().groups, apps: armadaChartGroupSpec.parse({ chart_group: ['web', 'backend'] }) } },
      'chart "backend" is listed by both group platform and group apps',
    ],
    [
      'two charts deploying one release',
      { charts: { ...docs().charts, web: chart('backend') } },
      'charts "backend" and "web" both deploy release apps/demo-backend',
    ],
  ])('refuses %s, naming it', (_name, overrides, problem) => {
    expect(() => planManifest(docs(overrides))).toThrow(PlanError);
    try {
      planManifest(docs(overrides));
    } catch (err) {
      expect((err as PlanError).problems).toContain(problem);
    }
  });
});

describe('planGroup (a group no manifest lists)', () => {
  const group = armadaChartGroupSpec.parse({ chart_group: ['settings', 'backend'], sequenced: true });
  it('plans its charts in order, releases unprefixed', () => {
    const plan = planGroup({
      namespace: 'ops',
      name: 'platform',
      spec: group,
      charts: { settings: chart('settings'), backend: chart('backend') },
    });
    expect(plan).toMatchObject({ name: 'platform', sequenced: true });
    expect(plan.charts.map((c) => [c.chart, c.release, c.workflowId])).toEqual([
      ['settings', 'settings', 'helm:apps/settings'],
      ['backend', 'backend', 'helm:apps/backend'],
    ]);
  });
  it('names a missing chart and a release claimed twice', () => {
    const plan = () =>
      planGroup({ namespace: 'ops', name: 'platform', spec: group, charts: { settings: chart('backend') } });
    expect(plan).toThrow(PlanError);
    expect(plan).toThrow('ArmadaChartGroup platform lists chart "backend", which does not exist');
    const twice = () =>
      planGroup({
        namespace: 'ops',
        name: 'platform',
        spec: group,
        charts: { settings: chart('web'), backend: chart('web') },
      });
    expect(twice).toThrow('charts "settings" and "backend" both deploy release apps/web');
  });
});

describe("a group's Deployers in plans", () => {
  const deployer = (name: string): DeployerSpec =>
    deployerSpec.parse({
      type: 'canary',
      deployment: { name, namespace: 'web', image: `registry.test/${name}`, version: 'v2', replicas: 3 },
      steps: [{ percent: 50 }],
    });
  const withDeployers = (groups: Record<string, string[]>, deployers: Record<string, DeployerSpec>) =>
    docs({
      manifest: {
        name: 'demo',
        spec: armadaManifestSpec.parse({ release_prefix: 'demo', chart_groups: Object.keys(groups) }),
      },
      groups: Object.fromEntries(
        Object.entries(groups).map(([name, listed]) => [
          name,
          armadaChartGroupSpec.parse({ chart_group: ['web'], deployers: listed }),
        ]),
      ),
      deployers,
    });

  it("resolves them in order, under the workflow ID of the Deployer's own runs, and leaves a group without them as it was", () => {
    const plan = planGroup({
      namespace: 'ops',
      name: 'shop',
      spec: armadaChartGroupSpec.parse({ chart_group: ['web'], deployers: ['nginx', 'api'] }),
      charts: { web: chart('web') },
      deployers: { api: deployer('api'), nginx: deployer('nginx') },
    });
    expect(plan.deployers).toEqual([
      { name: 'nginx', workflowId: 'Deployer:ops/nginx', spec: deployer('nginx') },
      { name: 'api', workflowId: 'Deployer:ops/api', spec: deployer('api') },
    ]);
    expect(plan.deployers![0].workflowId).toBe(
      deployerRun({ kind: 'Deployer', namespace: 'ops', name: 'nginx', spec: deployer('nginx') }).workflowId,
    );
    expect('deployers' in planManifest(docs()).groups[0]).toBe(false);
  });

  it('names a Deployer that does not exist, as a missing chart', () => {
    expect(() =>
      planManifest(withDeployers({ apps: ['nginx', 'gone'] }, { nginx: deployer('nginx') })),
    ).toThrow('ArmadaChartGroup apps lists Deployer "gone", which does not exist');
  });

  it('refuses one Deployer listed by two groups of a manifest, as one chart', () => {
    const plan = () =>
      planManifest({
        ...withDeployers({ platform: ['nginx'], apps: ['nginx'] }, { nginx: deployer('nginx') }),
        groups: {
          platform: armadaChartGroupSpec.parse({ chart_group: ['settings'], deployers: ['nginx'] }),
          apps: armadaChartGroupSpec.parse({ chart_group: ['web'], deployers: ['nginx'] }),
        },
      });
    expect(plan).toThrow('Deployer "nginx" is listed by both group platform and group apps');
  });

  it('is refused by the schema when listed twice in one group', () => {
    const parsed = armadaChartGroupSpec.safeParse({ chart_group: ['web'], deployers: ['nginx', 'nginx'] });
    expect(parsed.success).toBe(false);
    expect(parsed.error?.issues[0].message).toBe('Deployer "nginx" is listed twice (also at index 0)');
  });
});

describe('run specs (the memo the bridge compares and status reports read)', () => {
  const specs = formatSpecs([
    { kind: 'ArmadaManifest', name: 'demo', generation: 3 },
    { kind: 'ArmadaChart', name: 'web', generation: 12 },
    { kind: 'ArmadaChart', name: 'web-admin' },
  ]);
  it('is sorted, so the same objects always read the same', () => {
    expect(specs).toBe('ArmadaChart/web-admin@0 ArmadaChart/web@12 ArmadaManifest/demo@3');
  });
  it("gives one object's generation, never a prefix's", () => {
    expect(generationIn(specs, 'ArmadaChart', 'web')).toBe(12);
    expect(generationIn(specs, 'ArmadaManifest', 'demo')).toBe(3);
    expect(generationIn(specs, 'ArmadaChart', 'we')).toBeUndefined();
    expect(generationIn(specs, 'ArmadaChartGroup', 'web')).toBeUndefined();
    expect(generationIn(undefined, 'ArmadaChart', 'web')).toBeUndefined();
  });
});

describe('classifyRelease and nextAction', () => {
  const open = { isProtected: false, continueProcessing: false };
  const rel = (o: Partial<ObservedRelease>): ObservedRelease => ({
    revision: 3,
    status: 'deployed',
    digest: 'd1',
    ...o,
  });

  it.each([
    ['no release is installed', null, open, { action: 'install' }],
    [
      'an uninstalled release is installed again',
      rel({ status: 'uninstalled' }),
      open,
      { action: 'install' },
    ],
    ['a deployed release with the same chart and values is left alone', rel({}), open, { action: 'none' }],
    [
      'a deployed release with other chart or values is upgraded',
      rel({ digest: 'd0' }),
      open,
      { action: 'upgrade' },
    ],
    ['a release armada never wrote is upgraded', rel({ digest: undefined }), open, { action: 'upgrade' }],
    [
      'a release stuck pending-upgrade goes back to its last deployed revision',
      rel({ status: 'pending-upgrade', lastDeployedRevision: 2 }),
      open,
      { action: 'rollback', revision: 2 },
    ],
    [
      'a release stuck pending-install that never deployed is uninstalled',
      rel({ status: 'pending-install', revision: 1 }),
      open,
      { action: 'uninstall' },
    ],
    ['a failed release is upgraded', rel({ status: 'failed' }), open, { action: 'upgrade' }],
    [
      'a failed protected release stops the chart',
      rel({ status: 'failed' }),
      { isProtected: true, continueProcessing: false },
      { action: 'protected', then: 'stop' },
    ],
    [
      'a failed protected release with continue_processing is skipped',
      rel({ status: 'failed' }),
      { isProtected: true, continueProcessing: true },
      { action: 'protected', then: 'skip' },
    ],
  ])('%s', (_name, observed, protection, action) => {
    expect(nextAction(classifyRelease(observed, 'd1'), protection)).toEqual(action);
  });

  // After this run writes a revision, the planner owes it the Armada wait, then helm test.
  it.each([
    ['a written revision is waited for first', { revision: 3, wait: true, test: true }, { action: 'wait' }],
    ['then tested, when tests are enabled', { revision: 3, wait: false, test: true }, { action: 'test' }],
    ['then it is done', { revision: 3, wait: false, test: false }, { action: 'none' }],
    [
      'checks owed to another revision do not hold this one',
      { revision: 2, wait: true, test: true },
      { action: 'none' },
    ],
  ])('%s', (_name, unverified, action) => {
    expect(nextAction(classifyRelease(rel({}), 'd1', unverified), open)).toEqual(action);
  });

  it('a written revision that does not run the wanted chart is not waited for but written again', () => {
    expect(
      nextAction(
        classifyRelease(rel({ digest: 'd0' }), 'd1', { revision: 3, wait: true, test: false }),
        open,
      ),
    ).toEqual({
      action: 'upgrade',
    });
  });
});

describe('helmRequests (an ArmadaChart spec → what helm is asked)', () => {
  const ref = { release: 'web', namespace: 'apps' };
  const chartObject = { name: 'web', namespace: 'team-a' };
  const chart = { contentDigest: 'sha256:c', digest: 'sha256:1' };
  /** The chart as activities get it: by source and content, never a path on one worker. */
  const content = { source: { type: 'local', location: 'charts/web' }, contentDigest: 'sha256:c' };
  const spec = (more: Record<string, unknown> = {}) =>
    armadaChartSpec.parse({
      release: 'web',
      namespace: 'apps',
      source: { type: 'local', location: 'charts/web' },
      values: { replicas: 2 },
      ...more,
    });

  it("gives every Helm operation and the Armada wait Armada's default of 900 s", () => {
    const r = helmRequests(ref, spec(), chartObject);
    expect(r.prepare).toEqual({ source: { type: 'local', location: 'charts/web' }, values: { replicas: 2 } });
    expect(r.upgrade(chart)).toEqual({
      ...ref,
      chart: content,
      values: { replicas: 2 },
      digest: 'sha256:1',
      timeoutSeconds: 900,
      nativeWait: undefined,
      force: undefined,
      noHooks: undefined,
    });
    expect(r.wait).toEqual({ ...ref, wait: undefined, timeoutSeconds: 900 });
    expect(r.waits).toBe(true);
    expect(r.rollback(4)).toEqual({ ...ref, revision: 4, timeoutSeconds: 900 });
    expect(r.recoverByUninstall).toEqual({ ...ref, timeoutSeconds: 900 });
    expect(r.uninstall).toEqual({ ...ref, timeoutSeconds: undefined });
    expect(r.test).toBeUndefined();
    expect(r.canaryCopies(chart)).toEqual({ ...ref, chart: content, values: { replicas: 2 } });
  });

  it('maps wait, upgrade options, test and delete timeouts from the spec', () => {
    const r = helmRequests(
      ref,
      spec({
        wait: { timeout: 60, native: { enabled: true } },
        upgrade: { options: { force: true, no_hooks: true } },
        test: { enabled: true, timeout: 30 },
        delete: { timeout: 20 },
      }),
      chartObject,
    );
    expect(r.upgrade(chart)).toMatchObject({
      timeoutSeconds: 60,
      nativeWait: true,
      force: true,
      noHooks: true,
    });
    expect(r.wait).toMatchObject({ timeoutSeconds: 60, wait: { timeout: 60, native: { enabled: true } } });
    expect(r.rollback(1).timeoutSeconds).toBe(60);
    expect(r.test).toEqual({ ...ref, timeoutSeconds: 30 });
    expect(r.uninstall).toEqual({ ...ref, timeoutSeconds: 20 });
  });

  it.each([
    ['no wait spec: jobs and pods of the namespace', undefined, true],
    ['labels only', { labels: { app: 'web' } }, true],
    [
      "with helm's own wait too: its scope is the release, not the namespace",
      { native: { enabled: true } },
      true,
    ],
    ['an entry', { resources: [{ type: 'deployment', min_ready: 1 }] }, true],
    ["resources: [] (Armada's wait for nothing)", { resources: [] }, false],
    ["resources: [] with helm's own wait", { resources: [], native: { enabled: true } }, false],
  ])('owes a written revision the Armada wait unless it checks nothing: %s', (_, wait, waits) => {
    expect(helmRequests(ref, spec(wait && { wait }), chartObject).waits).toBe(waits);
  });

  it("carries values_from as references to read in the ArmadaChart's own namespace, to every request that needs values", () => {
    const references = [
      { kind: 'Secret', name: 'db', key: 'values.yaml' },
      { kind: 'ConfigMap', name: 'flags', key: 'level', target_path: 'log.level', optional: true },
    ];
    const r = helmRequests(ref, spec({ values_from: references }), chartObject);
    const valuesFrom = { chart: 'web', namespace: 'team-a', references };
    expect(r.prepare.valuesFrom).toEqual(valuesFrom);
    expect(r.upgrade(chart).valuesFrom).toEqual(valuesFrom);
    expect(r.canaryCopies(chart).valuesFrom).toEqual(valuesFrom);
  });

  it('gives values_from its default key, values.yaml', () => {
    const r = helmRequests(ref, spec({ values_from: [{ kind: 'Secret', name: 'db' }] }), chartObject);
    expect(r.prepare.valuesFrom?.references).toEqual([{ kind: 'Secret', name: 'db', key: 'values.yaml' }]);
  });

  it('asks for no test when tests are disabled', () => {
    expect(
      helmRequests(ref, spec({ test: { enabled: false, timeout: 30 } }), chartObject).test,
    ).toBeUndefined();
  });

  it('gives a verified source, and a verified dependency, its ArmadaChart and release, where the keyring is read and which a refusal names', () => {
    const verify = { keyring_secret: 'signers' };
    const source = { type: 'tar', location: 'https://charts.example.com/web-1.0.0.tgz', verify };
    const dependencies: ChartDependency[] = [
      { chart: 'lib', source: { type: 'oci', location: 'oci://r.example.com/lib', verify } },
      { chart: 'plain', source: { type: 'oci', location: 'oci://r.example.com/plain' } },
    ];
    const r = helmRequests(ref, spec({ source }), chartObject, dependencies);
    const owner = { chart: 'web', namespace: 'team-a', release: 'apps/web' };
    expect(r.prepare.owner).toEqual(owner);
    expect(r.upgrade(chart).chart.owner).toEqual(owner);
    expect(r.prepare.dependencies).toEqual([
      { ...dependencies[0], owner: { ...owner, chart: 'lib' } },
      dependencies[1],
    ]);
  });

  it('gives a source with credentials only its ArmadaChart, as before verified charts', () => {
    const source = {
      type: 'repo',
      location: 'https://c.example.com/',
      chart: 'web',
      secret_ref: { name: 'login' },
    };
    expect(helmRequests(ref, spec({ source }), chartObject).prepare.owner).toEqual({
      chart: 'web',
      namespace: 'team-a',
    });
  });
});

describe('revisionBefore', () => {
  const rel = (o: Partial<ObservedRelease>): ObservedRelease => ({ revision: 3, status: 'deployed', ...o });
  it.each([
    ['a release that did not exist has none', null, null],
    ['an uninstalled release has none', rel({ status: 'uninstalled' }), null],
    ['a deployed release goes back to its revision', rel({}), 3],
    ['a failed release goes back to its revision', rel({ status: 'failed' }), 3],
    [
      'a pending release goes back to its last deployed revision',
      rel({ status: 'pending-upgrade', lastDeployedRevision: 2 }),
      2,
    ],
    ['a pending first install has none', rel({ status: 'pending-install', revision: 1 }), null],
  ])('%s', (_name, observed, revision) => {
    expect(revisionBefore(observed)).toBe(revision);
  });
});

describe('compensations', () => {
  it('undo newest first: rollback what existed, uninstall what the run installed', () => {
    const change = (release: string, before: number | null) => ({
      chart: release,
      release,
      namespace: 'apps',
      before,
    });
    expect(compensations([change('a', 2), change('b', null), change('c', 5)])).toEqual([
      { action: 'rollback', release: 'c', namespace: 'apps', revision: 5 },
      { action: 'uninstall', release: 'b', namespace: 'apps' },
      { action: 'rollback', release: 'a', namespace: 'apps', revision: 2 },
    ]);
  });

  it('each undo acts as the ServiceAccount its change was written as', () => {
    const actAs = { namespace: 'team-a', name: 'deployer' };
    const change = (release: string, before: number | null) => ({
      chart: release,
      release,
      namespace: 'team-a',
      before,
      actAs,
    });
    expect(compensations([change('a', 3), change('b', null)])).toEqual([
      { action: 'uninstall', release: 'b', namespace: 'team-a', actAs },
      { action: 'rollback', release: 'a', namespace: 'team-a', revision: 3, actAs },
    ]);
  });
});

describe('rivalClaims (one Helm release, two objects that would deploy it)', () => {
  const key = claimKey;

  it('the older of two manifests claiming one release keeps it; the newer is told which holds it', () => {
    const docs = [
      manifestDoc('first', 'demo', ['a'], 0),
      groupDoc('a', ['web-a'], 0),
      chartDoc('web-a', 'web', 0),
      manifestDoc('second', 'demo', ['b'], 5),
      groupDoc('b', ['web-b'], 5),
      chartDoc('web-b', 'web', 5),
    ];
    expect(rivalClaims(key(docs[0]), docs)).toEqual([]);
    expect(rivalClaims(key(docs[3]), docs)).toEqual([
      'release apps/demo-web is already deployed by ArmadaManifest default/first',
    ]);
  });

  it('a standalone chart in another namespace cannot take a release a chart already deploys', () => {
    const docs = [chartDoc('good', 'good', 0), chartDoc('copy', 'good', 1, 'elsewhere')];
    expect(rivalClaims(key(docs[1]), docs)).toEqual([
      'release apps/good is already deployed by ArmadaChart default/good',
    ]);
  });

  it('a dependency_only chart no group lists holds no release; listed, its group claims it', () => {
    const onlyBuiltIn = (doc: ReturnType<typeof chartDoc>) => ({
      ...doc,
      spec: { ...doc.spec, dependency_only: true },
    });
    const alone = [onlyBuiltIn(chartDoc('helm-toolkit', 'toolkit', 0)), chartDoc('real', 'toolkit', 1)];
    expect(rivalClaims(key(alone[1]), alone)).toEqual([]);
    const listed = [
      groupDoc('g', ['helm-toolkit'], 0),
      onlyBuiltIn(chartDoc('helm-toolkit', 'toolkit', 0)),
      chartDoc('real', 'toolkit', 1),
    ];
    expect(rivalClaims(key(listed[2]), listed)).toEqual([
      'release apps/toolkit is already deployed by ArmadaChartGroup default/g',
    ]);
  });

  it('a prefix and a release that spell an existing release clash with it', () => {
    const docs = [
      chartDoc('good', 'demo-web', 0),
      manifestDoc('m', 'demo', ['g'], 2),
      groupDoc('g', ['w'], 2),
      chartDoc('w', 'web', 2),
    ];
    expect(rivalClaims(key(docs[1]), docs)).toEqual([
      'release apps/demo-web is already deployed by ArmadaChart default/good',
    ]);
  });

  it("a Deployer whose Deployments are another Deployer's is refused; another base name or namespace is not", () => {
    const docs = [
      deployerDoc('nginx', 'web', 'nginx', 0),
      deployerDoc('copycat', 'web', 'nginx', 1),
      deployerDoc('other', 'web', 'api', 2),
      deployerDoc('elsewhere', 'shop', 'nginx', 3),
    ];
    expect(rivalClaims(key(docs[0]), docs)).toEqual([]);
    expect(rivalClaims(key(docs[1]), docs)).toEqual([
      'Deployment web/nginx-* is already deployed by Deployer default/nginx',
    ]);
    expect(rivalClaims(key(docs[2]), docs)).toEqual([]);
    expect(rivalClaims(key(docs[3]), docs)).toEqual([]);
  });

  it('two standalone groups listing one chart: the newer group is refused', () => {
    const docs = [chartDoc('web', 'web', 0), groupDoc('one', ['web'], 1), groupDoc('two', ['web'], 3)];
    expect(rivalClaims(key(docs[1]), docs)).toEqual([]);
    expect(rivalClaims(key(docs[2]), docs)).toEqual([
      'ArmadaChart default/web is already deployed by ArmadaChartGroup default/one',
      'release apps/web is already deployed by ArmadaChartGroup default/one',
    ]);
  });

  it("a second manifest listing another manifest's group is told which manifest deploys it", () => {
    const docs = [
      manifestDoc('good', 'good', ['apps'], 0),
      groupDoc('apps', ['web'], 0),
      chartDoc('web', 'web', 0),
      manifestDoc('grab', 'grab', ['apps'], 4),
    ];
    expect(rivalClaims(key(docs[0]), docs)).toEqual([]);
    expect(rivalClaims(key(docs[3]), docs)).toEqual([
      'ArmadaChartGroup default/apps is already deployed by ArmadaManifest default/good',
      'ArmadaChart default/web is already deployed by ArmadaManifest default/good',
    ]);
  });

  it('ties on creation time go by kind, namespace and name', () => {
    const docs = [chartDoc('b', 'web', 0), chartDoc('a', 'web', 0)];
    expect(rivalClaims(key(docs[0]), docs)).toEqual([
      'release apps/web is already deployed by ArmadaChart default/a',
    ]);
  });

  it('a chart a group lists claims through the group, and uninitialized objects claim nothing', () => {
    const docs = [
      {
        ...chartDoc('idle', 'web', 0),
        spec: { release: 'web', namespace: 'apps', target_state: 'uninitialized' },
      },
      groupDoc('g', ['web'], 1),
      chartDoc('web', 'web', 1),
    ];
    expect(rivalClaims(key(docs[1]), docs)).toEqual([]);
    expect(rivalClaims(key(docs[2]), docs)).toEqual([]); // deployed by its group, not on its own
  });

  it('a Deployer claims no release', () => {
    expect(
      rivalClaims({ kind: 'Deployer', namespace: 'default', name: 'x' }, [chartDoc('x', 'x', 0)]),
    ).toEqual([]);
  });
});

describe('chart dependencies, resolved as Armada resolves them', () => {
  const source = (location: string) => ({ type: 'local' as const, location });
  const specs = (entries: Record<string, string[] | undefined>) =>
    Object.fromEntries(
      Object.entries(entries).map(([name, dependencies]) => [
        name,
        { source: source(`charts/${name}`), ...(dependencies && { dependencies }) },
      ]),
    );

  it('names each dependency with its source, and theirs under it, recursively', () => {
    const charts = specs({ web: ['db', 'helm-toolkit'], db: ['helm-toolkit'], 'helm-toolkit': undefined });
    expect(resolveDependencies('web', charts)).toEqual({
      dependencies: [
        {
          chart: 'db',
          source: source('charts/db'),
          dependencies: [{ chart: 'helm-toolkit', source: source('charts/helm-toolkit') }],
        },
        { chart: 'helm-toolkit', source: source('charts/helm-toolkit') },
      ],
      problems: [],
    });
  });

  it('an empty list is kept (it replaces the vendored subcharts); no list resolves to none', () => {
    expect(resolveDependencies('web', specs({ web: [] }))).toEqual({ dependencies: [], problems: [] });
    expect(resolveDependencies('web', specs({ web: undefined }))).toEqual({ problems: [] });
  });

  it('names a missing dependency and a chart that depends on itself', () => {
    expect(resolveDependencies('web', specs({ web: ['gone'] })).problems).toEqual([
      'chart "web" depends on chart "gone", which does not exist',
    ]);
    expect(resolveDependencies('web', specs({ web: ['db'], db: ['web'] })).problems).toEqual([
      'chart "web" depends on itself: web → db → web',
    ]);
  });

  it('a manifest plan carries them for each chart, and refuses one that does not resolve', () => {
    const withToolkit = { ...chart('web'), dependencies: ['helm-toolkit'] };
    const toolkit = { ...chart('helm-toolkit'), dependency_only: true };
    const charts = { ...docs().charts, web: withToolkit };
    const plan = planManifest(docs({ charts: { ...charts, 'helm-toolkit': toolkit } }));
    expect(plan.groups.flatMap((g) => g.charts).find((c) => c.chart === 'web')?.dependencies).toEqual([
      { chart: 'helm-toolkit', source: toolkit.source },
    ]);
    expect(() => planManifest(docs({ charts }))).toThrow(
      'chart "web" depends on chart "helm-toolkit", which does not exist',
    );
  });
});
