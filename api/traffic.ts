import { z } from 'zod';
import { dns1123Label, objectName } from './common';

/**
 * `traffic`: where a canary's traffic weights are set, on ArmadaChart canaries
 * (`canary.traffic`) and Deployers (`traffic`) alike. Gateway API: the weights of the stable and
 * canary Services among the `backendRefs` of one rule of an HTTPRoute.
 */
export const traffic = z
  .strictObject({
    gateway_api: z
      .strictObject({
        route: objectName('traffic.gateway_api.route').describe(
          "Name of the HTTPRoute (gateway.networking.k8s.io/v1), in the release's namespace (a chart) or deployment.namespace (a Deployer).",
        ),
        rule: z
          .number()
          .int('traffic.gateway_api.rule must be a whole number')
          .min(0, 'traffic.gateway_api.rule must be 0 or more')
          .max(15, 'traffic.gateway_api.rule must be at most 15 (an HTTPRoute has at most 16 rules)')
          .optional()
          .describe("Index of the route's rule whose backendRefs carry the weights (default 0)."),
        stable_service: dns1123Label('traffic.gateway_api.stable_service')
          .optional()
          .describe(
            "Service of the stable version, a backendRef of the rule (default: the chart's release name, or a Deployer's deployment.name).",
          ),
        canary_service: dns1123Label('traffic.gateway_api.canary_service')
          .optional()
          .describe(
            'Service of the canary pods, a backendRef of the rule (default: <stable_service>-canary).',
          ),
      })
      .refine(
        (gateway) =>
          gateway.stable_service === undefined || gateway.stable_service !== gateway.canary_service,
        { message: 'canary_service must differ from stable_service', path: ['canary_service'] },
      )
      .describe('Set the weights on a Gateway API HTTPRoute: canary = step percent, stable = the rest.'),
  })
  .describe('Traffic weights set at each step, besides the replicas (capacity follows the weight).');

export type TrafficSpec = z.infer<typeof traffic>;
