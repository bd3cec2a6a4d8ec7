import {
  PROXY_RULES,
  SECRET_REF_RULES,
  SOURCE_PLACE_RULES,
  VERIFY_RULES,
  proxyProblems,
  secretRefProblems,
  sourcePlaceProblems,
  verifyProblems,
  withoutCredentials,
  type SourcePlace,
} from '../../api/source-location';
import { validateObject } from '../../api/validate';

/** What each broken rule says, as `field: message`. */
const problems = (source: SourcePlace) =>
  sourcePlaceProblems(source).map(({ field, message }) => `${field}: ${message}`);

/** An ArmadaChart document with `source`, for the validator. */
const chart = (source: object) => ({
  apiVersion: 'armada.airshipit.org/v1alpha1',
  kind: 'ArmadaChart',
  metadata: { name: 'web' },
  spec: { release: 'web', namespace: 'apps', source },
});

/** What each rule says, as `problems` shows it. */
const SAYS = {
  localAbsolute:
    "location: must be relative to the worker's charts root (ARMADA_CHARTS_ROOT), not an absolute path",
  localParent:
    "location: must not contain a '..' segment: a local chart stays under the worker's charts root",
  subpathAbsolute: 'subpath: must be relative to the location, not an absolute path',
  subpathParent: "subpath: must not contain a '..' segment: the chart stays inside its location",
  fileUrl: 'location: must not be a file: URL: the worker fetches charts, it does not read its own disk',
  gitForms:
    'location: must be an https://, http:// or ssh:// URL or user@host:path when source.type is git (not a local path or file: URL: the worker does not read its own disk)',
};

describe('sourcePlaceProblems', () => {
  it.each<[string, SourcePlace]>([
    ['a local directory relative to the charts root', { type: 'local', location: 'charts/web' }],
    ['a local directory with a relative subpath', { type: 'local', location: 'charts', subpath: 'web' }],
    ['a local name that only starts with two dots', { type: 'local', location: 'charts/..web/x..' }],
    ['the charts root itself', { type: 'local', location: '.' }],
    ['a tar URL with a subpath', { type: 'tar', location: 'https://c.example.com/c.tgz', subpath: 'web' }],
    ['an oci reference', { type: 'oci', location: 'oci://registry.example.com/c' }],
    ['a git https URL', { type: 'git', location: 'https://git.example.com/c.git' }],
    ['a git http URL', { type: 'git', location: 'http://127.0.0.1:8080/c.git' }],
    ['a git ssh URL', { type: 'git', location: 'ssh://git@git.example.com:2222/c.git' }],
    ['a scp-like git location', { type: 'git', location: 'git@github.com:org/charts.git' }],
  ])('allows %s', (_name, source) => {
    expect(problems(source)).toEqual([]);
  });

  it.each<[string, SourcePlace, keyof typeof SAYS]>([
    ['an absolute local location', { type: 'local', location: '/etc' }, 'localAbsolute'],
    [
      "a local location that climbs out with '..'",
      { type: 'local', location: 'charts/../../etc' },
      'localParent',
    ],
    ["a local location that is only '..'", { type: 'local', location: '..' }, 'localParent'],
    ['an absolute subpath', { type: 'local', location: 'charts', subpath: '/etc' }, 'subpathAbsolute'],
    [
      "a git subpath that climbs out with '..'",
      { type: 'git', location: 'https://g.example.com/c.git', subpath: 'a/..' },
      'subpathParent',
    ],
    ['a tar file: URL', { type: 'tar', location: 'file:///srv/c.tgz' }, 'fileUrl'],
    ['a repo FILE: URL in capitals', { type: 'repo', location: 'FILE:///srv/repo' }, 'fileUrl'],
    ['a git file:// URL', { type: 'git', location: 'file:///srv/c.git' }, 'gitForms'],
    ['a git absolute path', { type: 'git', location: '/srv/c.git' }, 'gitForms'],
    ['a git relative path', { type: 'git', location: '../c.git' }, 'gitForms'],
    ['a git:// URL (unauthenticated)', { type: 'git', location: 'git://git.example.com/c.git' }, 'gitForms'],
    [
      'a git ext:: helper that runs a command',
      { type: 'git', location: 'ext::sh -c touch% /tmp/x' },
      'gitForms',
    ],
    [
      'a git ssh URL whose host ssh would read as an option',
      { type: 'git', location: 'ssh://-oProxyCommand=x/c' },
      'gitForms',
    ],
    [
      'a scp-like user ssh would read as an option',
      { type: 'git', location: '-oProxyCommand=x@host:c' },
      'gitForms',
    ],
    ['a scp-like location without a user', { type: 'git', location: 'host:c.git' }, 'gitForms'],
  ])('refuses %s', (_name, source, rule) => {
    expect(problems(source)).toEqual([SAYS[rule]]);
  });

  it('applies no rule to a field that is absent', () => {
    expect(sourcePlaceProblems({ type: 'git' })).toEqual([]);
  });
});

