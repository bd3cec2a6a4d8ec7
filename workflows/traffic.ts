import type { ServiceAccountRef } from '../core/contracts/acting-as';
import { io, profile } from './activity-proxies';
import type { RouteWeights } from '../core/plan/traffic';

/** Where a canary's Services and route live, and who its run acts as. */
export interface TrafficPlace {
  namespace: string;
  actAs?: ServiceAccountRef;
}

/** `HTTPRoute shop rule 0: shop 90 / shop-canary 10`: the weights at `percent`, as the UI and status show them. */
export function weightsText(
  { route, rule, stableService, canaryService }: RouteWeights,
  percent: number,
): string {
  return `HTTPRoute ${route} rule ${rule}: ${stableService} ${100 - percent} / ${canaryService} ${percent}`;
}

/**
 * Gives the canary Service `percent` of the HTTPRoute rule's traffic and the stable Service the
 * rest; does nothing without `traffic` (a canary without `traffic.gateway_api` issues no command,
 * so its runs replay as before). `summary` names the step in the Temporal UI. Resolves to the
 * weights set (weightsText), if any.
 */
export async function routeTraffic(
  place: TrafficPlace,
  traffic: RouteWeights | undefined,
  percent: number,
  summary: string,
): Promise<string | undefined> {
  if (!traffic) return undefined;
  const weights = weightsText(traffic, percent);
  await io.setRouteWeights.executeWithOptions(profile.quick(`${summary}: ${weights}`), [
    { ...traffic, namespace: place.namespace, actAs: place.actAs, percent },
  ]);
  return weights;
}
