/**
 * What an ArmadaChart or a Deployer asks of the ArmadaPolicies (a PolicySubject), read from its
 * spec in one place: the bridge checks the object with it, and a run's workflow hands it to the
 * worker, which checks it again (activities/policy.ts). No zod here, so workflow code can use it.
 */
import type { CanaryAnalysis } from './analysis';
import type { ArmadaChartSpec } from './chart';
import type { DeployerSpec } from './deployer';
import type { PolicySubject } from './policy-rules';

/** An object by its own namespace and name. */
interface ObjectName {
  namespace: string;
  name: string;
}

/**
 * The URLs an analysis makes the worker reach, each with the field that names it under `path`
 * (e.g. `spec.canary.analysis`): what an ArmadaPolicy's url_prefixes bound.
 */
export function analysisUrls(
  analysis: CanaryAnalysis | undefined,
  path: string,
): { path: string; url: string }[] {
  return [
    ...(analysis?.url !== undefined ? [{ path: `${path}.url`, url: analysis.url }] : []),
    ...(analysis?.prometheus
      ? [{ path: `${path}.prometheus.address`, url: analysis.prometheus.address }]
      : []),
  ];
}

/**
 * A chart's subject: `serviceAccount` is what its runs act as (its own, else its manifest's);
 * `target`, the namespace its release goes into (its spec's).
 */
export function chartPolicySubject(
  chart: ObjectName,
  spec: ArmadaChartSpec,
  serviceAccount: string | undefined,
  target = spec.namespace,
): PolicySubject {
  return {
    kind: 'ArmadaChart',
    ...chart,
    target: { field: 'spec.namespace', namespace: target },
    source: spec.source,
    analysisUrls: analysisUrls(spec.canary?.analysis, 'spec.canary.analysis'),
    serviceAccount,
    adopt: spec.adopt,
  };
}

/** A Deployer's subject: `serviceAccount` as for a chart. */
export function deployerPolicySubject(
  deployer: ObjectName,
  spec: DeployerSpec,
  serviceAccount: string | undefined,
): PolicySubject {
  return {
    kind: 'Deployer',
    ...deployer,
    target: { field: 'spec.deployment.namespace', namespace: spec.deployment.namespace },
    analysisUrls: analysisUrls(spec.analysis, 'spec.analysis'),
    serviceAccount,
  };
}
