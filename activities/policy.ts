import { CustomObjectsApi } from '@kubernetes/client-node';
import type { ActivityInterceptorsFactory } from '@temporalio/worker';
import { ApplicationFailure } from '@temporalio/common';
import { DOC_PAGES, pointingTo } from '../core/doc-pages';
import { GROUP, VERSION } from '../api/common';
import { policyKind } from '../api/policy';
import { policiesFor, policyViewOf, policyViolations, type PolicyView } from '../api/policy-rules';
import { describeProblems } from '../api/validate';
import { apiFailure, isStatus, kubeApi } from '../kube/client';
import type { ActingAs, RunPolicy } from '../core/contracts/acting-as';
import { NonRetryable } from '../core/failures';

/**
 * The cluster's ArmadaPolicies, read with the worker's own credentials (never a run's
 * ServiceAccount, which a tenant controls); undefined when the ArmadaPolicy CRD is not installed.
 */
export async function readPolicies(): Promise<PolicyView[] | undefined> {
  try {
    const list = (await kubeApi(CustomObjectsApi).listClusterCustomObject({
      group: GROUP,
      version: VERSION,
      plural: policyKind.plural,
    })) as { items: { metadata: { name: string }; spec?: unknown }[] };
    return list.items.map(policyViewOf);
  } catch (err) {
    if (isStatus(err, 404)) return undefined;
    throw apiFailure('list the ArmadaPolicies (the worker checks every run against them)', err);
  }
}

/**
 * What a request asks of the policies: its `policy` when the run set one; else, for a request
 * acting as a ServiceAccount in a namespace, the boundary between the two. A ServiceAccount a
 * run acts as lives in the run's object's namespace (core/plan/names.ts runServiceAccount),
 * so that namespace is the object's even where the request names nothing more.
 */
export function requestPolicy(request: unknown): RunPolicy | undefined {
  if (typeof request !== 'object' || request === null) return undefined;
  const { policy, actAs, namespace } = request as ActingAs & { namespace?: unknown };
  if (policy) return policy;
  if (!actAs || typeof namespace !== 'string') return undefined;
  return {
    kind: 'ServiceAccount',
    namespace: actAs.namespace,
    name: actAs.name,
    target: { field: 'namespace', namespace },
    serviceAccount: actAs.name,
  };
}

/**
 * Refuses `claim` (throws a non-retryable PolicyViolation naming the object, the release and
 * every rule broken) when the ArmadaPolicies do not allow it, by the rules the bridge applies
 * (api/policy-rules.ts). They hold for every run that acts as a ServiceAccount (a tenant's run,
 * whoever started it), and for a run acting as the worker itself where an ArmadaPolicy names the
 * object's namespace. A run as the worker in a namespace no policy names, or any run on a cluster
 * without the ArmadaPolicy CRD, is bounded by the worker's own RBAC only: runs from files deploy
 * there as before (docs/explanation/security.md).
 */
export function refusal(claim: RunPolicy, policies: readonly PolicyView[] | undefined): Error | undefined {
  if (!policies) return undefined;
  if (claim.serviceAccount === undefined && policiesFor(claim.namespace, policies).length === 0)
    return undefined;
  // Lockdown is the bridge's setting (ARMADA_LOCKDOWN); the policies' require_service_account holds here.
  const problems = policyViolations(claim, policies, { lockdown: false });
  if (!problems.length) return undefined;
  const release = claim.release !== undefined ? `, release ${claim.target?.namespace}/${claim.release}` : '';
  return ApplicationFailure.create({
    message: pointingTo(
      `${claim.kind} ${claim.namespace}/${claim.name}${release}: refused by the worker: ${describeProblems(problems)}`,
      DOC_PAGES.multiTenancy,
    ),
    type: NonRetryable.PolicyViolation,
    nonRetryable: true,
  });
}

/**
 * Every activity passes here before it runs: the one place every helm and Kubernetes write and
 * every impersonation of a run starts from (activities/helm/*, activities/kube/*, kubeApi and
 * helm --kube-as-user with `actAs`), so a run started by any Temporal client, bypassing the
 * bridge, meets the bridge's rules before the first request as its ServiceAccount. Requests
 * that carry neither a policy nor a ServiceAccount act as the worker, whose own RBAC bounds them.
 */
export const policyInterceptor: ActivityInterceptorsFactory = () => ({
  inbound: {
    async execute(input, next) {
      const claim = requestPolicy(input.args[0]);
      if (claim) {
        const refused = refusal(claim, await readPolicies());
        if (refused) throw refused;
      }
      return next(input);
    },
  },
});
