/**
 * Where a chart source may point: the worker fetches charts, it never reads its own disk outside
 * the charts root. One table, read three times: the CRD's CEL rules (the API server refuses),
 * the validator (the bridge marks an object Invalid) and the worker (prepareChart refuses again,
 * for objects written before these rules and for callers that skip the validator).
 *
 * - `local`: `location` is relative to the worker's charts root (`ARMADA_CHARTS_ROOT`, else its
 *   working directory) and has no `..` segment.
 * - every type: `subpath` is relative to the location and has no `..` segment.
 * - `tar`, `repo`, `oci`: never a `file:` URL.
 * - `git`: an `https://`, `http://` or `ssh://` URL, or scp-like `user@host:path`. Not `file:`,
 *   not a filesystem path (git would read the worker's disk), not `git://` (unauthenticated
 *   and unencrypted) and not `<helper>::<address>` (`ext::` runs a command).
 */

/** The fields these rules look at, of any source type. */
export interface SourcePlace {
  type: string;
  location?: string;
  subpath?: string;
  secret_ref?: { name: string };
  proxy_server?: string;
  verify?: { keyring_secret: string };
}

export interface SourcePlaceRule {
  field: 'location' | 'subpath';
  /** Why the value is refused, as the validator and the worker say it after the field's name. */
  message: string;
  /** The CEL rule the CRD carries, `self` being the source; true when the value is allowed. */
  cel: string;
  /** The same rule in TypeScript: true when the value is allowed. */
  allows(source: SourcePlace): boolean;
}

/**
 * Patterns written once for both layers: JavaScript's RegExp and CEL's `matches` (RE2) read
 * them alike.
 */
const ABSOLUTE = '^/';
const PARENT_SEGMENT = '(^|/)\\.\\.(/|$)';
const FILE_URL = '^(?i)file:';
/** A user or host starting with '-' would reach ssh as an option. */
const GIT_URL = '^(https?|ssh)://[^-\\s]\\S*$';
/** scp-like `user@host:path`; a user starting with '-' would reach ssh as an option. */
const GIT_SCP = '^[A-Za-z0-9._~][A-Za-z0-9._~-]*@[A-Za-z0-9][A-Za-z0-9.-]*:\\S+$';

/** `(?i)` is RE2's; JavaScript takes the flag instead. */
const js = (pattern: string) =>
  pattern.startsWith('^(?i)') ? new RegExp(`^${pattern.slice(5)}`, 'i') : new RegExp(pattern);

const cel = (pattern: string) => `'${pattern.replaceAll('\\', '\\\\')}'`;

/** A rule on one field, applying to some source types (all when `types` is empty). */
function rule(
  field: SourcePlaceRule['field'],
  types: string[],
  allowed: { matching?: string; notMatching?: string },
  message: string,
): SourcePlaceRule {
  const appliesCel = types.map((type) => `self.type != '${type}'`).join(' && ');
  const checkCel = [
    allowed.matching && `self.${field}.matches(${cel(allowed.matching)})`,
    allowed.notMatching && `!self.${field}.matches(${cel(allowed.notMatching)})`,
  ]
    .filter(Boolean)
    .join(' && ');
  const matching = allowed.matching === undefined ? undefined : js(allowed.matching);
  const notMatching = allowed.notMatching === undefined ? undefined : js(allowed.notMatching);
  return {
    field,
    message,
    cel: [appliesCel, `!has(self.${field})`, checkCel].filter(Boolean).join(' || '),
    allows(source) {
      const value = source[field];
      if (value === undefined || (types.length > 0 && !types.includes(source.type))) return true;
      return (matching?.test(value) ?? true) && !(notMatching?.test(value) ?? false);
    },
  };
}

export const SOURCE_PLACE_RULES: readonly SourcePlaceRule[] = [
  rule(
    'location',
    ['local'],
    { notMatching: ABSOLUTE },
    "must be relative to the worker's charts root (ARMADA_CHARTS_ROOT), not an absolute path",
  ),
  rule(
    'location',
    ['local'],
    { notMatching: PARENT_SEGMENT },
    "must not contain a '..' segment: a local chart stays under the worker's charts root",
  ),
  rule('subpath', [], { notMatching: ABSOLUTE }, 'must be relative to the location, not an absolute path'),
  rule(
    'subpath',
    [],
    { notMatching: PARENT_SEGMENT },
    "must not contain a '..' segment: the chart stays inside its location",
  ),
  rule(
    'location',
    ['tar', 'repo', 'oci'],
    { notMatching: FILE_URL },
    'must not be a file: URL: the worker fetches charts, it does not read its own disk',
  ),
  rule(
    'location',
    ['git'],
    { matching: `${GIT_URL}|${GIT_SCP}` },
    'must be an https://, http:// or ssh:// URL or user@host:path when source.type is git ' +
      '(not a local path or file: URL: the worker does not read its own disk)',
  ),
];

/** The rules `source` breaks, in table order: none when it may be fetched. */
export function sourcePlaceProblems(source: SourcePlace): SourcePlaceRule[] {
  return SOURCE_PLACE_RULES.filter((r) => !r.allows(source));
}

