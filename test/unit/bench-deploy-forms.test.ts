import { parse } from 'yaml';
import type { ArmadaChartSpec } from '../../api/chart';
import { chartDependencies, helmfileYaml, helmReleases, rotation } from '../../bench/deploy-forms';
import type { ChartPlan, ManifestPlan } from '../../core/plan/plans';

/** A chart of the examples' manifest as planned: release demo-<name> in namespace demo. */
function chart(name: string, location: string, spec: Partial<ArmadaChartSpec> = {}): ChartPlan {
  return {
    chart: name,
    release: `demo-${name}`,
    namespace: 'demo',
    workflowId: `helm:demo/demo-${name}`,
    spec: {
      chart_name: name,
      release: name,
      namespace: 'demo',
      source: { type: 'local', location },
      ...spec,
    } as ArmadaChartSpec,
  };
}

/** The examples' manifest (settings, backend | web, admin) with both groups sequenced or both parallel. */
function examples(sequenced: boolean): ManifestPlan {
  return {
    manifest: 'demo',
    namespace: 'default',
    onFailure: 'rollback',
    targetState: 'deployed',
    groups: [
      {
        name: 'platform',
        sequenced,
        charts: [
          chart('settings', 'examples/charts/settings', { values: { settings: { logLevel: 'debug' } } }),
          chart('backend', 'examples/charts/backend', { wait: { timeout: 120 } as ArmadaChartSpec['wait'] }),
        ],
      },
      {
        name: 'apps',
        sequenced,
        charts: [chart('web', 'examples/charts/hello'), chart('admin', 'examples/charts/hello')],
      },
    ],
  };
}

const byName = (deps: Map<ChartPlan, ChartPlan[]>) =>
  Object.fromEntries([...deps].map(([c, needs]) => [c.chart, needs.map((n) => n.chart)]));

describe('chartDependencies (the manifest order as dependsOn / needs links)', () => {
  it.each([
    [
      'every group sequenced: each chart waits for the one before it, across groups too',
      examples(true),
      { settings: [], backend: ['settings'], web: ['backend'], admin: ['web'] },
    ],
    [
      'every group parallel: the first group has no links, each chart of the second waits for all of the first',
      examples(false),
      { settings: [], backend: [], web: ['settings', 'backend'], admin: ['settings', 'backend'] },
    ],
  ])('%s', (_name, plan, expected) => {
    expect(byName(chartDependencies(plan))).toEqual(expected);
  });

  it('a parallel group after a sequenced one waits for its last chart only; a sequenced group after a parallel one starts after all of it', () => {
    const plan = examples(true);
    plan.groups[1].sequenced = false;
    expect(byName(chartDependencies(plan))).toEqual({
      settings: [],
      backend: ['settings'],
      web: ['backend'],
      admin: ['backend'],
    });
    const reversed = examples(false);
    reversed.groups[1].sequenced = true;
    expect(byName(chartDependencies(reversed))).toEqual({
      settings: [],
      backend: [],
      web: ['settings', 'backend'],
      admin: ['web'],
    });
  });

  it('an empty group passes the previous group end on to the next', () => {
    const plan = examples(true);
    plan.groups.splice(1, 0, { name: 'empty', sequenced: false, charts: [] });
    expect(byName(chartDependencies(plan)).web).toEqual(['backend']);
  });
});

describe('helmReleases (the plan as Flux HelmReleases)', () => {
  const releases = helmReleases(examples(false), 'flux-requeue-5s', (c) => ({
    kind: 'HelmChart',
    name: `chart-${c.spec.source.location!.split('/').pop()}`,
  })) as { metadata: { name: string }; spec: Record<string, unknown> }[];

  it('installs each release under its Armada name into its namespace, from its HelmChart in the form namespace', () => {
    expect(releases[0]).toEqual({
      apiVersion: 'helm.toolkit.fluxcd.io/v2',
      kind: 'HelmRelease',
      metadata: { name: 'settings', namespace: 'flux-requeue-5s' },
      spec: {
        interval: '1h',
        releaseName: 'demo-settings',
        targetNamespace: 'demo',
        storageNamespace: 'demo',
        chartRef: { kind: 'HelmChart', name: 'chart-settings', namespace: 'flux-requeue-5s' },
        install: { createNamespace: true },
        timeout: '900s',
        values: { settings: { logLevel: 'debug' } },
      },
    });
  });

  it("gives helm the chart's wait timeout and chains the second group by dependsOn on the whole first", () => {
    expect(releases[1].spec.timeout).toBe('120s');
    expect(releases[2].spec.chartRef).toEqual({
      kind: 'HelmChart',
      name: 'chart-hello',
      namespace: 'flux-requeue-5s',
    });
    expect(releases[2].spec.dependsOn).toEqual([{ name: 'settings' }, { name: 'backend' }]);
    expect(releases[1].spec).not.toHaveProperty('dependsOn');
  });
});

describe('helmfileYaml (the plan as a helmfile.yaml)', () => {
  it('has one waited release per chart from its directory and values file, ordered by needs', () => {
    const doc = parse(helmfileYaml(examples(true), '/repo', '/tmp/values')) as {
      helmDefaults: unknown;
      releases: Record<string, unknown>[];
    };
    expect(doc.helmDefaults).toEqual({ createNamespace: true });
    expect(doc.releases[0]).toEqual({
      name: 'demo-settings',
      namespace: 'demo',
      chart: '/repo/examples/charts/settings',
      values: ['/tmp/values/demo-settings.json'],
      wait: true,
      timeout: 900,
    });
    expect(doc.releases.map((r) => [r.name, r.timeout, r.needs])).toEqual([
      ['demo-settings', 900, undefined],
      ['demo-backend', 120, ['demo/demo-settings']],
      ['demo-web', 900, ['demo/demo-backend']],
      ['demo-admin', 900, ['demo/demo-web']],
    ]);
  });
});

describe('rotation (the order of the forms in a round)', () => {
  it.each([
    ['round 0 keeps the order', 0, ['a', 'b', 'c']],
    ['round 1 starts with the second form', 1, ['b', 'c', 'a']],
    ['round 3 of three forms is round 0 again', 3, ['a', 'b', 'c']],
  ])('%s', (_name, round, expected) => {
    expect(rotation(['a', 'b', 'c'], round)).toEqual(expected);
  });

  it('of two forms alternates them, as the pairs did before the peers', () => {
    expect([0, 1, 2].map((r) => rotation(['engine', 'script'], r).join(''))).toEqual([
      'enginescript',
      'scriptengine',
      'enginescript',
    ]);
  });
});
