import { placeOf, routeOf, type ObjectPlace, type Verb } from '../../runs/targets';

/** One namespace's objects: manifest demo (prefix d) lists platform; platform lists web (canary) and db. */
const listings = {
  manifests: [{ name: 'demo', spec: { chart_groups: ['platform'], release_prefix: 'd' } }],
  groups: [
    { name: 'platform', spec: { chart_group: ['web', 'db'] } },
    { name: 'solo', spec: { chart_group: ['cache'] } },
  ],
};
const chart = (release: string, canary = false) => ({
  release,
  namespace: 'apps',
  ...(canary && { canary: { steps: [{ percent: 50 }] } }),
});
const place = (kind: ObjectPlace['kind'], name: string, spec: unknown = {}) =>
  placeOf(kind, 'ns', name, spec, listings);

const objects: [string, ObjectPlace][] = [
  ['a manifest', place('ArmadaManifest', 'demo')],
  ['a group a manifest lists', place('ArmadaChartGroup', 'platform')],
  ['a group on its own', place('ArmadaChartGroup', 'solo')],
  ['a chart of a manifest, with a canary', place('ArmadaChart', 'web', chart('web', true))],
  ['a chart of a manifest, without one', place('ArmadaChart', 'db', chart('db'))],
  ['a chart of a group on its own', place('ArmadaChart', 'cache', chart('cache'))],
  ['a chart on its own', place('ArmadaChart', 'lone', chart('lone'))],
  ['a chart on its own, with a canary', place('ArmadaChart', 'shop', chart('shop', true))],
  ['a Deployer', place('Deployer', 'nginx')],
];

const M = 'ArmadaManifest:ns/demo';
/** A manifest's chart, named as the message's target: the manifest's run passes it on or refuses it. */
const named = (chart: string) => ({ target: { kind: 'ArmadaChart', namespace: 'ns', name: chart } });
/** A Deployer: its rollout (its run's child) while one runs, else its own ID (its run, or an older build's rollout). */
const D = { workflowIds: ['Deployer:ns/nginx/rollout', 'Deployer:ns/nginx'] };
const refused = (what: string) => ({
  refused: expect.stringMatching(new RegExp(`^ArmadaChart ns/${what} has no canary`)),
});

/** What each verb reaches, per object, in the order of `objects`. */
const expected: Record<Verb, unknown[]> = {
  pause: [
    { workflowIds: [M] },
    { workflowIds: [M] },
    { workflowIds: ['ArmadaChartGroup:ns/solo'] },
    { workflowIds: ['ArmadaChart:ns/web/canary', M], ...named('web') },
    { workflowIds: [M], ...named('db') },
    { workflowIds: ['ArmadaChartGroup:ns/solo'] },
    { workflowIds: ['ArmadaChart:ns/lone'] },
    { workflowIds: ['ArmadaChart:ns/shop/canary', 'ArmadaChart:ns/shop'] },
    D,
  ],
  approve: [
    { workflowIds: [M] },
    { workflowIds: [M], gate: 'before group platform' },
    { workflowIds: ['ArmadaChartGroup:ns/solo'] },
    { workflowIds: ['ArmadaChart:ns/web/canary'], ...named('web') },
    refused('db'),
    refused('cache'),
    refused('lone'),
    { workflowIds: ['ArmadaChart:ns/shop/canary'] },
    D,
  ],
  cancel: [
    { workflowIds: [M] },
    {
      refused:
        'ArmadaChartGroup ns/platform is deployed by the run of amf/demo: cancel that (armadactl cancel amf/demo) to stop it',
    },
    { workflowIds: ['ArmadaChartGroup:ns/solo'] },
    { refused: expect.stringMatching(/^ArmadaChart ns\/web is deployed by the run of amf\/demo/) },
    { refused: expect.stringMatching(/^ArmadaChart ns\/db is deployed by the run of amf\/demo/) },
    { refused: expect.stringMatching(/^ArmadaChart ns\/cache is deployed by the run of acg\/solo/) },
    { workflowIds: ['ArmadaChart:ns/lone'] },
    // The chart's own run, not its canary alone: the run stops the canary it started.
    { workflowIds: ['ArmadaChart:ns/shop'] },
    D,
  ],
  promote: [], // where approve goes, with no gate named
  // resume and rollback go where pause goes, progress too without naming a target
  resume: [],
  rollback: [],
  progress: [],
};
for (const verb of ['resume', 'rollback'] as const) expected[verb] = expected.pause;
expected.progress = expected.pause.map((route) =>
  Object.fromEntries(Object.entries(route as object).filter(([key]) => key !== 'target')),
);
expected.promote = expected.approve.map((route) =>
  Object.fromEntries(Object.entries(route as object).filter(([key]) => key !== 'gate')),
);

describe('routeOf: which run every kind of object and every verb reaches', () => {
  it('places a chart of a manifest under its prefixed release, its group and its manifest', () => {
    expect(place('ArmadaChart', 'web', chart('web', true))).toEqual({
      kind: 'ArmadaChart',
      namespace: 'ns',
      name: 'web',
      group: 'platform',
      manifest: 'demo',
      release: { namespace: 'apps', release: 'd-web' },
      canary: true,
    });
    expect(place('ArmadaChart', 'lone', chart('lone')).release).toEqual({
      namespace: 'apps',
      release: 'lone',
    });
  });

  for (const verb of Object.keys(expected) as Verb[]) {
    it.each(objects.map(([what, p], i) => [what, p, i] as const))(
      `${verb} of %s goes where the table says`,
      (_what, p, i) => {
        expect(routeOf(p, verb)).toEqual(expected[verb][i]);
      },
    );
  }
});
