import { z } from 'zod';

/** Where a Helm release lives. */
export interface ReleaseRef {
  release: string;
  namespace: string;
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
  chart?: { name: string; version: string };
}

/** Parses helm's `-o json` output for one release. */
export function parseRelease(json: string): ReleaseStatus {
  const doc = helmReleaseSchema.parse(JSON.parse(json));
  return {
    release: doc.name,
    namespace: doc.namespace,
    revision: doc.version,
    status: doc.info.status,
    chart: doc.chart && { name: doc.chart.metadata.name, version: doc.chart.metadata.version },
  };
}
