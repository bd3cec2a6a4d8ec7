/**
 * What the ArmadaPolicies allow, as pure functions of the policies and what an object asks for:
 * the bridge checks an object with them before it starts a run (bridge/reconcile.ts), and the
 * worker checks every run with them again before it acts (activities/policy.ts), so a run that
 * bypasses the bridge meets the same rules.
 */
import { armadaPolicySpec, type ArmadaPolicySpec } from './policy';
import { withoutCredentials } from './source-location';
import type { Problem } from './validate';

/** An ArmadaPolicy as the bridge caches it (and the worker reads it): its spec, or none when the spec does not parse. */
export interface PolicyView {
  name: string;
  /** Undefined for a policy whose spec is malformed: it grants nothing. */
  spec?: ArmadaPolicySpec;
}

/** The view of an ArmadaPolicy object (the API server's schema has checked it; zod parses it again). */
export function policyViewOf(obj: { metadata: { name: string }; spec?: unknown }): PolicyView {
  const parsed = armadaPolicySpec.safeParse(obj.spec);
  return { name: obj.metadata.name, spec: parsed.success ? parsed.data : undefined };
}

/** The bridge's own tenancy settings (bridge/config.ts). */
export interface Tenancy {
  /** ARMADA_LOCKDOWN: every chart and Deployer must name a service account (or its manifest must). */
  lockdown: boolean;
  /** ARMADA_DEFAULT_SERVICE_ACCOUNT: what a run acts as when its object names none (not under lockdown). */
  defaultServiceAccount?: string;
}

/** What an object asks for that a policy bounds, read from its parsed spec. */
export interface PolicySubject {
  kind: string;
  namespace: string;
  name: string;
  /** Where its release (a chart) or its Deployments (a Deployer) go, with the field that says so. */
  target?: { field: string; namespace: string };
  source?: { type: string; location?: string; proxy_server?: string };
  /** The URLs a canary's analysis reaches, each with its field (analysisUrls). */
  analysisUrls?: { path: string; url: string }[];
  /** Its own service_account_name, else the one of the manifest that lists it. */
  serviceAccount?: string;
  adopt?: boolean;
}

/**
 * A proxy as url_prefixes match it, and as a refusal shows it: written out by URL (always with
 * a '/' after the port) and without its login, which says nothing of where the worker connects.
 */
function proxyAsMatched(proxy: string): string {
  return URL.canParse(proxy) ? withoutCredentials(new URL(proxy).href) : proxy;
}

/** `team-*` matches `team-a`; without a `*`, only the name itself. */
export function namespaceMatches(pattern: string, namespace: string): boolean {
  // The schema leaves only [-a-z0-9*] in a pattern: nothing else a RegExp would read.
  return new RegExp(`^${pattern.replaceAll('*', '.*')}$`).test(namespace);
}

/** The valid policies that apply to objects of `namespace`. */
export function policiesFor(namespace: string, policies: readonly PolicyView[]): Required<PolicyView>[] {
  return policies.filter(
    (p): p is Required<PolicyView> =>
      p.spec !== undefined && p.spec.namespaces.some((pattern) => namespaceMatches(pattern, namespace)),
  );
}

const names = (policies: readonly { name: string }[]) => policies.map((p) => p.name).join(', ');

/**
 * An allow-list check: the policies that set the list (`listed`) are joined; none setting it
 * allows anything. Returns the policies that set it when `allowed` finds no match in any.
 */
function refusedBy<T>(
  applying: Required<PolicyView>[],
  list: (spec: ArmadaPolicySpec) => readonly T[] | undefined,
  allowed: (entry: T) => boolean,
): Required<PolicyView>[] | undefined {
  const listing = applying.filter((p) => list(p.spec) !== undefined);
  if (listing.length === 0) return undefined;
  return listing.some((p) => list(p.spec)!.some(allowed)) ? undefined : listing;
}

/**
 * What `subject` asks for that no policy allows, one Problem per rule broken, each naming the
 * rule and the policies it came from. By default (no policy) an object stays in its own
 * namespace, uses any source and URL, needs no service account (unless the bridge is locked
 * down) and adopts nothing.
 */
export function policyViolations(
  subject: PolicySubject,
  policies: readonly PolicyView[],
  tenancy: Tenancy,
): Problem[] {
  const applying = policiesFor(subject.namespace, policies);
  const problems: Problem[] = [];
  const from = applying.length
    ? `the ArmadaPolicies for ${subject.namespace} (${names(applying)})`
    : undefined;

  const { target } = subject;
  if (
    target &&
    target.namespace !== subject.namespace &&
    !applying.some((p) =>
      (p.spec.target_namespaces ?? []).some((pattern) => namespaceMatches(pattern, target.namespace)),
    )
  ) {
    problems.push({
      path: target.field,
      message: `namespace boundary: ${target.namespace} is not ${subject.kind} ${subject.namespace}/${subject.name}'s own namespace, and ${from ? `none of ${from} lists it in target_namespaces` : 'no ArmadaPolicy grants it'}`,
    });
  }

  const { source } = subject;
  if (source) {
    const byType = refusedBy(
      applying,
      (s) => s.source_types,
      (type) => type === source.type,
    );
    if (byType)
      problems.push({
        path: 'spec.source.type',
        message: `source_types: ${source.type} is not allowed by the ArmadaPolicies for ${subject.namespace} (${names(byType)})`,
      });
  }
  // Every URL the worker would reach for this object; a local chart's directory is no URL.
  const urls = [
    ...(source && source.type !== 'local' && source.location !== undefined
      ? [{ path: 'spec.source.location', url: source.location }]
      : []),
    ...(source?.proxy_server !== undefined
      ? [{ path: 'spec.source.proxy_server', url: proxyAsMatched(source.proxy_server) }]
      : []),
    ...(subject.analysisUrls ?? []),
  ];
  for (const { path, url } of urls) {
    const byUrl = refusedBy(
      applying,
      (s) => s.url_prefixes,
      (prefix) => url.startsWith(prefix),
    );
    if (byUrl)
      problems.push({
        path,
        message: `url_prefixes: ${url} starts with none of the url_prefixes of the ArmadaPolicies for ${subject.namespace} (${names(byUrl)})`,
      });
  }

  if (subject.serviceAccount === undefined) {
    const requiring = applying.filter((p) => p.spec.require_service_account);
    if (tenancy.lockdown || requiring.length)
      problems.push({
        path: 'spec.service_account_name',
        message: `service account required: ${
          tenancy.lockdown
            ? 'the bridge is locked down (ARMADA_LOCKDOWN)'
            : `require_service_account in ${names(requiring)}`
        }; name one here or on the manifest that lists it`,
      });
  }

  if (subject.adopt && !applying.some((p) => p.spec.allow_adoption))
    problems.push({
      path: 'spec.adopt',
      message: `allow_adoption: ${from ? `none of ${from} allows adoption` : 'no ArmadaPolicy allows adoption'}`,
    });

  return problems;
}
