import { createHash } from 'node:crypto';
import { WorkflowExecutionAlreadyStartedError } from '@temporalio/client';
import {
  CANARY_LABEL,
  MANAGED_BY_LABEL,
  RELEASE_NAME_ANNOTATION,
  RELEASE_NAMESPACE_ANNOTATION,
} from '../core/labels';
import { stableJson } from '../core/stable-json';
import { driftRun, startRun } from '../runs/requests';
import { mergeDrift, type DriftedObject } from '../core/plan/drift';
import { releaseOwnerWorkflowId } from '../core/plan/release-lock';
import { latestRunOf } from './legacy-chart-run';
import { chartServiceAccount } from './run-of';
import type { BridgeContext } from './context';
import { chartRelease, ownerOf, type Cache } from './view';
import type { ArmadaObject, Change, WatchedResource } from './watch';

const HELM_SELECTOR = `${MANAGED_BY_LABEL}=Helm`;

/**
 * The kinds whose Helm-managed objects are watched for drift: the workloads, and the Services
 * and ConfigMaps they depend on. Secrets are left out on purpose: watching them would keep every
 * release's secret data in the bridge's memory.
 */
export const DRIFT_RESOURCES: readonly WatchedResource[] = [
  { kind: 'Deployment', group: 'apps', version: 'v1', plural: 'deployments' },
  { kind: 'StatefulSet', group: 'apps', version: 'v1', plural: 'statefulsets' },
  { kind: 'DaemonSet', group: 'apps', version: 'v1', plural: 'daemonsets' },
  { kind: 'Service', group: '', version: 'v1', plural: 'services' },
  { kind: 'ConfigMap', group: '', version: 'v1', plural: 'configmaps' },
].map((r) => ({ ...r, labelSelector: HELM_SELECTOR }));

/** The field manager Helm 4 applies with (server-side apply). */
const HELM_MANAGER = 'helm';

const RELEASE_KEY_PREFIX = 'Release/';

/** A drifted release's key in the bridge's queue: `Release/<namespace>/<release>`. */
export function releaseKey(namespace: string, release: string): string {
  return `${RELEASE_KEY_PREFIX}${namespace}/${release}`;
}

export function isReleaseKey(key: string): boolean {
  return key.startsWith(RELEASE_KEY_PREFIX);
}

/** The release an object belongs to, from Helm's annotations; none for an object Helm did not write. */
export function helmReleaseOf(obj: ArmadaObject): { namespace: string; release: string } | undefined {
  const { labels, annotations } = obj.metadata;
  const release = annotations?.[RELEASE_NAME_ANNOTATION];
  if (labels?.[MANAGED_BY_LABEL] !== 'Helm' || !release) return undefined;
  return { namespace: annotations?.[RELEASE_NAMESPACE_ANNOTATION] ?? obj.metadata.namespace, release };
}

interface Write {
  manager: string;
  time: number;
}

/**
 * What the bridge keeps of one Helm-managed object it watches for drift: what driftOf judges a
 * change by, and nothing else (no spec, no data, no managedFields). An object whose release no
 * ArmadaChart deploys is not kept at all (ManagedReleases).
 *
 * The watch still reads each object in full and builds this view on arrival. A metadata-only
 * watch (PartialObjectMetadata) was weighed and left out: ConfigMaps and Services have no
 * generation, so telling a change of their content from a change of their labels needs the
 * content (a hash of it suffices); and for the workloads the full object lives only until its
 * view is built, so it costs a moment's garbage, not memory kept (see docs/explanation/performance.md: bridge
 * RSS with 5,000 unmanaged Helm objects).
 */
export interface DriftView {
  namespace: string;
  name: string;
  /** The release it belongs to (helmReleaseOf). */
  release?: { namespace: string; release: string };
  canary: boolean;
  generation?: number;
  /** The newest write to the object itself by Helm (ms since the epoch). */
  helmWrite?: number;
  /** The newest write to the object itself by any other field manager. */
  foreignWrite?: Write;
  /** For a kind without a generation: sha256 of what Helm deployed (all but metadata and status). */
  content?: string;
}

