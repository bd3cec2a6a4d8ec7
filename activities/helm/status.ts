import type { ObservedRelease } from '../../workflows/plan/release';
import { runHelm } from './exec';
import {
  digestOf,
  helmHistorySchema,
  isReleaseNotFound,
  lastDeployedRevision,
  OWNER_LABEL,
  recordedDigest,
  type ReleaseRef,
} from './release';

/**
 * Activity: what the chart workflow decides from — the current revision, its status, the digest
 * armada recorded and the last revision that deployed — or null when there is no release.
 * Writes nothing.
 */
export async function helmObserve(ref: ReleaseRef): Promise<ObservedRelease | null> {
  let stdout: string;
  try {
    ({ stdout } = await runHelm(
      ['history', ref.release, '--namespace', ref.namespace, '--max', '20', '--output', 'json'],
      ref.actAs,
    ));
  } catch (err) {
    if (isReleaseNotFound(err)) return null;
    throw err;
  }
  const history = helmHistorySchema.parse(JSON.parse(stdout));
  if (history.length === 0) return null;
  const current = history.reduce((a, b) => (b.revision > a.revision ? b : a));
  return {
    revision: current.revision,
    status: current.status,
    digest: recordedDigest(history, current),
    lastDeployedRevision: lastDeployedRevision(history),
    updated: current.updated,
    description: current.description,
    createdByArmada:
      history.some((entry) => digestOf(entry.description) !== undefined) || (await ownerLabelled(ref)),
  };
}

/**
 * Whether the release's current revision carries armada's owner label: asked only of a release
 * whose last 20 revisions record no armada-digest (helm replaces a failed or interrupted
 * revision's description), so a release armada deployed costs no second helm call.
 */
async function ownerLabelled(ref: ReleaseRef): Promise<boolean> {
  const { stdout } = await runHelm(
    ['get', 'metadata', ref.release, '--namespace', ref.namespace, '--output', 'json'],
    ref.actAs,
  );
  const { labels } = JSON.parse(stdout) as { labels?: Record<string, string> };
  return labels?.[OWNER_LABEL.key] === OWNER_LABEL.value;
}
