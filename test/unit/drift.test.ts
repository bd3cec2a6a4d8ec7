import type { V1ManagedFieldsEntry } from '@kubernetes/client-node';
import { inManifest } from '../../activities/helm/drift';
import {
  DRIFT_RESOURCES,
  DriftTracker,
  ManagedReleases,
  driftOf,
  driftViewOf,
  helmReleaseOf,
  releaseKey,
} from '../../bridge/drift';
import type { Cache, ObjectView } from '../../bridge/view';
import type { ArmadaObject, Change, WatchedResource } from '../../bridge/watch';
import { describeDrift, mergeDrift, type DriftedObject } from '../../core/plan/drift';

const deployments = DRIFT_RESOURCES.find((r) => r.kind === 'Deployment')!;
const services = DRIFT_RESOURCES.find((r) => r.kind === 'Service')!;

const write = (manager: string, time: string, subresource?: string): V1ManagedFieldsEntry => ({
  manager,
  operation: manager === 'helm' ? 'Apply' : 'Update',
  time: new Date(time),
  ...(subresource && { subresource }),
});

/** A Deployment `web` of release `apps/web`, as Helm 4 leaves it. */
function object(
  opts: {
    generation?: number;
    writes?: V1ManagedFieldsEntry[];
    labels?: Record<string, string>;
    annotations?: Record<string, string>;
    spec?: object;
  } = {},
): ArmadaObject {
  return {
    apiVersion: 'apps/v1',
    kind: 'Deployment',
    spec: opts.spec ?? { replicas: 2 },
    metadata: {
      name: 'web',
      namespace: 'apps',
      generation: opts.generation,
      labels: { 'app.kubernetes.io/managed-by': 'Helm', ...opts.labels },
      annotations: {
        'meta.helm.sh/release-name': 'web',
        'meta.helm.sh/release-namespace': 'apps',
        ...opts.annotations,
      },
      managedFields: opts.writes ?? [write('helm', '2026-11-22T10:00:00Z')],
    },
  };
}

/** driftOf on the views the bridge keeps of the objects. */
const judge = (resource: WatchedResource, after: ArmadaObject, change: Change, before?: ArmadaObject) =>
  driftOf(resource, driftViewOf(after), change, before && driftViewOf(before));

const edited = (by: string): DriftedObject => ({
  apiVersion: 'apps/v1',
  kind: 'Deployment',
  namespace: 'apps',
  name: 'web',
  change: 'edited',
  by,
});