/** The view driftOf judges an object by (see DriftView). */
export function driftViewOf(obj: ArmadaObject): DriftView {
  const { namespace, name, generation, labels } = obj.metadata;
  return {
    namespace,
    name,
    release: helmReleaseOf(obj),
    canary: Boolean(labels?.[CANARY_LABEL]),
    generation,
    helmWrite: newestWrite(obj, true)?.time,
    foreignWrite: newestWrite(obj, false),
    content:
      generation === undefined
        ? createHash('sha256')
            .update(stableJson(deployed(obj)))
            .digest('hex')
        : undefined,
  };
}

/**
 * The newest write to the object itself (not its status or scale subresource) by Helm, or by
 * any other field manager. Times have a resolution of one second.
 */
function newestWrite(obj: ArmadaObject, byHelm: boolean): Write | undefined {
  let newest: Write | undefined;
  for (const entry of obj.metadata.managedFields ?? []) {
    if (entry.subresource || !entry.manager || (entry.manager === HELM_MANAGER) !== byHelm) continue;
    const time = new Date(entry.time ?? 0).getTime();
    if (!newest || time > newest.time) newest = { manager: entry.manager, time };
  }
  return newest;
}

/**
 * What Helm deployed of an object: all of it but its metadata and status (and its apiVersion and
 * kind, which the items of a list leave out and watch events carry).
 */
function deployed({
  metadata: _metadata,
  status: _status,
  apiVersion: _apiVersion,
  kind: _kind,
  ...content
}: ArmadaObject): object {
  return content;
}

/**
 * Whether a change to a Helm-managed object is drift, judged from its view (DriftView) before
 * and after:
 * - deleted: always (a deploy or uninstall deleting objects is told apart later: the bridge
 *   waits for the release's run to end, and the drift run keeps only objects still in the
 *   release's current revision);
 * - updated: a new write by a field manager other than Helm, at least as new as Helm's last
 *   one (a second edit by the same manager within the same second is not told apart: the first
 *   one already counted); for kinds with a generation, only when the generation moved (a spec
 *   change: this leaves out controllers annotating and `kubectl scale`, which writes through
 *   the scale subresource); for kinds without one, only when something but the metadata and
 *   status changed (`kubectl annotate` and `kubectl label` are not drift for any kind).
 * Canary copies are never drift.
 */
export function driftOf(
  resource: WatchedResource,
  view: DriftView,
  change: Change,
  previous?: DriftView,
): DriftedObject | undefined {
  if (view.canary) return undefined;
  const id = {
    apiVersion: resource.group ? `${resource.group}/${resource.version}` : resource.version,
    kind: resource.kind,
    namespace: view.namespace,
    name: view.name,
  };
  if (change === 'delete') return { ...id, change: 'deleted' };
  if (change !== 'update' || !previous) return undefined;
  const [generation, before] = [view.generation, previous.generation];
  if (generation !== undefined && before !== undefined && generation <= before) return undefined;
  // A kind without a generation (a Service, a ConfigMap) changed what Helm deployed only when
  // something but its metadata and status did: labels and annotations are never drift.
  if (generation === undefined && view.content === previous.content) return undefined;
  const foreign = view.foreignWrite;
  if (!foreign || foreign.time < (view.helmWrite ?? 0)) return undefined;
  const foreignBefore = previous.foreignWrite;
  if (foreignBefore?.manager === foreign.manager && foreignBefore.time === foreign.time) return undefined;
  return { ...id, change: 'edited', by: foreign.manager };
}

/**
 * The releases the bridge's ArmadaCharts deploy (their release keys): the drift watches keep
 * objects of these releases only, and drop the others on arrival. It remembers which releases
 * it dropped objects of (their keys, not the objects), so that a chart taking over a release
 * already in the cluster has the drift watches list its objects again.
 */
export class ManagedReleases {
  private managed = new Set<string>();
  private readonly dropped = new Set<string>();

  constructor(private readonly cache: Cache) {}

  /** Whether the drift watches keep this object: Helm wrote it for a release the bridge manages. */
  keeps(view: DriftView): boolean {
    if (!view.release) return false;
    const key = releaseKey(view.release.namespace, view.release.release);
    if (this.managed.has(key)) return true;
    this.dropped.add(key);
    return false;
  }

