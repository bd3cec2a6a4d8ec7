/**
 * The documentation pages errors and refusals point to, as paths from the repository root: the
 * page that explains a refusal is named in its message, so whoever meets it finds why and what
 * to do. Pages only, never headings (those move).
 */
export const DOC_PAGES = {
  /** ArmadaPolicy rules: namespace boundaries, sources, adoption, ServiceAccounts. */
  multiTenancy: 'docs/how-to/multi-tenancy.md',
  /** Every field of the custom resources, and what makes an object Invalid. */
  resources: 'docs/reference/resources.md',
  /** By symptom; among them a release stuck in pending-install, -upgrade or -rollback. */
  troubleshooting: 'docs/how-to/troubleshooting.md',
} as const;

export type DocPage = (typeof DOC_PAGES)[keyof typeof DOC_PAGES];

/** `message (see docs/…)`. */
export function pointingTo(message: string, page: DocPage): string {
  return `${message} (see ${page})`;
}