describe('driftOf', () => {
  it('a deletion is drift (whether Helm deleted it is decided later, against the release)', () => {
    expect(judge(deployments, object(), 'delete')).toEqual({
      apiVersion: 'apps/v1',
      kind: 'Deployment',
      namespace: 'apps',
      name: 'web',
      change: 'deleted',
    });
  });

  it('a spec change by another field manager is drift, named after it', () => {
    const before = object({ generation: 1 });
    const after = object({
      generation: 2,
      writes: [write('helm', '2026-11-22T10:00:00Z'), write('kubectl-edit', '2026-11-22T10:05:00Z')],
    });
    expect(judge(deployments, after, 'update', before)).toEqual(edited('kubectl-edit'));
  });

  it('an edit within the second of Helm’s last write still counts', () => {
    const after = object({
      generation: 2,
      writes: [write('helm', '2026-11-22T10:00:00Z'), write('kubectl-set', '2026-11-22T10:00:00Z')],
    });
    expect(judge(deployments, after, 'update', object({ generation: 1 }))).toEqual(edited('kubectl-set'));
  });

  it('Helm’s own upgrade is not drift, even after an earlier edit', () => {
    const before = object({
      generation: 2,
      writes: [write('helm', '2026-11-22T10:00:00Z'), write('kubectl-edit', '2026-11-22T10:05:00Z')],
    });
    const after = object({
      generation: 3,
      writes: [write('helm', '2026-11-22T10:09:00Z'), write('kubectl-edit', '2026-11-22T10:05:00Z')],
    });
    expect(judge(deployments, after, 'update', before)).toBeUndefined();
  });

  it('kubectl scale (the scale subresource) and status writes are not drift', () => {
    const after = object({
      generation: 2,
      writes: [
        write('helm', '2026-11-22T10:00:00Z'),
        write('kubectl', '2026-11-22T10:05:00Z', 'scale'),
        write('kube-controller-manager', '2026-11-22T10:05:01Z', 'status'),
      ],
    });
    expect(judge(deployments, after, 'update', object({ generation: 1 }))).toBeUndefined();
  });

  it('a metadata write that leaves the generation alone (a controller annotating) is not drift', () => {
    const after = object({
      generation: 1,
      writes: [
        write('helm', '2026-11-22T10:00:00Z'),
        write('kube-controller-manager', '2026-11-22T10:00:01Z'),
      ],
    });
    expect(judge(deployments, after, 'update', object({ generation: 1 }))).toBeUndefined();
  });

  it('for a kind without a generation (a Service), a new write by another manager is drift, once', () => {
    const first = object({
      writes: [write('helm', '2026-11-22T10:00:00Z'), write('kubectl-edit', '2026-11-22T10:05:00Z')],
      spec: { replicas: 3 },
    });
    expect(judge(services, first, 'update', object())).toMatchObject({
      kind: 'Service',
      apiVersion: 'v1',
      change: 'edited',
      by: 'kubectl-edit',
    });
    // The same write seen again (a later update by nobody new) is not reported twice.
    expect(judge(services, first, 'update', first)).toBeUndefined();
  });

  it('for a kind without a generation, a write of metadata alone (kubectl annotate, kubectl label) is not drift', () => {
    const annotated = object({
      writes: [write('helm', '2026-11-22T10:00:00Z'), write('kubectl-annotate', '2026-11-22T10:05:00Z')],
      annotations: { team: 'x' },
    });
    expect(judge(services, annotated, 'update', object())).toBeUndefined();
    const labelled = object({
      writes: [write('helm', '2026-11-22T10:00:00Z'), write('kubectl-label', '2026-11-22T10:05:00Z')],
      labels: { team: 'x' },
    });
    expect(judge(services, labelled, 'update', object())).toBeUndefined();
  });

  it('adds, resyncs and canary copies are never drift', () => {
    expect(judge(deployments, object(), 'add')).toBeUndefined();
    expect(judge(deployments, object(), 'resync')).toBeUndefined();
    const copy = object({ labels: { 'armada.airshipit.org/canary': 'true' } });
    expect(judge(deployments, copy, 'delete')).toBeUndefined();
  });
});

describe('helmReleaseOf', () => {
  it('reads the release from Helm’s annotations', () => {
    expect(helmReleaseOf(object())).toEqual({ namespace: 'apps', release: 'web' });
  });

  it('is undefined for an object without Helm’s label', () => {
    const obj = object();
    obj.metadata.labels = {};
    expect(helmReleaseOf(obj)).toBeUndefined();
  });
});

describe('driftViewOf', () => {
  it('keeps what the judgement needs: no spec, no data, no managedFields', () => {
    const view = driftViewOf(
      object({
        generation: 4,
        writes: [write('helm', '2026-11-22T10:00:00Z'), write('kubectl-edit', '2026-11-22T10:05:00Z')],
      }),
    );
    expect(view).toEqual({
      namespace: 'apps',
      name: 'web',
      release: { namespace: 'apps', release: 'web' },
      canary: false,
      generation: 4,
      helmWrite: Date.parse('2026-11-22T10:00:00Z'),
      foreignWrite: { manager: 'kubectl-edit', time: Date.parse('2026-11-22T10:05:00Z') },
      content: undefined,
    });
  });

  it('for a kind without a generation, a hash of the content: the same whatever the key order or apiVersion/kind, changed by the data', () => {
    const configMap = (data: Record<string, string>, from: 'list' | 'watch'): ArmadaObject =>
      ({
        ...(from === 'watch' && { apiVersion: 'v1', kind: 'ConfigMap' }),
        data,
        metadata: { name: 'web', namespace: 'apps', resourceVersion: from },
      }) as ArmadaObject;
    const listed = driftViewOf(configMap({ a: '1', b: '2' }, 'list'));
    expect(listed.content).toMatch(/^[0-9a-f]{64}$/);
    expect(driftViewOf(configMap({ b: '2', a: '1' }, 'watch')).content).toBe(listed.content);
    expect(driftViewOf(configMap({ a: '1', b: '3' }, 'watch')).content).not.toBe(listed.content);
  });
});