describe('the CRD rules', () => {
  it('give every rule a CEL expression that names its field, with the pattern the validator uses', () => {
    for (const { cel, field } of SOURCE_PLACE_RULES) {
      expect(cel).toContain(`!has(self.${field})`);
      expect(cel).toMatch(new RegExp(`self\\.${field}\\.matches\\('`));
    }
  });
});

describe('validateObject on source places', () => {
  it('names the field and the rule', () => {
    expect(validateObject(chart({ type: 'local', location: '/srv/charts/web' })).problems).toEqual([
      {
        path: 'spec.source.location',
        message: "must be relative to the worker's charts root (ARMADA_CHARTS_ROOT), not an absolute path",
      },
    ]);
  });

  it('says only that a file: URL is refused, not also that its scheme is wrong', () => {
    expect(validateObject(chart({ type: 'tar', location: 'file:///srv/c.tgz' })).problems).toEqual([
      {
        path: 'spec.source.location',
        message: 'must not be a file: URL: the worker fetches charts, it does not read its own disk',
      },
    ]);
  });
});

const withSecret = (source: SourcePlace): SourcePlace => ({ ...source, secret_ref: { name: 'login' } });

describe('where secret_ref may be set', () => {
  it.each<[string, SourcePlace]>([
    ['a tar URL', { type: 'tar', location: 'https://charts.example.com/web.tgz' }],
    ['a Helm repository', { type: 'repo', location: 'https://charts.example.com/' }],
    ['an OCI registry', { type: 'oci', location: 'oci://registry.example.com/charts/web' }],
    ['git over https', { type: 'git', location: 'https://git.example.com/charts.git' }],
    ['git over http', { type: 'git', location: 'http://127.0.0.1:8080/charts.git' }],
  ])('allows it on %s', (_name, source) => {
    expect(secretRefProblems(withSecret(source))).toEqual([]);
  });

  it.each<[string, SourcePlace, string]>([
    [
      'a local chart',
      { type: 'local', location: 'charts/web' },
      "must not be set when source.type is local: a local chart is read from the worker's own disk",
    ],
    [
      'git over ssh://',
      { type: 'git', location: 'ssh://git@git.example.com/charts.git' },
      'needs an https:// or http:// location when source.type is git: credentials for git over ssh (identity, known_hosts) are not supported',
    ],
    [
      'git at user@host:path',
      { type: 'git', location: 'git@github.com:org/charts.git' },
      'needs an https:// or http:// location when source.type is git: credentials for git over ssh (identity, known_hosts) are not supported',
    ],
  ])('refuses it on %s, saying why', (_name, source, message) => {
    expect(secretRefProblems(withSecret(source)).map((r) => r.message)).toEqual([message]);
    expect(secretRefProblems(source)).toEqual([]);
  });

  it('gives every rule a CEL expression that applies only when secret_ref is set', () => {
    for (const { cel } of SECRET_REF_RULES) expect(cel).toMatch(/^!has\(self\.secret_ref\) \|\| /);
  });

  it('makes the validator name spec.source.secret_ref', () => {
    expect(validateObject(chart(withSecret({ type: 'local', location: 'charts/web' }))).problems).toEqual([
      {
        path: 'spec.source.secret_ref',
        message:
          "must not be set when source.type is local: a local chart is read from the worker's own disk",
      },
    ]);
    expect(
      validateObject(
        chart({ type: 'repo', location: 'https://c.example.com/', chart: 'web', secret_ref: {} }),
      ),
    ).toMatchObject({ problems: [{ path: 'spec.source.secret_ref.name' }] });
  });
});

const PROXY_SAYS = {
  form: 'must be an http:// or https:// URL of the proxy with its port and no path, as http://proxy.example.com:3128',
  local: "must not be set when source.type is local: a local chart is read from the worker's own disk",
  gitSsh:
    'needs an https:// or http:// location when source.type is git: git over ssh does not go through an HTTP proxy',
};

