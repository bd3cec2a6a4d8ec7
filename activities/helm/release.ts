import { z } from 'zod';
import type { ReleaseRef } from '../../core/contracts/helm';

/** helm's own default `--timeout`: how long an operation given none may take. */
export const HELM_DEFAULT_TIMEOUT_SECONDS = 300;

/**
 * armada writes `--description armada-digest=hmac-sha256:<hex>` (before digests were keyed:
 * `armada-digest=<sha256 hex>`) so it can tell an unchanged release (activities/charts/digest.ts).
 */
export const DIGEST_PREFIX = 'armada-digest=';

/**
 * The Helm release label (`--labels`, kept on the release's storage Secret) armada writes with
 * every install and upgrade, so a release stays known as its own when no revision holds a
 * digest: helm replaces a failed revision's description with its error, and a first install
 * that failed has no other revision.
 */
export const OWNER_LABEL = 'armada.airshipit.org/deployed-by';
export const OWNER_LABEL_VALUE = 'armada-temporal';

/** How helm says a release does not exist. */
const NOT_FOUND = /release: not found/;

/** Whether a helm command failed because the release does not exist (and for no other reason). */
export function isReleaseNotFound(err: unknown): boolean {
  return err instanceof Error && NOT_FOUND.test(err.message);
}

/**
 * The part of helm's `-o json` release document the product reads. Helm prints more; zod keeps
 * what we use and fails loudly if helm's output format ever changes under us.
 */
export const helmReleaseSchema = z.object({
  name: z.string(),
  namespace: z.string(),
  version: z.number().int(),
  info: z.object({
    status: z.string(),
    description: z.string().optional(),
    last_deployed: z.string().optional(),
  }),
  chart: z
    .object({
      metadata: z.object({ name: z.string(), version: z.string() }),
    })
    .optional(),
});

/** A release as activities return it to workflows: small, plain data. */
export interface ReleaseStatus extends ReleaseRef {
  revision: number;
  status: string;
  digest?: string;
  lastDeployed?: string;
  chart?: { name: string; version: string };
}

/** The digest armada recorded in a release description, if it wrote one. */
export function digestOf(description: string | undefined): string | undefined {
  return description?.startsWith(DIGEST_PREFIX) ? description.slice(DIGEST_PREFIX.length) : undefined;
}

/** Parses helm's `-o json` output for one release. */
export function parseRelease(json: string): ReleaseStatus {
  const doc = helmReleaseSchema.parse(JSON.parse(json));
  return {
    release: doc.name,
    namespace: doc.namespace,
    revision: doc.version,
    status: doc.info.status,
    digest: digestOf(doc.info.description),
    lastDeployed: doc.info.last_deployed,
    chart: doc.chart && { name: doc.chart.metadata.name, version: doc.chart.metadata.version },
  };
}

/** One entry of `helm history -o json`. */
export const helmHistorySchema = z.array(
  z.object({
    revision: z.number().int(),
    status: z.string(),
    description: z.string().optional(),
    updated: z.string().optional(),
  }),
);
export type HelmHistory = z.infer<typeof helmHistorySchema>;

/** How helm describes a revision written by `helm rollback`. */
const ROLLBACK_DESCRIPTION = /^Rollback to (\d+)$/;

/**
 * The digest a history entry deploys: its own, or — for a rollback (a drift repair re-applies
 * the current revision that way) — the digest of the revision it rolled back to, so an unchanged
 * spec still reads as unchanged afterwards. Undefined when that revision is not in `history`.
 */
export function recordedDigest(history: HelmHistory, entry: HelmHistory[number]): string | undefined {
  const seen = new Set<number>();
  for (let at: HelmHistory[number] | undefined = entry; at && !seen.has(at.revision);) {
    seen.add(at.revision);
    const digest = digestOf(at.description);
    if (digest) return digest;
    const rolledBackTo: string | undefined = ROLLBACK_DESCRIPTION.exec(at.description ?? '')?.[1];
    at = rolledBackTo ? history.find((h) => h.revision === Number(rolledBackTo)) : undefined;
  }
  return undefined;
}

/** The newest revision that ran: deployed now, or deployed once and superseded since. */
export function lastDeployedRevision(history: HelmHistory): number | undefined {
  const ran = history.filter((h) => h.status === 'deployed' || h.status === 'superseded');
  return ran.length ? Math.max(...ran.map((h) => h.revision)) : undefined;
}
