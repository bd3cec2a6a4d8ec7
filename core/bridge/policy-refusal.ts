import type { ArmadaChartSpec } from '../../api/chart';
import type { DeployerSpec } from '../../api/deployer';
import { policyViolations, type PolicyView, type Tenancy } from '../../api/policy-rules';
import { chartPolicySubject, deployerPolicySubject } from '../../api/policy-subjects';
import { describeProblems } from '../../api/validate';

/** A valid chart or Deployer, as the ArmadaPolicies bound it: manifests and groups carry nothing a policy bounds. */
export type PolicyBounded =
  | { kind: 'ArmadaChart'; namespace: string; name: string; spec: ArmadaChartSpec }
  | { kind: 'Deployer'; namespace: string; name: string; spec: DeployerSpec };

/**
 * Why the ArmadaPolicies (and the bridge's lockdown, `tenancy`) refuse a valid chart or Deployer,
 * as its Invalid condition says it; undefined when they allow it. It acts as its own
 * service_account_name, else as that of the manifest that lists it (`manifestServiceAccount`).
 */
export function policyRefusal(
  object: PolicyBounded,
  manifestServiceAccount: string | undefined,
  policies: readonly PolicyView[],
  tenancy: Tenancy,
): string | undefined {
  const { namespace, name } = object;
  const serviceAccount = object.spec.service_account_name ?? manifestServiceAccount;
  const subject =
    object.kind === 'ArmadaChart'
      ? chartPolicySubject({ namespace, name }, object.spec, serviceAccount)
      : deployerPolicySubject({ namespace, name }, object.spec, serviceAccount);
  const problems = policyViolations(subject, policies, tenancy);
  return problems.length ? describeProblems(problems) : undefined;
}
