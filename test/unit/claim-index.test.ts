import { ClaimIndex } from '../../bridge/claims';
import { listedObjects, rivalClaims, type ClaimDocument } from '../../core/plan/manifest';
import { chartDoc, claimKey, deployerDoc, groupDoc, manifestDoc } from '../fixtures/claim-documents';

const key = claimKey;

describe('ClaimIndex (rival claims kept current one change at a time)', () => {
  it('an added chart that claims a held release is refused; the holder is not', () => {
    const index = ClaimIndex.of([chartDoc('good', 'web', 0)]);
    index.set(chartDoc('copy', 'web', 1, 'elsewhere'));
    expect(index.rivals(key(chartDoc('good', 'web', 0)))).toEqual([]);
    expect(index.rivals(key(chartDoc('copy', 'web', 1, 'elsewhere')))).toEqual([
      'release apps/web is already deployed by ArmadaChart default/good',
    ]);
  });

  it('an update that changes the claimed release frees the old one and takes the new one', () => {
    const index = ClaimIndex.of([
      chartDoc('old', 'web', 0),
      chartDoc('new', 'web', 1),
      chartDoc('api', 'api', 2),
    ]);
    expect(index.rivals(key(chartDoc('new', 'web', 1)))).toEqual([
      'release apps/web is already deployed by ArmadaChart default/old',
    ]);
    index.set(chartDoc('old', 'api', 0));
    expect(index.rivals(key(chartDoc('new', 'web', 1)))).toEqual([]);
    expect(index.rivals(key(chartDoc('old', 'api', 0)))).toEqual([]);
    expect(index.rivals(key(chartDoc('api', 'api', 2)))).toEqual([
      'release apps/api is already deployed by ArmadaChart default/old',
    ]);
  });

  it('a deleted holder hands its claims to the next oldest claimant', () => {
    const index = ClaimIndex.of([chartDoc('a', 'web', 0), chartDoc('b', 'web', 1), chartDoc('c', 'web', 2)]);
    index.delete(key(chartDoc('a', 'web', 0)));
    expect(index.rivals(key(chartDoc('b', 'web', 1)))).toEqual([]);
    expect(index.rivals(key(chartDoc('c', 'web', 2)))).toEqual([
      'release apps/web is already deployed by ArmadaChart default/b',
    ]);
    expect(index.rivals(key(chartDoc('a', 'web', 0)))).toEqual([]); // not indexed: claims nothing
  });

  it('ties on creation time go by kind, namespace and name, whatever the order of arrival', () => {
    const index = ClaimIndex.of([
      chartDoc('b', 'web', 0),
      deployerDoc('b', 'web', 'nginx', 0),
      chartDoc('a', 'web', 0),
    ]);
    expect(index.rivals(key(chartDoc('b', 'web', 0)))).toEqual([
      'release apps/web is already deployed by ArmadaChart default/a',
    ]);
    expect(index.rivals(key(chartDoc('a', 'web', 0)))).toEqual([]);
  });

  it("a chart a group lists claims through the group, and a manifest's prefix applies to the group's charts", () => {
    const index = ClaimIndex.of([chartDoc('web', 'web', 0), chartDoc('taken', 'demo-web', 0)]);
    index.set(groupDoc('g', ['web'], 1));
    expect(index.rivals(key(chartDoc('web', 'web', 0)))).toEqual([]); // deployed by its group
    index.set(manifestDoc('m', 'demo', ['g'], 2));
    expect(index.rivals(key(groupDoc('g', ['web'], 1)))).toEqual([]); // deployed by its manifest
    expect(index.rivals(key(manifestDoc('m', 'demo', ['g'], 2)))).toEqual([
      'release apps/demo-web is already deployed by ArmadaChart default/taken',
    ]);
    // The chart's release changes under the manifest: the manifest's claims follow.
    index.set(chartDoc('web', 'shop', 0));
    expect(index.rivals(key(manifestDoc('m', 'demo', ['g'], 2)))).toEqual([]);
    // The group stops listing it: the chart runs on its own again.
    index.set(groupDoc('g', [], 1));
    index.set(chartDoc('rival', 'shop', 3));
    expect(index.rivals(key(chartDoc('rival', 'shop', 3)))).toEqual([
      'release apps/shop is already deployed by ArmadaChart default/web',
    ]);
  });

  it('a Deployer a group lists claims through the group; a second group listing it is refused', () => {
    const nginx = deployerDoc('nginx', 'web', 'nginx', 0);
    const index = ClaimIndex.of([nginx, { ...groupDoc('shop', [], 1), spec: { deployers: ['nginx'] } }]);
    expect(index.rivals(key(nginx))).toEqual([]); // deployed by its group
    const rival = { ...groupDoc('other', [], 2), spec: { deployers: ['nginx'] } };
    index.set(rival);
    expect(index.rivals(key(rival))).toEqual([
      'Deployer default/nginx is already deployed by ArmadaChartGroup default/shop',
      'Deployment web/nginx-* is already deployed by ArmadaChartGroup default/shop',
    ]);
    // The first group stops listing it: the other group holds it now.
    index.set(groupDoc('shop', [], 1));
    expect(index.rivals(key(rival))).toEqual([]);
  });

  it('answers as rivalClaims over every document, and who lists each, after any sequence of changes', () => {
    // A small world where names collide often: random sets and deletes, checked after each.
    // mulberry32: a seeded generator, so a failure repeats.
    let seed = 7;
    const random = (n: number) => {
      seed = (seed + 0x6d2b79f5) | 0;
      let t = Math.imul(seed ^ (seed >>> 15), 1 | seed);
      t = (t + Math.imul(t ^ (t >>> 7), 61 | t)) ^ t;
      return ((t ^ (t >>> 14)) >>> 0) % n;
    };
    const pick = <T>(items: readonly T[]) => items[random(items.length)];
    const names = ['a', 'b', 'c', 'd'];
    const releases = ['web', 'api', 'demo-web'];
    const randomDoc = (): ClaimDocument => {
      const name = pick(names);
      const minute = random(3);
      const doc = pick([
        () => chartDoc(name, pick(releases), minute, pick(['default', 'other'])),
        () => {
          const group = groupDoc(
            name,
            names.filter(() => random(3) === 0),
            minute,
          );
          return { ...group, spec: { ...group.spec, deployers: names.filter(() => random(4) === 0) } };
        },
        () =>
          manifestDoc(
            name,
            pick(['demo', '']),
            names.filter(() => random(3) === 0),
            minute,
          ),
        () => deployerDoc(name, 'web', pick(['nginx', 'api']), minute),
      ])();
      return random(6) === 0 ? { ...doc, spec: { ...doc.spec, target_state: 'uninitialized' } } : doc;
    };
    const world = new Map<string, ClaimDocument>();
    const index = new ClaimIndex();
    const described = (d: ClaimDocument) => `${d.kind} ${d.namespace}/${d.name}`;
    for (let step = 0; step < 800; step++) {
      const doc = randomDoc();
      if (random(4) === 0) {
        world.delete(described(doc));
        index.delete(key(doc));
      } else {
        world.set(described(doc), doc);
        index.set(doc);
      }
      const docs = [...world.values()];
      const byIndex = docs.map((target) => index.rivals(key(target)));
      const byRebuild = docs.map((target) => rivalClaims(key(target), docs));
      if (JSON.stringify(byIndex) !== JSON.stringify(byRebuild))
        expect({ step, byIndex }).toEqual({ step, byIndex: byRebuild });
      // An owner, and one of the documents that list it, exactly when any does.
      for (const target of docs) {
        const listers = docs.filter((d) => listedObjects(d).includes(described(target))).map(described);
        const owner = index.owner(key(target));
        if (owner ? !listers.includes(described(owner)) : listers.length)
          expect({ step, target: described(target), owner }).toEqual({ listers });
      }
    }
  });
});