describe('where proxy_server may be set and what it must look like', () => {
  const tar: SourcePlace = { type: 'tar', location: 'https://charts.example.com/web.tgz' };

  it.each<[string, SourcePlace]>([
    ['an http proxy for a tar URL', { ...tar, proxy_server: 'http://proxy.example.com:3128' }],
    ['an https proxy with a trailing slash', { ...tar, proxy_server: 'https://proxy.example.com:8443/' }],
    ['a proxy with a login', { ...tar, proxy_server: 'http://user:p%40ss@proxy.example.com:3128' }],
    ['a proxy at an IPv6 address', { ...tar, proxy_server: 'http://[fd00::1]:3128' }],
    [
      'a Helm repository',
      { type: 'repo', location: 'https://charts.example.com/', proxy_server: 'http://p:3128' },
    ],
    ['an OCI registry', { type: 'oci', location: 'oci://r.example.com/web', proxy_server: 'http://p:3128' }],
    [
      'git over https',
      { type: 'git', location: 'https://g.example.com/c.git', proxy_server: 'http://p:3128' },
    ],
  ])('allows %s', (_name, source) => {
    expect(proxyProblems(source)).toEqual([]);
  });

  it.each<[string, SourcePlace, (keyof typeof PROXY_SAYS)[]]>([
    ['a proxy without a port', { ...tar, proxy_server: 'http://proxy.example.com' }, ['form']],
    ['a proxy with a path', { ...tar, proxy_server: 'http://proxy.example.com:3128/squid' }, ['form']],
    ['a SOCKS proxy', { ...tar, proxy_server: 'socks5://proxy.example.com:1080' }, ['form']],
    ['a host and port without a scheme', { ...tar, proxy_server: 'proxy.example.com:3128' }, ['form']],
    ['a port Node cannot take', { ...tar, proxy_server: 'http://proxy.example.com:99999' }, ['form']],
    ['a local chart', { type: 'local', location: 'charts/web', proxy_server: 'http://p:3128' }, ['local']],
    [
      'git over ssh',
      { type: 'git', location: 'git@github.com:org/charts.git', proxy_server: 'http://p:3128' },
      ['gitSsh'],
    ],
  ])('refuses %s, saying why', (_name, source, rules) => {
    expect(proxyProblems(source).map((r) => r.message)).toEqual(rules.map((rule) => PROXY_SAYS[rule]));
  });

  it('gives every rule a CEL expression that applies only when proxy_server is set', () => {
    for (const { cel } of PROXY_RULES) expect(cel).toMatch(/^!has\(self\.proxy_server\) \|\| /);
  });

  it('makes the validator name spec.source.proxy_server, and carry a valid one', () => {
    expect(
      validateObject(chart({ type: 'local', location: 'charts/web', proxy_server: 'http://p:3128' }))
        .problems,
    ).toEqual([{ path: 'spec.source.proxy_server', message: PROXY_SAYS.local }]);
    const valid = validateObject(chart({ ...tar, proxy_server: 'http://p:3128' }));
    expect(valid).toMatchObject({ problems: [], spec: { source: { proxy_server: 'http://p:3128' } } });
  });
});

describe('where verify may be set: packaged charts, which carry a provenance file', () => {
  const verify = { keyring_secret: 'signers' };
  const UNVERIFIABLE =
    'must not be set when source.type is local or git: only a packaged chart (tar, repo, oci) has a helm provenance file to verify';

  it.each<[string, SourcePlace]>([
    ['a tar URL', { type: 'tar', location: 'https://charts.example.com/web.tgz', verify }],
    ['a Helm repository', { type: 'repo', location: 'https://charts.example.com/', verify }],
    ['an OCI registry', { type: 'oci', location: 'oci://registry.example.com/charts/web', verify }],
  ])('allows it on %s', (_name, source) => {
    expect(verifyProblems(source)).toEqual([]);
  });

  it.each<[string, SourcePlace]>([
    ['a local chart', { type: 'local', location: 'charts/web', verify }],
    ['a git chart', { type: 'git', location: 'https://git.example.com/charts.git', verify }],
  ])('refuses it on %s, saying why', (_name, source) => {
    expect(verifyProblems(source).map((r) => r.message)).toEqual([UNVERIFIABLE]);
    expect(verifyProblems({ ...source, verify: undefined })).toEqual([]);
  });

  it('gives the rule a CEL expression that applies only when verify is set', () => {
    expect(VERIFY_RULES.map((r) => r.cel)).toEqual([
      "!has(self.verify) || self.type in ['tar', 'repo', 'oci']",
    ]);
  });

  it('makes the validator name spec.source.verify, and carry a valid one', () => {
    expect(
      validateObject(chart({ type: 'git', location: 'https://g.example.com/c.git', verify })).problems,
    ).toEqual([{ path: 'spec.source.verify', message: UNVERIFIABLE }]);
    const oci = { type: 'oci', location: 'oci://r.example.com/web', verify };
    expect(validateObject(chart(oci))).toMatchObject({ problems: [], spec: { source: { verify } } });
    expect(validateObject(chart({ ...oci, verify: {} }))).toMatchObject({
      problems: [{ path: 'spec.source.verify.keyring_secret' }],
    });
  });
});

describe('withoutCredentials', () => {
  it.each([
    ['drops a login', 'http://u:p%40ss@proxy.example.com:3128', 'http://proxy.example.com:3128/'],
    ['keeps a URL without one as written', 'http://proxy.example.com:3128', 'http://proxy.example.com:3128'],
    ['keeps what is no URL as written', 'git@github.com:org/c.git', 'git@github.com:org/c.git'],
  ])('%s', (_name, url, shown) => {
    expect(withoutCredentials(url)).toBe(shown);
  });
});
