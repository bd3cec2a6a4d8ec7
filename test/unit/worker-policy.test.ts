import { ApplicationFailure } from '@temporalio/common';
import { armadaChartSpec } from '../../api/chart';
import { armadaPolicySpec } from '../../api/policy';
import type { PolicyView } from '../../api/policy-rules';
import { chartPolicySubject } from '../../api/policy-subjects';
import { refusal, requestPolicy } from '../../activities/policy';
import type { RunPolicy } from '../../core/contracts/acting-as';
import { NonRetryable } from '../../core/failures';

const policy = (name: string, spec: Record<string, unknown>): PolicyView => ({
  name,
  spec: armadaPolicySpec.parse(spec),
});
const spec = armadaChartSpec.parse({
  release: 'web',
  namespace: 'kube-system',
  source: { type: 'tar', location: 'https://charts.example.com/web-1.0.0.tgz' },
  service_account_name: 'deployer',
});
/** What a chart run of team-a's `web` aimed at kube-system asks of the worker. */
const intoKubeSystem: RunPolicy = {
  ...chartPolicySubject({ namespace: 'team-a', name: 'web' }, spec, 'deployer'),
  release: 'web',
};
const teamA = policy('team-a', { namespaces: ['team-a'], target_namespaces: ['shared'] });

describe("the worker's policy check (activities/policy.ts)", () => {
  it('refuses a run the policies of its namespace do not allow: non-retryable, naming the object, the release and the rule', () => {
    const refused = refusal(intoKubeSystem, [teamA]);
    expect(refused).toBeInstanceOf(ApplicationFailure);
    expect(refused).toMatchObject({ type: NonRetryable.PolicyViolation, nonRetryable: true });
    expect(refused!.message).toBe(
      "ArmadaChart team-a/web, release kube-system/web: refused by the worker: spec.namespace: namespace boundary: kube-system is not ArmadaChart team-a/web's own namespace, and none of the ArmadaPolicies for team-a (team-a) lists it in target_namespaces (see docs/how-to/multi-tenancy.md)",
    );
  });

  it('lets through what a policy grants', () => {
    const granted = policy('kube-system-too', { namespaces: ['team-*'], target_namespaces: ['kube-system'] });
    expect(refusal(intoKubeSystem, [teamA, granted])).toBeUndefined();
  });

  it("holds a run acting as a ServiceAccount to the bridge's boundary even where no policy names its namespace", () => {
    const refused = refusal(intoKubeSystem, [policy('team-b', { namespaces: ['team-b'] })]);
    expect(refused?.message).toBe(
      "ArmadaChart team-a/web, release kube-system/web: refused by the worker: spec.namespace: namespace boundary: kube-system is not ArmadaChart team-a/web's own namespace, and no ArmadaPolicy grants it (see docs/how-to/multi-tenancy.md)",
    );
    expect(refusal(intoKubeSystem, [])).toBeInstanceOf(ApplicationFailure);
  });

  it('holds a run acting as the worker itself, where no policy names its namespace, or a cluster without the ArmadaPolicy CRD, to nothing but RBAC (runs from files deploy as before)', () => {
    const asWorker: RunPolicy = { ...intoKubeSystem, serviceAccount: undefined };
    expect(refusal(asWorker, [policy('team-b', { namespaces: ['team-b'] })])).toBeUndefined();
    expect(refusal(intoKubeSystem, undefined)).toBeUndefined();
  });

  it('applies every rule the bridge does: sources, adoption, a required ServiceAccount', () => {
    const strict = policy('strict', {
      namespaces: ['team-a'],
      url_prefixes: ['https://charts.team-a.example/'],
      require_service_account: true,
    });
    const own: RunPolicy = {
      ...chartPolicySubject(
        { namespace: 'team-a', name: 'web' },
        { ...spec, adopt: true },
        undefined,
        'team-a',
      ),
      release: 'web',
    };
    const message = refusal(own, [strict])!.message;
    expect(message).toContain('spec.source.location: url_prefixes');
    expect(message).toContain('spec.service_account_name: service account required');
    expect(message).toContain('spec.adopt: allow_adoption');
  });

  it("reads a request's claim: its policy, else the boundary between its ServiceAccount's namespace and its own", () => {
    expect(requestPolicy({ release: 'web', namespace: 'kube-system', policy: intoKubeSystem })).toBe(
      intoKubeSystem,
    );
    const claim = requestPolicy({
      namespace: 'kube-system',
      actAs: { namespace: 'team-a', name: 'deployer' },
    });
    expect(refusal(claim!, [teamA])!.message).toContain(
      "namespace: namespace boundary: kube-system is not ServiceAccount team-a/deployer's own namespace",
    );
    // Acting as the worker itself, with nothing to check: the worker's own RBAC bounds it.
    expect(requestPolicy({ namespace: 'kube-system' })).toBeUndefined();
    expect(requestPolicy('web')).toBeUndefined();
  });
});
