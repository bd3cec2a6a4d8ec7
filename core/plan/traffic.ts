import type { TrafficSpec } from '../../api/traffic';
import { CANARY_SUFFIX } from '../labels';

/** The HTTPRoute rule a canary steps, with both Service names resolved. */
export interface RouteWeights {
  /** The HTTPRoute's name, in the namespace of the canary's Deployments. */
  route: string;
  /** Index of the rule among the route's `rules`. */
  rule: number;
  stableService: string;
  canaryService: string;
  /**
   * Labels the canary Service's selector gets before the canary takes a share: a Deployer's new
   * version (core/labels.ts deployerVersionLabels), so no one edits the Service per version. None
   * for a chart: its canary copies carry one fixed label.
   */
  canarySelector?: Record<string, string>;
}

/**
 * The rule a spec's `traffic` names, with its defaults: rule 0, the stable Service named
 * `defaultStable` (a chart's release, a Deployer's deployment.name), the canary Service
 * `<stable>-canary` (as canary copies of Deployments are named). Undefined without `traffic.gateway_api`: replicas alone split the traffic.
 */
export function routeWeights(spec: TrafficSpec | undefined, defaultStable: string): RouteWeights | undefined {
  const gateway = spec?.gateway_api;
  if (!gateway) return undefined;
  const stableService = gateway.stable_service ?? defaultStable;
  return {
    route: gateway.route,
    rule: gateway.rule ?? 0,
    stableService,
    canaryService: gateway.canary_service ?? `${stableService}${CANARY_SUFFIX}`,
  };
}
