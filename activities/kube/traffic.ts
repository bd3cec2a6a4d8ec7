import { ApplicationFailure } from '@temporalio/common';
import { CoreV1Api, CustomObjectsApi, PatchStrategy, setHeaderOptions } from '@kubernetes/client-node';
import { apiFailure, isStatus, kubeApi } from '../../kube/client';
import type { ActingAs } from '../../core/contracts/acting-as';
import { NonRetryable } from '../../core/failures';
import type { RouteWeights } from '../../core/plan/traffic';

/** The Gateway API's HTTPRoute, as the standard channel serves it. */
const HTTPROUTE = { group: 'gateway.networking.k8s.io', version: 'v1', plural: 'httproutes' } as const;
/** Read-modify-replace attempts when someone else writes the route in between (HTTP 409). */
const CONFLICT_ATTEMPTS = 5;

/** A backendRef of an HTTPRoute rule: a Service unless it says otherwise; other fields kept as they are. */
export interface BackendRef {
  group?: string;
  kind?: string;
  name: string;
  namespace?: string;
  weight?: number;
  [field: string]: unknown;
}

/** An HTTPRoute as read: only what the weights need is typed, every other field is carried through. */
export interface HttpRoute {
  metadata?: { name?: string; namespace?: string; resourceVersion?: string; [field: string]: unknown };
  spec?: { rules?: { backendRefs?: BackendRef[]; [field: string]: unknown }[]; [field: string]: unknown };
  [field: string]: unknown;
}

export interface RouteWeightsRequest extends ActingAs, RouteWeights {
  /** Namespace of the route and of both Services (the canary's Deployments' namespace). */
  namespace: string;
  /** The canary's share, 0..100; the stable Service gets the rest. */
  percent: number;
}

/** The weights a request sets, by Service. */
export interface Weights {
  stable: number;
  canary: number;
}

/** Thrown by withWeights when the route lacks the rule or a Service's backendRef. */
export class RouteMismatch extends Error {}

/** Whether `ref` points at the core Service `name` in the route's own namespace. */
function refersTo(ref: BackendRef, name: string, routeNamespace: string | undefined): boolean {
  return (
    ref.name === name &&
    (ref.group ?? '') === '' &&
    (ref.kind ?? 'Service') === 'Service' &&
    (ref.namespace === undefined || ref.namespace === routeNamespace)
  );
}

/**
 * The route with the canary Service's backendRefs at weight `percent` and the stable Service's
 * at 100 − percent, in rule `req.rule`; every other rule, backendRef and field as it was (the
 * `route` object is not changed). Example: rule 0 [{stable, 90}, {canary, 10}, {mirror, 5}] at
 * 30 % → [{stable, 70}, {canary, 30}, {mirror, 5}]. Throws RouteMismatch naming the route, the
 * rule and the Service when the rule or either backendRef is missing.
 */
export function withWeights(route: HttpRoute, req: RouteWeightsRequest): HttpRoute {
  const where = `HTTPRoute ${req.namespace}/${req.route}`;
  const rules = route.spec?.rules ?? [];
  const rule = rules[req.rule];
  if (!rule) throw new RouteMismatch(`${where} has no rule ${req.rule} (it has ${rules.length})`);
  const weights = new Map([
    [req.canaryService, req.percent],
    [req.stableService, 100 - req.percent],
  ]);
  const refs = rule.backendRefs ?? [];
  for (const service of weights.keys()) {
    if (!refs.some((ref) => refersTo(ref, service, route.metadata?.namespace)))
      throw new RouteMismatch(`${where} rule ${req.rule} has no backendRef to Service ${service}`);
  }
  const backendRefs = refs.map((ref) => {
    const service = [...weights.keys()].find((name) => refersTo(ref, name, route.metadata?.namespace));
    return service === undefined ? ref : { ...ref, weight: weights.get(service) };
  });
  const changed = rules.map((r, i) => (i === req.rule ? { ...r, backendRefs } : r));
  return { ...route, spec: { ...route.spec, rules: changed } };
}

