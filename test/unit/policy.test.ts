import type { ChartSource } from '../../api/chart';
import { armadaPolicySpec } from '../../api/policy';
import {
  namespaceMatches,
  policyViolations,
  type PolicySubject,
  type PolicyView,
  type Tenancy,
} from '../../api/policy-rules';

const open: Tenancy = { lockdown: false };
const policy = (name: string, spec: Record<string, unknown>): PolicyView => ({
  name,
  spec: armadaPolicySpec.parse(spec),
});
const chart = (extra: Partial<PolicySubject> = {}): PolicySubject => ({
  kind: 'ArmadaChart',
  namespace: 'team-a',
  name: 'web',
  target: { field: 'spec.namespace', namespace: 'team-a' },
  source: { type: 'tar', location: 'https://charts.example.com/web-1.0.0.tgz' },
  ...extra,
});
const rules = (subject: PolicySubject, policies: PolicyView[] = [], tenancy = open) =>
  policyViolations(subject, policies, tenancy).map((p) => `${p.path}: ${p.message.split(':')[0]}`);

describe('namespaceMatches', () => {
  it.each([
    ['team-a', 'team-a', true],
    ['team-a', 'team-ab', false],
    ['team-*', 'team-a', true],
    ['team-*', 'team-', true],
    ['team-*', 'xteam-a', false],
    ['*-prod', 'shop-prod', true],
    ['*-prod', 'shop-prod-2', false],
    ['*', 'kube-system', true],
  ])('%s ~ %s → %s', (pattern, namespace, matches) => {
    expect(namespaceMatches(pattern, namespace)).toBe(matches);
  });
});