  /**
   * Reads the releases again from the cached ArmadaCharts; true when one of those whose objects
   * were dropped joined (the drift watches must list them again to judge their next change).
   */
  refresh(): boolean {
    this.managed = new Set();
    for (const chart of this.cache.objects('ArmadaChart').list()) {
      const deploys = chart.deleting ? undefined : chartRelease(this.cache, chart);
      if (deploys) this.managed.add(releaseKey(deploys.namespace, deploys.release));
    }
    const rejoined = [...this.dropped].filter((key) => this.managed.has(key));
    for (const key of rejoined) this.dropped.delete(key);
    return rejoined.length > 0;
  }
}

/** Drifted objects waiting for their release's drift run, by release key. */
export class DriftTracker {
  private readonly waiting = new Map<string, DriftedObject[]>();

  /** Notes a change to a watched object; returns the release key to queue when it drifted. */
  observe(resource: WatchedResource, view: DriftView, change: Change, previous?: DriftView) {
    const { release } = view;
    const drifted = release && driftOf(resource, view, change, previous);
    if (!release || !drifted) return undefined;
    const key = releaseKey(release.namespace, release.release);
    this.putBack(key, [drifted]);
    return key;
  }

  /** Takes the objects waiting for a release. */
  take(key: string): DriftedObject[] {
    const objects = this.waiting.get(key) ?? [];
    this.waiting.delete(key);
    return objects;
  }

  /** Keeps objects for a later look (their release is busy). */
  putBack(key: string, objects: DriftedObject[]): void {
    this.waiting.set(key, mergeDrift(this.waiting.get(key) ?? [], objects));
  }
}

/**
 * Acts on a drifted release (its queue key): finds the ArmadaChart that deploys it and, unless
 * its `drift` is `ignore`, starts a drift run. While a deploy or uninstall of the release runs,
 * what changes is its own doing: the objects wait and are looked at again when it ends. A
 * release no ArmadaChart deploys is not ours.
 */
export async function handleDrift(ctx: BridgeContext, tracker: DriftTracker, key: string): Promise<void> {
  const objects = tracker.take(key);
  if (objects.length === 0) return;
  const [namespace, release] = key.slice(RELEASE_KEY_PREFIX.length).split('/');
  const chart = ctx
    .objects('ArmadaChart')
    .list()
    .find((c) => {
      if (c.deleting) return false;
      const deploys = chartRelease(ctx, c);
      return deploys?.namespace === namespace && deploys.release === release;
    });
  if (!chart?.parsed.valid) return;
  const policy = chart.parsed.spec.drift;
  const fields = { key, chart: `${chart.namespace}/${chart.name}`, policy, objects };
  if (policy === 'ignore') {
    ctx.log('info', 'drift ignored (drift: ignore)', fields);
    return;
  }
  // The repair takes the release's lock, its owner's workflow ID (core/plan/release-lock.ts):
  // while a deploy, an uninstall, an undo or another repair holds it, the objects wait and are
  // looked at again when that run ends.
  const group = ownerOf(ctx, chart);
  const manifest = group && ownerOf(ctx, group);
  const lock = releaseOwnerWorkflowId({
    namespace: chart.namespace,
    name: chart.name,
    manifest: manifest?.name,
    group: group?.name,
  });
  // An older build's run of a standalone chart in flight holds the release too (legacy-chart-run.ts).
  const { workflowId: holder, latest } = await latestRunOf(ctx.client, chart, lock);
  const waitForLock = (heldBy = holder) => {
    tracker.putBack(key, objects);
    ctx.afterRun(heldBy, key);
  };
  if (latest?.running) return waitForLock();
  const run = driftRun(
    {
      release,
      namespace,
      chart: {
        namespace: chart.namespace,
        name: chart.name,
        uid: chart.uid,
        serviceAccount: chartServiceAccount(ctx, chart),
      },
      policy,
      objects,
    },
    lock,
    latest?.memo,
  );
  try {
    await startRun(ctx.client, ctx.taskQueue, run);
  } catch (err) {
    if (!(err instanceof Error && err.cause instanceof WorkflowExecutionAlreadyStartedError)) {
      tracker.putBack(key, objects);
      throw err;
    }
    return waitForLock(lock);
  }
  ctx.log('info', 'drift run started', { ...fields, workflowId: run.workflowId });
  ctx.metrics.runStarted(key, run.memo.mode);
}