describe('ClaimIndex.owner (who lists, and so drives, an object)', () => {
  const web = key(chartDoc('web', 'web', 0));

  it('a group that lists a chart owns it; a manifest that lists the group owns the group', () => {
    const index = ClaimIndex.of([chartDoc('web', 'web', 0), groupDoc('apps', ['web'], 1)]);
    expect(index.owner(web)).toMatchObject({ kind: 'ArmadaChartGroup', name: 'apps' });
    expect(index.owner(key(groupDoc('apps', [], 1)))).toBeUndefined();
    index.set(manifestDoc('m', 'p', ['apps'], 2));
    expect(index.owner(key(groupDoc('apps', [], 1)))).toMatchObject({ kind: 'ArmadaManifest', name: 'm' });
    expect(index.owner(key(manifestDoc('m', 'p', [], 2)))).toBeUndefined();
  });

  it('an object not yet cached has its owner already: what lists it is indexed by name', () => {
    const index = ClaimIndex.of([groupDoc('apps', ['web'], 1)]);
    expect(index.owner(web)).toMatchObject({ name: 'apps' });
  });

  it('a change that drops a listed name frees it; one that adds a name takes it', () => {
    const index = ClaimIndex.of([chartDoc('web', 'web', 0), groupDoc('apps', ['web'], 1)]);
    index.set(groupDoc('apps', ['api'], 1));
    expect(index.owner(web)).toBeUndefined();
    expect(index.owner(key(chartDoc('api', 'api', 0)))).toMatchObject({ name: 'apps' });
    index.set(groupDoc('apps', ['api', 'web'], 1));
    expect(index.owner(web)).toMatchObject({ name: 'apps' });
  });

  it('a deleted owner drives nothing; the next lister takes over', () => {
    const index = ClaimIndex.of([groupDoc('a', ['web'], 1), groupDoc('b', ['web'], 2)]);
    expect(index.owner(web)).toMatchObject({ name: 'a' });
    index.delete(key(groupDoc('a', [], 1)));
    expect(index.owner(web)).toMatchObject({ name: 'b' });
    index.delete(key(groupDoc('b', [], 2)));
    expect(index.owner(web)).toBeUndefined();
  });

  it('of rival groups the one holding the claim owns the chart (the oldest), whatever the order of arrival', () => {
    const rivals = [groupDoc('late', ['web'], 3), groupDoc('early', ['web'], 1), groupDoc('mid', ['web'], 2)];
    expect(ClaimIndex.of(rivals).owner(web)).toMatchObject({ name: 'early' });
    expect(ClaimIndex.of([...rivals].reverse()).owner(web)).toMatchObject({ name: 'early' });
  });

  it('of rival groups the one whose manifest holds the claim owns the chart, though the other is older', () => {
    // m (10:00) lists b (10:02); a (10:01) runs on its own: m holds the chart, a is the rival.
    const index = ClaimIndex.of([
      chartDoc('web', 'web', 0),
      groupDoc('a', ['web'], 1),
      groupDoc('b', ['web'], 2),
      manifestDoc('m', 'p', ['b'], 0),
    ]);
    expect(index.rivals(key(groupDoc('a', [], 1)))).toContain(
      'ArmadaChart default/web is already deployed by ArmadaManifest default/m',
    );
    expect(index.owner(web)).toMatchObject({ name: 'b' });
    expect(index.owner(key(groupDoc('b', [], 2)))).toMatchObject({ name: 'm' });
  });

  it('rivals that claim nothing (uninitialized): the oldest lister owns it', () => {
    const idle = (doc: ClaimDocument): ClaimDocument => ({
      ...doc,
      spec: { ...doc.spec, target_state: 'uninitialized' },
    });
    const index = ClaimIndex.of([idle(groupDoc('b', ['web'], 1)), idle(groupDoc('a', ['web'], 2))]);
    expect(index.owner(web)).toMatchObject({ name: 'b' });
  });

  it("a Deployer is owned through a group's deployers, a chart of the same name through its chart_group", () => {
    const withDeployer = (name: string, charts: string[], deployers: string[], minute: number) => {
      const group = groupDoc(name, charts, minute);
      return { ...group, spec: { ...group.spec, deployers } };
    };
    const index = ClaimIndex.of([
      withDeployer('charts', ['web'], [], 1),
      withDeployer('rollouts', [], ['web'], 2),
    ]);
    expect(index.owner(web)).toMatchObject({ name: 'charts' });
    expect(index.owner(key(deployerDoc('web', 'web', 'web', 0)))).toMatchObject({ name: 'rollouts' });
    index.set(withDeployer('rollouts', [], [], 2));
    expect(index.owner(key(deployerDoc('web', 'web', 'web', 0)))).toBeUndefined();
    expect(index.owner(web)).toMatchObject({ name: 'charts' });
  });
});