describe('ManagedReleases', () => {
  const chartView = (name: string, release: string) =>
    ({
      kind: 'ArmadaChart',
      namespace: 'crs',
      name,
      deleting: false,
      release: { namespace: 'apps', release },
    }) as ObjectView<'ArmadaChart'>;
  let charts: ObjectView<'ArmadaChart'>[] = [];
  const cache = {
    objects: () => ({ get: () => undefined, list: () => charts }),
    claims: { owner: () => undefined },
  } as unknown as Cache;
  const ofRelease = (release: string) =>
    driftViewOf(object({ annotations: { 'meta.helm.sh/release-name': release } }));

  it('keeps objects of the releases the ArmadaCharts deploy only; a release whose objects were dropped asks for a new list when it joins', () => {
    charts = [chartView('web', 'web')];
    const managed = new ManagedReleases(cache);
    managed.refresh();
    expect(managed.keeps(ofRelease('web'))).toBe(true);
    expect(managed.keeps(ofRelease('other'))).toBe(false);
    const notHelm = driftViewOf(object());
    notHelm.release = undefined;
    expect(managed.keeps(notHelm)).toBe(false);
    // A new release with nothing dropped: no new list.
    charts = [...charts, chartView('fresh', 'fresh')];
    expect(managed.refresh()).toBe(false);
    // A chart taking over a release already in the cluster: its objects are listed again, once.
    charts = [...charts, chartView('adopt', 'other')];
    expect(managed.refresh()).toBe(true);
    expect(managed.keeps(ofRelease('other'))).toBe(true);
    expect(managed.refresh()).toBe(false);
    // A deleted chart's release is no longer kept.
    charts = charts.filter((c) => c.name !== 'web');
    managed.refresh();
    expect(managed.keeps(ofRelease('web'))).toBe(false);
  });
});

describe('DriftTracker', () => {
  it('collects drifted objects per release until taken; put back, they merge with newer ones', () => {
    const tracker = new DriftTracker();
    expect(tracker.observe(deployments, driftViewOf(object()), 'add')).toBeUndefined();
    const key = tracker.observe(deployments, driftViewOf(object()), 'delete');
    expect(key).toBe(releaseKey('apps', 'web'));
    const taken = tracker.take(key!);
    expect(taken.map((o) => o.change)).toEqual(['deleted']);
    expect(tracker.take(key!)).toEqual([]);
    tracker.putBack(key!, taken);
    tracker.observe(services, driftViewOf(object()), 'delete');
    expect(tracker.take(key!).map((o) => `${o.kind} ${o.change}`)).toEqual([
      'Deployment deleted',
      'Service deleted',
    ]);
  });
});

describe('describeDrift and mergeDrift', () => {
  const deleted = (name: string): DriftedObject => ({
    apiVersion: 'v1',
    kind: 'ConfigMap',
    namespace: 'apps',
    name,
    change: 'deleted',
  });

  it('names up to five objects, then counts', () => {
    expect(describeDrift([edited('kubectl-edit'), deleted('a')])).toBe(
      'Deployment web edited by kubectl-edit, ConfigMap a deleted',
    );
    const many = ['a', 'b', 'c', 'd', 'e', 'f', 'g'].map(deleted);
    expect(describeDrift(many)).toBe(
      'ConfigMap a deleted, ConfigMap b deleted, ConfigMap c deleted, ConfigMap d deleted, ConfigMap e deleted and 2 more',
    );
  });

  it('keeps one entry per object, the newest', () => {
    const merged = mergeDrift(
      [edited('kubectl-edit'), deleted('a')],
      [{ ...edited('x'), change: 'deleted' }],
    );
    expect(merged.map((o) => `${o.kind} ${o.name} ${o.change}`)).toEqual([
      'Deployment web deleted',
      'ConfigMap a deleted',
    ]);
  });
});

describe('inManifest', () => {
  const manifest = `---
# Source: hello/templates/service.yaml
apiVersion: v1
kind: Service
metadata:
  name: web
---
apiVersion: apps/v1
kind: Deployment
metadata:
  name: web
  namespace: apps
`;

  it('keeps the objects the release’s manifest contains (namespace defaulting to the release’s)', () => {
    const service = { ...deleted('web'), kind: 'Service' };
    const gone = { ...deleted('old') };
    expect(inManifest(manifest, 'apps', [edited('k'), service, gone])).toEqual([edited('k'), service]);
  });

  it('matches namespace, kind and apiVersion exactly', () => {
    expect(inManifest(manifest, 'other', [{ ...deleted('web'), kind: 'Service' }])).toEqual([]);
    expect(inManifest(manifest, 'apps', [{ ...edited('k'), apiVersion: 'apps/v1beta1' }])).toEqual([]);
  });

  function deleted(name: string): DriftedObject {
    return { apiVersion: 'v1', kind: 'ConfigMap', namespace: 'apps', name, change: 'deleted' };
  }
});
