import type { ServiceAccountRef } from '../kube/client';
import { io, profile } from './activity-proxies';
import type { RouteWeights } from './plan/traffic';

/** Where a canary's Services and route live, and who its run acts as. */
export interface TrafficPlace {
  namespace: string;
  actAs?: ServiceAccountRef;
}

/**
 * Gives the canary Service `percent` of the HTTPRoute rule's traffic and the stable Service the
 * rest; does nothing without `traffic` (a canary without `traffic.gateway_api` issues no command,
 * so its runs replay as before). `summary` names the step in the Temporal UI.
 */
export async function routeTraffic(
  place: TrafficPlace,
  traffic: RouteWeights | undefined,
  percent: number,
  summary: string,
): Promise<void> {
  if (!traffic) return;
  const { route, rule, stableService, canaryService } = traffic;
  await io.setRouteWeights.executeWithOptions(
    profile.quick(
      `${summary}: HTTPRoute ${route} rule ${rule}: ${stableService} ${100 - percent} / ${canaryService} ${percent}`,
    ),
    [{ ...traffic, namespace: place.namespace, actAs: place.actAs, percent }],
  );
}
