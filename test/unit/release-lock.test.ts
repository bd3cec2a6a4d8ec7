import { releaseOwnerWorkflowId, type ReleaseOwnerPlace } from '../../core/plan/release-lock';
import { undoWorkflowId } from '../../runs/day-two';
import { placeOf, routeOf, type Listings, type ObjectPlace } from '../../runs/targets';

describe('releaseOwnerWorkflowId: the workflow ID every write of a chart’s release runs under', () => {
  // prettier-ignore
  it.each<{ case: string; place: ReleaseOwnerPlace; id: string }>([
    { case: 'a chart of a group a manifest lists: the manifest’s run', place: { namespace: 'team', name: 'web', manifest: 'site', group: 'backend' }, id: 'ArmadaManifest:team/site' },
    { case: 'a chart of a group no manifest lists: the group’s run', place: { namespace: 'team', name: 'web', group: 'backend' }, id: 'ArmadaChartGroup:team/backend' },
    { case: 'a chart that stands alone: its own run (a plan of one), by its name, not its release', place: { namespace: 'team', name: 'web' }, id: 'ArmadaChart:team/web' },
  ])('$case', ({ place, id }) => {
    expect(releaseOwnerWorkflowId(place)).toBe(id);
  });
});

describe('the owner read from the listings (placeOf) is the run that deploys the chart (routeOf)', () => {
  const listings: Listings = {
    groups: [
      { name: 'backend', spec: { chart_group: ['web'] } },
      { name: 'loose', spec: { chart_group: ['worker'] } },
    ],
    manifests: [{ name: 'site', spec: { chart_groups: ['backend'], release_prefix: 'prod' } }],
  };
  const chart = (name: string) =>
    placeOf('ArmadaChart', 'team', name, { release: name, namespace: 'apps' }, listings);

  // prettier-ignore
  it.each([
    { chart: 'web', id: 'ArmadaManifest:team/site' },
    { chart: 'worker', id: 'ArmadaChartGroup:team/loose' },
    { chart: 'alone', id: 'ArmadaChart:team/alone' },
  ])('$chart: $id', ({ chart: name, id }) => {
    const place = chart(name);
    expect(releaseOwnerWorkflowId(place)).toBe(id);
    expect(routeOf(place, 'progress')).toEqual({ workflowIds: [id] });
  });
});

describe('undoWorkflowId: the workflow ID an undo runs under (the owner of what it writes)', () => {
  const deploys = 'the ID its deploys ran under';
  const chart = (extra: Partial<ObjectPlace>): ObjectPlace => ({
    kind: 'ArmadaChart',
    namespace: 'team',
    name: 'web',
    release: { namespace: 'apps', release: 'web' },
    ...extra,
  });
  // prettier-ignore
  it.each<{ case: string; place: ObjectPlace; id: string }>([
    { case: 'a manifest: its own', place: { kind: 'ArmadaManifest', namespace: 'team', name: 'site' }, id: deploys },
    { case: 'a Deployer: its own', place: { kind: 'Deployer', namespace: 'team', name: 'api' }, id: deploys },
    { case: 'a group no manifest lists: its own', place: { kind: 'ArmadaChartGroup', namespace: 'team', name: 'backend' }, id: deploys },
    { case: 'a manifest’s group: the manifest’s', place: { kind: 'ArmadaChartGroup', namespace: 'team', name: 'backend', manifest: 'site' }, id: 'ArmadaManifest:team/site' },
    { case: 'a manifest’s chart: the manifest’s', place: chart({ group: 'backend', manifest: 'site' }), id: 'ArmadaManifest:team/site' },
    { case: 'a group’s chart: the group’s', place: chart({ group: 'backend' }), id: 'ArmadaChartGroup:team/backend' },
    { case: 'a standalone chart: its own run’s', place: chart({}), id: 'ArmadaChart:team/web' },
    { case: 'a chart known by its name alone: its own run’s too', place: chart({ release: undefined }), id: 'ArmadaChart:team/web' },
  ])('$case', ({ place, id }) => {
    expect(undoWorkflowId(place, deploys)).toBe(id);
  });
});
