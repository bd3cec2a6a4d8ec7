import type { ArmadaChartSpec } from '../../api/chart';
import { armadaChartGroupSpec } from '../../api/chart-group';
import { armadaChartSpec } from '../../api/chart';
import { armadaManifestSpec } from '../../api/manifest';
import { planGroup, planManifest, PlanError, type ManifestDocuments } from '../../workflows/plan/manifest';
import { prefixedRelease, releaseWorkflowId } from '../../workflows/plan/names';
import {
  classifyRelease,
  nextAction,
  revisionBefore,
  type ObservedRelease,
} from '../../workflows/plan/release';
import { compensations } from '../../workflows/plan/rollback';
import { formatSpecs, generationIn } from '../../workflows/plan/specs';

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
});
