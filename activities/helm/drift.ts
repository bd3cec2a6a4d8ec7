import { objectId, type DriftedObject } from '../../core/plan/drift';
import { releaseManifest, renderedObjects } from './manifest';
import type { ReleaseRef } from '../../core/contracts/helm';
import { helmObserve } from './status';

export interface DriftCheckRequest extends ReleaseRef {
  objects: DriftedObject[];
}

export interface DriftCheck {
  /** The release's current revision and its status (`deployed`, `pending-upgrade`, ...). */
  revision: number;
  status: string;
  /** The objects that are part of that revision: the drift to act on. */
  drifted: DriftedObject[];
}

/**
 * The objects of `objects` that the manifest of a release (namespace: the release's, where a
 * document names none) contains; the others were never Helm's to repair, or an upgrade has
 * removed them since.
 */
export function inManifest(manifest: string, namespace: string, objects: DriftedObject[]): DriftedObject[] {
  const ids = new Set(
    renderedObjects(manifest).map((o) =>
      objectId({
        apiVersion: String(o.apiVersion),
        kind: String(o.kind),
        namespace: String(o.metadata?.namespace ?? namespace),
        name: String(o.metadata?.name),
      }),
    ),
  );
  return objects.filter((o) => ids.has(objectId(o)));
}

/**
 * Activity: which of the objects reported as drifted belong to the release's current revision,
 * or null when the release does not exist (uninstalled meanwhile). Writes nothing.
 */
export async function helmCheckDrift(req: DriftCheckRequest): Promise<DriftCheck | null> {
  const observed = await helmObserve(req);
  if (!observed) return null;
  const manifest = await releaseManifest(req, observed.revision);
  return {
    revision: observed.revision,
    status: observed.status,
    drifted: inManifest(manifest, req.namespace, req.objects),
  };
}
