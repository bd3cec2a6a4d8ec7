import { z } from 'zod';
import type { ObservedRelease } from '../../workflows/plan/release';
import { runHelm } from './exec';
import {
  digestOf,
  helmHistorySchema,
  isReleaseNotFound,
  lastDeployedRevision,
  OWNER_LABEL,
  OWNER_LABEL_VALUE,
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
      history.some((entry) => digestOf(entry.description) !== undefined) || (await labelledByArmada(ref)),
  };
}

/** The part of `helm get metadata -o json` read here: the release's labels. */
const metadataSchema = z.object({ labels: z.record(z.string(), z.string()).optional() });

/**
 * Whether the release carries armada's OWNER_LABEL: asked only when no revision records a digest
 * (one more helm call, on the rare path of a release whose revisions all failed, or a foreign one).
 */
async function labelledByArmada(ref: ReleaseRef): Promise<boolean> {
  const { stdout } = await runHelm(
    ['get', 'metadata', ref.release, '--namespace', ref.namespace, '--output', 'json'],
    ref.actAs,
  );
  return metadataSchema.parse(JSON.parse(stdout)).labels?.[OWNER_LABEL] === OWNER_LABEL_VALUE;
}
