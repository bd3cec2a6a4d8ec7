import { CoreV1Api } from '@kubernetes/client-node';
import { gunzipSync } from 'node:zlib';
import { z } from 'zod';
import { apiFailure, kubeApi } from '../../kube/client';
import type { ObservedRelease } from '../../core/plan/release';
import { comparableDigest, isUnkeyedDigest } from '../charts/digest';
import { digestKey } from '../charts/digest-key';
import { currentActivity } from '../process';
import {
  digestOf,
  helmReleaseSchema,
  lastDeployedRevision,
  OWNER_LABEL,
  OWNER_LABEL_VALUE,
  recordedDigest,
  type HelmHistory,
} from './release';
import type { ReleaseRef } from '../../core/contracts/helm';

/** How many revisions observe reads, newest first: as `helm history --max 20`. */
const HISTORY_DEPTH = 20;

/**
 * Activity: what the chart workflow decides from — the current revision, its status, the digest
 * armada recorded (an unkeyed one recorded before digests were keyed, keyed with this worker's
 * key: comparableDigest) and the last revision that deployed — or null when there is no release.
 * Writes nothing.
 *
 * It reads helm's own storage (the release's Secrets, helm's default driver) through the
 * Kubernetes API rather than running `helm history`: the same records, as the run's identity,
 * without a helm process (about 100 ms of every chart run, on the path of each deploy).
 */
export function helmObserve(ref: ReleaseRef): Promise<ObservedRelease | null> {
  return observeRelease(ref, digestKey());
}

/**
 * helmObserve with the digest key given; without one (`armadactl diff` where no key is readable)
 * the recorded digest is returned as it is.
 */
export async function observeRelease(
  ref: ReleaseRef,
  key: Uint8Array | undefined,
): Promise<ObservedRelease | null> {
  const stored = await storedRevisions(ref);
  if (stored.length === 0) return null;
  const history: HelmHistory = stored.map((r) => r.entry);
  const current = stored[stored.length - 1];
  const recorded = recordedDigest(history, current.entry);
  // How an operator sees which releases the roll-in of keyed digests still has to reach.
  if (isUnkeyedDigest(recorded))
    currentActivity()?.log.info(
      'release recorded with an unkeyed digest: its next upgrade records a keyed one',
      {
        release: ref.release,
        namespace: ref.namespace,
        revision: current.entry.revision,
      },
    );
  return {
    revision: current.entry.revision,
    status: current.entry.status,
    digest: key ? comparableDigest(recorded, key) : recorded,
    lastDeployedRevision: lastDeployedRevision(history),
    updated: current.entry.updated,
    description: current.entry.description,
    createdByArmada:
      history.some((entry) => digestOf(entry.description) !== undefined) ||
      current.labels[OWNER_LABEL] === OWNER_LABEL_VALUE,
  };
}

/** One revision as helm stored it: its history entry and its Secret's labels (helm's `--labels`). */
interface StoredRevision {
  entry: HelmHistory[number];
  labels: Record<string, string>;
}

/**
 * The release's last HISTORY_DEPTH revisions, oldest first, from helm's Secrets
 * (`sh.helm.release.v1.<release>.v<N>`, labels `owner=helm,name=<release>`). Only those are
 * decoded: the revision number is a label.
 */
async function storedRevisions(ref: ReleaseRef): Promise<StoredRevision[]> {
  let items;
  try {
    ({ items } = await kubeApi(CoreV1Api, ref.actAs).listNamespacedSecret({
      namespace: ref.namespace,
      labelSelector: `owner=helm,name=${ref.release}`,
    }));
  } catch (err) {
    throw apiFailure(`observe release ${ref.namespace}/${ref.release} (helm's release Secrets)`, err);
  }
  const version = (labels: Record<string, string> | undefined) => Number(labels?.version ?? NaN);
  return items
    .filter((secret) => Number.isInteger(version(secret.metadata?.labels)) && secret.data?.release)
    .sort((a, b) => version(a.metadata?.labels) - version(b.metadata?.labels))
    .slice(-HISTORY_DEPTH)
    .map((secret) => {
      const doc = decodeStoredRelease(secret.data!.release, `${ref.namespace}/${secret.metadata?.name}`);
      return {
        entry: {
          revision: doc.version,
          status: doc.info.status,
          description: doc.info.description,
          updated: doc.info.last_deployed,
        },
        labels: secret.metadata?.labels ?? {},
      };
    });
}

/** gzip's magic bytes, which helm's encoded releases start with. */
const GZIP_MAGIC = Buffer.from([0x1f, 0x8b]);

/**
 * A release as helm's Secret driver stores it: the Secret's value (base64, as the API returns
 * every Secret value) holds helm's own base64 of the gzipped release JSON.
 */
export function decodeStoredRelease(value: string, where: string): z.infer<typeof helmReleaseSchema> {
  try {
    const packed = Buffer.from(Buffer.from(value, 'base64').toString('utf8'), 'base64');
    const json = packed.subarray(0, 2).equals(GZIP_MAGIC) ? gunzipSync(packed) : packed;
    return helmReleaseSchema.parse(JSON.parse(json.toString('utf8')));
  } catch (err) {
    throw new Error(`helm's release record ${where} cannot be read: ${(err as Error).message}`, {
      cause: err,
    });
  }
}