/**
 * A rule on where `secret_ref` or `proxy_server` may be set and what it holds; read by the same
 * three layers as the place rules.
 */
export interface SourceFieldRule {
  message: string;
  /** The CEL rule the CRD carries, `self` being the source; true when the source is allowed. */
  cel: string;
  allows(source: SourcePlace): boolean;
}

const HTTP_URL = '^https?://';

/**
 * The rules of a field that only a fetch over the network, and for git one over http(s), can
 * use: refused on a local source, and on a git location over ssh, saying `gitSshWhy`.
 */
function networkFetchOnly(field: 'secret_ref' | 'proxy_server', gitSshWhy: string): SourceFieldRule[] {
  return [
    {
      message: "must not be set when source.type is local: a local chart is read from the worker's own disk",
      cel: `!has(self.${field}) || self.type != 'local'`,
      allows: (source) => source[field] === undefined || source.type !== 'local',
    },
    {
      message: `needs an https:// or http:// location when source.type is git: ${gitSshWhy}`,
      cel: `!has(self.${field}) || self.type != 'git' || !has(self.location) || self.location.matches(${cel(HTTP_URL)})`,
      allows: (source) =>
        source[field] === undefined ||
        source.type !== 'git' ||
        source.location === undefined ||
        js(HTTP_URL).test(source.location),
    },
  ];
}

/**
 * Which sources take credentials from a Secret: every type the worker fetches over the network,
 * git only over http(s). ssh keys would need an ssh server in the tests to be proven; until then
 * a git ssh location with a `secret_ref` is refused rather than fetched without its credentials.
 */
export const SECRET_REF_RULES: readonly SourceFieldRule[] = networkFetchOnly(
  'secret_ref',
  'credentials for git over ssh (identity, known_hosts) are not supported',
);

/** The `secret_ref` rules `source` breaks: none when its credentials, if any, can be used. */
export function secretRefProblems(source: SourcePlace): SourceFieldRule[] {
  return SECRET_REF_RULES.filter((r) => !r.allows(source));
}

/**
 * An http:// or https:// proxy as scheme, optional `user:password@`, host and port: the form
 * git (curl), helm (Go) and the worker's own download all take. The port is required, since
 * curl and Go default to different ones (1080 and 80); a path, which some would ignore and
 * others not, is refused beyond a trailing '/'.
 */
const PROXY_URL = '^https?://[^/?#\\s]+:[0-9]+/?$';

/**
 * Where `proxy_server` may be set and what it must look like: a proxy for the fetch of one chart
 * (never the worker's), so only a source fetched over HTTP can use it.
 */
export const PROXY_RULES: readonly SourceFieldRule[] = [
  {
    message:
      'must be an http:// or https:// URL of the proxy with its port and no path, as http://proxy.example.com:3128',
    cel: `!has(self.proxy_server) || self.proxy_server.matches(${cel(PROXY_URL)})`,
    // The same pattern as CEL, and a URL Node can parse (a port past 65535 passes the pattern).
    allows: (source) =>
      source.proxy_server === undefined ||
      (js(PROXY_URL).test(source.proxy_server) && URL.canParse(source.proxy_server)),
  },
  ...networkFetchOnly('proxy_server', 'git over ssh does not go through an HTTP proxy'),
];

/** The `proxy_server` rules `source` breaks: none when its fetch can go through that proxy. */
export function proxyProblems(source: SourcePlace): SourceFieldRule[] {
  return PROXY_RULES.filter((r) => !r.allows(source));
}

/** The source types whose chart is a packaged archive that helm signs: a `.prov` file beside it. */
export const VERIFIABLE_SOURCE_TYPES = ['tar', 'repo', 'oci'] as const;

/**
 * Where `verify` may be set: only on a source that serves a packaged chart, which helm's
 * provenance file signs (`<archive>.prov` beside a tar URL or in a repository, a layer of the OCI
 * artifact). A chart directory (local, git) has no provenance: refused, never deployed unverified.
 */
export const VERIFY_RULES: readonly SourceFieldRule[] = [
  {
    message: `must not be set when source.type is local or git: only a packaged chart (${VERIFIABLE_SOURCE_TYPES.join(', ')}) has a helm provenance file to verify`,
    cel: `!has(self.verify) || self.type in [${VERIFIABLE_SOURCE_TYPES.map((t) => `'${t}'`).join(', ')}]`,
    allows: (source) =>
      source.verify === undefined || (VERIFIABLE_SOURCE_TYPES as readonly string[]).includes(source.type),
  },
];

/** The `verify` rules `source` breaks: none when its chart, if it must be verified, can be. */
export function verifyProblems(source: SourcePlace): SourceFieldRule[] {
  return VERIFY_RULES.filter((r) => !r.allows(source));
}

/**
 * `url` as a message, a log line or a status may show it: without its user name and password
 * (a proxy's or a server's); anything that is not a URL as it is.
 */
export function withoutCredentials(url: string): string {
  if (!URL.canParse(url)) return url;
  const parsed = new URL(url);
  if (!parsed.username && !parsed.password) return url;
  parsed.username = '';
  parsed.password = '';
  return parsed.toString();
}
