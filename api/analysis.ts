import { z } from 'zod';
import { duration } from './common';
import { queryTemplateProblem } from './prometheus-query';

/** Failed checks tolerated before a rollback: shared by both kinds of check. */
const failureLimit = z
  .number()
  .int()
  .min(0)
  .optional()
  .describe('Failed checks tolerated before rollback (default 0).');

/**
 * A Prometheus query judged against a bound, during each hold and before a step passes. The
 * query is a template (api/prometheus-query.ts): `{{namespace}}`, `{{selector}}` (the pods of
 * the side judged) and `{{labels.<key>}}`.
 */
export const prometheusAnalysis = z
  .strictObject({
    address: z
      .url({ protocol: /^https?$/ })
      .describe(
        'Base URL of the Prometheus server, e.g. http://prometheus.monitoring:9090; /api/v1/query is added.',
      ),
    query: z
      .string()
      .min(1)
      .max(4096)
      .superRefine((query, ctx) => {
        const problem = queryTemplateProblem(query);
        if (problem) ctx.addIssue({ code: 'custom', message: problem });
      })
      .describe(
        'PromQL template: {{namespace}}, {{selector}} (label matchers of the pods judged, to put inside a selector: metric{ {{selector}} }) and {{labels.<key>}}.',
      ),
    min: z.number().optional().describe('Healthy when the value is at least this (give min or max).'),
    max: z.number().optional().describe('Healthy when the value is at most this (give min or max).'),
    failure_limit: failureLimit,
    interval: duration('analysis.prometheus.interval')
      .optional()
      .describe('Time between checks (default 10s).'),
  })
  .superRefine((spec, ctx) => {
    if ((spec.min === undefined) === (spec.max === undefined))
      ctx.addIssue({
        code: 'custom',
        path: ['max'],
        message: 'give exactly one of min and max: the bound also says which way is worse',
      });
  })
  .describe('Query Prometheus and judge the result against min or max.');

/**
 * A canary's analysis: an HTTP check (`url`, as before) or a Prometheus query (`prometheus`),
 * one of the two; compare_to_stable with Prometheus only. The same definition serves ArmadaChart
 * canaries and Deployers.
 */
export const canaryAnalysis = z
  .strictObject({
    url: z
      .url({ protocol: /^https?$/ })
      .optional()
      .describe('HTTP(S) endpoint checked during each hold (or give prometheus).'),
    expected_status: z
      .number()
      .int()
      .min(100)
      .max(599)
      .optional()
      .describe('Status that counts as healthy (default 200).'),
    interval: duration('analysis.interval').optional().describe('Time between checks (default 10s).'),
    failure_limit: failureLimit,
    json: z
      .strictObject({
        field: z
          .string()
          .min(1)
          .max(256)
          .regex(/^[^.]+(\.[^.]+)*$/, 'json.field must be a dot path such as metrics.error_rate')
          .describe('Dot path of a number in the JSON body, e.g. metrics.error_rate.'),
        min: z.number().optional().describe('Healthy when the value is at least this.'),
        max: z.number().optional().describe('Healthy when the value is at most this.'),
      })
      .optional()
      .describe('A threshold on a number in the JSON response body.'),
    prometheus: prometheusAnalysis.optional(),
    compare_to_stable: z
      .strictObject({
        margin: z
          .number()
          .min(0)
          .describe(
            'How much worse than the stable pods the canary may be, in the units of the query (absolute): canary − stable for max, stable − canary for min.',
          ),
      })
      .optional()
      .describe(
        'Also run the prometheus query for the stable pods; fail when the canary is worse by more than margin.',
      ),
  })
  .superRefine((analysis, ctx) => {
    const issue = (path: string, message: string) => ctx.addIssue({ code: 'custom', path: [path], message });
    if (analysis.prometheus === undefined) {
      if (analysis.url === undefined) issue('url', 'give url (an HTTP check) or prometheus');
      if (analysis.compare_to_stable) issue('compare_to_stable', 'compare_to_stable needs prometheus');
      return;
    }
    // One kind of check per canary: its interval and failure_limit are the prometheus ones.
    for (const field of ['url', 'expected_status', 'json', 'interval', 'failure_limit'] as const)
      if (analysis[field] !== undefined)
        issue(
          field,
          `${field} is for an HTTP check; with prometheus, set prometheus.interval and prometheus.failure_limit`,
        );
  })
  .describe('Health check that rolls the canary back when it fails: an HTTP endpoint or a Prometheus query.');

export type CanaryAnalysis = z.infer<typeof canaryAnalysis>;
export type PrometheusAnalysis = z.infer<typeof prometheusAnalysis>;