/** The weights rule `rule` of `route` gives the two Services now (a missing weight is 1, the API's default). */
export function currentWeights(route: HttpRoute, req: RouteWeightsRequest): Weights {
  const refs = route.spec?.rules?.[req.rule]?.backendRefs ?? [];
  const weightOf = (service: string) =>
    refs.find((ref) => refersTo(ref, service, route.metadata?.namespace))?.weight ?? 1;
  return { stable: weightOf(req.stableService), canary: weightOf(req.canaryService) };
}

/**
 * Merges `labels` into the canary Service's selector (its other keys stay), unless it has them
 * already: a Deployer's canary Service follows the version it steps. A missing Service is final
 * (TrafficRouteMissing), as a missing route is.
 */
async function pointCanaryService(req: RouteWeightsRequest, labels: Record<string, string>): Promise<void> {
  const api = kubeApi(CoreV1Api, req.actAs);
  const at = { name: req.canaryService, namespace: req.namespace };
  let selector: Record<string, string>;
  try {
    selector = (await api.readNamespacedService(at)).spec?.selector ?? {};
  } catch (err) {
    if (isStatus(err, 404))
      throw ApplicationFailure.nonRetryable(
        `Service ${req.namespace}/${req.canaryService} not found (the canary Service of HTTPRoute ${req.route} rule ${req.rule})`,
        NonRetryable.TrafficRouteMissing,
      );
    throw apiFailure(`read Service ${req.namespace}/${req.canaryService}`, err);
  }
  if (Object.entries(labels).every(([key, value]) => selector[key] === value)) return;
  try {
    await api.patchNamespacedService(
      { ...at, body: { spec: { selector: labels } } },
      setHeaderOptions('Content-Type', PatchStrategy.MergePatch),
    );
  } catch (err) {
    throw apiFailure(`point Service ${req.namespace}/${req.canaryService} at ${JSON.stringify(labels)}`, err);
  }
}

/**
 * Activity: sets the weights of a canary's two Services in one rule of an HTTPRoute (see
 * withWeights), acting as the run's ServiceAccount. Lists cannot be merge-patched element by
 * element, so it reads the route, changes the rule and replaces the route at the version it
 * read, again on a conflict. Writes nothing when the weights are already set (idempotent).
 * With `canarySelector`, first points the canary Service at those pods (pointCanaryService).
 * Writes: the route's spec (and the canary Service's selector). Returns: the weights now set. A missing route, rule or backendRef
 * is final (TrafficRouteMissing).
 */
export async function setRouteWeights(req: RouteWeightsRequest): Promise<Weights> {
  const api = kubeApi(CustomObjectsApi, req.actAs);
  const at = { ...HTTPROUTE, namespace: req.namespace, name: req.route };
  const wanted = { stable: 100 - req.percent, canary: req.percent };
  for (let attempt = 1; ; attempt++) {
    let route: HttpRoute;
    try {
      route = (await api.getNamespacedCustomObject(at)) as HttpRoute;
    } catch (err) {
      if (isStatus(err, 404))
        throw ApplicationFailure.nonRetryable(
          `HTTPRoute ${req.namespace}/${req.route} not found (rule ${req.rule}, Services ${req.stableService} and ${req.canaryService})`,
          NonRetryable.TrafficRouteMissing,
        );
      throw apiFailure(`read HTTPRoute ${req.namespace}/${req.route}`, err);
    }
    let body: HttpRoute;
    try {
      body = withWeights(route, req);
    } catch (err) {
      if (err instanceof RouteMismatch)
        throw ApplicationFailure.nonRetryable(err.message, NonRetryable.TrafficRouteMissing);
      throw err;
    }
    // Once the route is known to fit: a route that does not leaves the Service as it was.
    if (attempt === 1 && req.canarySelector && req.percent > 0)
      await pointCanaryService(req, req.canarySelector);
    const now = currentWeights(route, req);
    if (now.stable === wanted.stable && now.canary === wanted.canary) return wanted;
    try {
      await api.replaceNamespacedCustomObject({ ...at, body });
      return wanted;
    } catch (err) {
      if (!isStatus(err, 409) || attempt >= CONFLICT_ATTEMPTS)
        throw apiFailure(`set weights in HTTPRoute ${req.namespace}/${req.route}`, err);
    }
  }
}