describe('policyViolations', () => {
  it('lets an object deploy into its own namespace with no policy at all', () => {
    expect(rules(chart())).toEqual([]);
  });

  it('keeps an object in its own namespace by default, naming the rule and the field', () => {
    const [problem] = policyViolations(
      chart({ target: { field: 'spec.namespace', namespace: 'kube-system' } }),
      [],
      open,
    );
    expect(problem).toEqual({
      path: 'spec.namespace',
      message:
        "namespace boundary: kube-system is not ArmadaChart team-a/web's own namespace, and no ArmadaPolicy grants it",
    });
  });

  it('grants another namespace only through a policy that applies to the object’s namespace', () => {
    const toShared = policy('shared', { namespaces: ['team-*'], target_namespaces: ['shared-*'] });
    const other = policy('other', { namespaces: ['team-b'], target_namespaces: ['kube-system'] });
    const into = (namespace: string) => chart({ target: { field: 'spec.namespace', namespace } });
    expect(rules(into('shared-cache'), [toShared, other])).toEqual([]);
    expect(rules(into('kube-system'), [toShared, other])).toEqual(['spec.namespace: namespace boundary']);
    expect(policyViolations(into('kube-system'), [toShared, other], open)[0].message).toContain(
      'none of the ArmadaPolicies for team-a (shared) lists it in target_namespaces',
    );
  });

  it('joins the allow-lists of every policy that applies; one that sets none adds nothing', () => {
    const internal = policy('internal', {
      namespaces: ['team-a'],
      url_prefixes: ['https://charts.internal/'],
    });
    const partner = policy('partner', { namespaces: ['team-*'], url_prefixes: ['oci://registry.partner/'] });
    const grantsOnly = policy('grants', { namespaces: ['team-a'], target_namespaces: ['x'] });
    const at = (location: string, type = 'tar') => chart({ source: { type, location } });
    expect(rules(at('https://charts.internal/web.tgz'), [internal, partner, grantsOnly])).toEqual([]);
    expect(rules(at('oci://registry.partner/web', 'oci'), [internal, partner])).toEqual([]);
    expect(rules(at('https://evil.example/web.tgz'), [internal, partner, grantsOnly])).toEqual([
      'spec.source.location: url_prefixes',
    ]);
    expect(rules(at('https://evil.example/web.tgz'), [grantsOnly])).toEqual([]);
  });

  it('checks source types and canary analysis URLs against the same policies', () => {
    const strict = policy('strict', {
      namespaces: ['team-a'],
      source_types: ['oci', 'repo'],
      url_prefixes: ['https://charts.example.com/', 'http://metrics.team-a/'],
    });
    expect(
      rules(
        chart({ analysisUrls: [{ path: 'spec.canary.analysis.url', url: 'http://metrics.team-a/ok' }] }),
        [strict],
      ),
    ).toEqual(['spec.source.type: source_types']);
    expect(
      rules(
        chart({ analysisUrls: [{ path: 'spec.canary.analysis.url', url: 'http://169.254.169.254/latest' }] }),
        [strict],
      ),
    ).toEqual(['spec.source.type: source_types', 'spec.canary.analysis.url: url_prefixes']);
  });

  it('judges a source with credentials (secret_ref) by its location, as any other', () => {
    const strict = policy('strict', {
      namespaces: ['team-a'],
      source_types: ['repo'],
      url_prefixes: ['https://charts.example.com/'],
    });
    const at = (location: string): ChartSource => ({
      type: 'repo',
      location,
      chart: 'web',
      secret_ref: { name: 'login' },
    });
    expect(rules(chart({ source: at('https://charts.example.com/team-a') }), [strict])).toEqual([]);
    expect(rules(chart({ source: at('https://evil.example/') }), [strict])).toEqual([
      'spec.source.location: url_prefixes',
    ]);
  });

  it('matches a source’s proxy too, by its URL without a login, and shows it without one', () => {
    const strict = policy('strict', {
      namespaces: ['team-a'],
      url_prefixes: ['https://charts.example.com/', 'http://proxy.internal:3128/'],
    });
    const through = (proxy: string) =>
      chart({ source: { type: 'tar', location: 'https://charts.example.com/web.tgz', proxy_server: proxy } });
    expect(rules(through('http://proxy.internal:3128'), [strict])).toEqual([]);
    expect(rules(through('http://squid:s3cret@proxy.internal:3128'), [strict])).toEqual([]);
    const [refused] = policyViolations(through('http://squid:s3cret@169.254.169.254:80'), [strict], open);
    expect(refused).toEqual({
      path: 'spec.source.proxy_server',
      message:
        'url_prefixes: http://169.254.169.254/ starts with none of the url_prefixes of the ArmadaPolicies for team-a (strict)',
    });
  });

  it('does not match a local chart’s directory against URL prefixes', () => {
    const strict = policy('strict', {
      namespaces: ['team-a'],
      url_prefixes: ['https://charts.example.com/'],
    });
    expect(rules(chart({ source: { type: 'local', location: 'charts/web' } }), [strict])).toEqual([]);
  });

  it('requires a service account under lockdown or a policy that says so, not otherwise', () => {
    const requiring = policy('sa', { namespaces: ['team-a'], require_service_account: true });
    expect(rules(chart(), [], open)).toEqual([]);
    expect(rules(chart(), [], { lockdown: true })).toEqual([
      'spec.service_account_name: service account required',
    ]);
    expect(rules(chart(), [requiring])).toEqual(['spec.service_account_name: service account required']);
    expect(rules(chart({ serviceAccount: 'deployer' }), [requiring], { lockdown: true })).toEqual([]);
  });

  it('lets a chart adopt a release only where a policy allows adoption', () => {
    const adopting = policy('adopt', { namespaces: ['team-a'], allow_adoption: true });
    expect(rules(chart({ adopt: true }))).toEqual(['spec.adopt: allow_adoption']);
    expect(
      rules(chart({ adopt: true }), [policy('b', { namespaces: ['team-b'], allow_adoption: true })]),
    ).toEqual(['spec.adopt: allow_adoption']);
    expect(rules(chart({ adopt: true }), [adopting])).toEqual([]);
  });

  it('ignores a policy whose spec does not parse: it grants nothing', () => {
    const broken: PolicyView = { name: 'broken' };
    expect(rules(chart({ target: { field: 'spec.namespace', namespace: 'team-b' } }), [broken])).toEqual([
      'spec.namespace: namespace boundary',
    ]);
  });
});
