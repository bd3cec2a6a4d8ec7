import { z } from 'zod';
import { notifications } from './notifications';
import { deployWindows } from './windows';
import { canaryAnalysis } from './analysis';
import { orderedNames } from './names';
import {
  commonStatus,
  countOrPercent,
  dns1123Label,
  duration,
  labels,
  objectName,
  positiveSeconds,
  quoted,
  serviceAccountName,
  targetState,
} from './common';
import {
  PROXY_RULES,
  SECRET_REF_RULES,
  SOURCE_PLACE_RULES,
  VERIFY_RULES,
  proxyProblems,
  secretRefProblems,
  sourcePlaceProblems,
  verifyProblems,
} from './source-location';
import { traffic } from './traffic';

/**
 * Most Helm values one chart takes, as JSON: 512 KiB. Helm keeps every revision in a Secret
 * (1 MiB at most), Temporal warns at 512 KiB and refuses 2 MiB payloads (a run's input carries
 * the values), and etcd refuses an object over 1.5 MiB.
 */
export const MAX_VALUES_BYTES = 512 * 1024;
/**
 * Deepest nesting of Helm values: real charts use a handful of levels; Node's own JSON.stringify
 * overflows its stack near 5000 levels, which the API server still takes (its limit is 10000).
 */
export const MAX_VALUES_DEPTH = 32;

const utf8 = new TextEncoder();

/**
 * The size of `value` as JSON (UTF-8 bytes) and its nesting depth (a scalar is 0, `{a: 1}` is 1),
 * walked without recursion so that no depth the API server lets through can overflow the stack.
 */
export function jsonShape(value: unknown): { bytes: number; depth: number } {
  let bytes = 0;
  let depth = 0;
  const todo: [unknown, number][] = [[value, 0]];
  while (todo.length) {
    const [node, level] = todo.pop()!;
    depth = Math.max(depth, level);
    if (Array.isArray(node)) {
      bytes += 2 + Math.max(0, node.length - 1);
      for (const item of node) todo.push([item, level + 1]);
    } else if (typeof node === 'object' && node !== null) {
      const entries = Object.entries(node);
      bytes += 2 + Math.max(0, entries.length - 1);
      for (const [key, item] of entries) {
        bytes += utf8.encode(JSON.stringify(key)).length + 1;
        todo.push([item, level + 1]);
      }
    } else {
      bytes += utf8.encode(JSON.stringify(node) ?? 'null').length;
    }
  }
  return { bytes, depth };
}

const kib = (bytes: number) =>
  bytes >= 1024 * 1024 ? `${(bytes / 1024 / 1024).toFixed(1)} MiB` : `${Math.ceil(bytes / 1024)} KiB`;

/** Helm release names: DNS-1123, and at most 53 characters (Helm's own limit). */
export const releaseName = z
  .string()
  .max(53, 'a Helm release name must be at most 53 characters')
  .regex(
    /^[a-z0-9]([-a-z0-9]*[a-z0-9])?$/,
    "a Helm release name must be lower case letters, digits and '-', starting and ending with a letter or digit",
  );

const SOURCE_NEEDS: Record<
  string,
  { fields: ('location' | 'chart')[]; scheme?: RegExp; schemeText?: string }
> = {
  local: { fields: ['location'] },
  tar: { fields: ['location'], scheme: /^https?:\/\//, schemeText: 'an http(s) URL of a .tgz' },
  repo: {
    fields: ['location', 'chart'],
    scheme: /^https?:\/\//,
    schemeText: 'the http(s) URL of a Helm repository',
  },
  oci: { fields: ['location'], scheme: /^oci:\/\//, schemeText: 'an oci:// reference' },
  git: { fields: ['location'] },
};

export const SOURCE_TYPES = ['local', 'tar', 'repo', 'oci', 'git'] as const;

/** The keys of a `source.secret_ref` Secret, as Flux's HelmRepository and GitRepository name them. */
export const SOURCE_SECRET_KEYS = ['username', 'password'] as const;

/** The key of a `source.verify.keyring_secret` Secret: the signers' public keys, as `gpg --export` writes them. */
export const KEYRING_SECRET_KEY = 'keyring';

export const chartSource = z
  .strictObject({
    type: z
      .enum(SOURCE_TYPES)
      .describe('Where the chart comes from: local (a directory on the worker), tar, repo, oci or git.'),
    location: z
      .string()
      .min(1)
      .max(2048)
      .optional()
      .describe(
        "Directory relative to the worker's charts root, ARMADA_CHARTS_ROOT, without '..' (local); " +
          '.tgz URL (tar); repository URL (repo); oci:// reference (oci); https://, http:// or ssh:// URL or ' +
          'user@host:path (git). Never a file: URL or, for git, a local path: the worker does not read its own disk.',
      ),
    subpath: z
      .string()
      .max(1024)
      .optional()
      .describe("Relative path of the chart inside the location, without '..' (local, tar, git)."),
    reference: z.string().max(256).optional().describe('Git branch, tag or commit (git).'),
    chart: z.string().min(1).max(253).optional().describe('Chart name in the Helm repository (repo).'),
    version: z.string().min(1).max(128).optional().describe('Chart version (repo, oci).'),
    secret_ref: z
      .strictObject({
        name: objectName('source.secret_ref.name').describe(
          "Name of the Secret, in the ArmadaChart's own namespace.",
        ),
      })
      .optional()
      .describe(
        "Credentials for the source: a Secret of the ArmadaChart's own namespace with keys username and password " +
          '(HTTP basic auth for tar and repo, registry login for oci, git over https:// or http://), read by the ' +
          'worker when it fetches the chart, never stored in the run. Not for local, nor for git over ssh.',
      ),
    proxy_server: z
      .string()
      .min(1)
      .max(2048)
      .optional()
      .describe(
        'HTTP proxy for fetching this chart only, as http://host:port or https://host:port; a user:password@ ' +
          'is sent to the proxy and redacted in messages, but stored as written in the object and its runs. ' +
          'The download (tar), git fetch (git) or helm pull (repo, oci) of this chart goes through it, ' +
          'nothing else. Not for local, nor for git over ssh.',
      ),
    verify: z
      .strictObject({
        keyring_secret: objectName('source.verify.keyring_secret').describe(
          `Name of a Secret of the ArmadaChart's own namespace whose key ${KEYRING_SECRET_KEY} holds the public keys ` +
            'of the trusted signers (gpg --export, binary or --armor).',
        ),
      })
      .optional()
      .describe(
        "Deploy the chart only if helm's provenance file verifies it: <archive>.prov beside the tar URL or in the " +
          'repository, the provenance layer of the OCI artifact (helm push uploads it), signed by a key of the keyring. ' +
          'A chart without one, signed by another key, or whose archive does not match its signature fails ' +
          'before any release is touched, and is not retried. For tar, repo and oci only: a chart directory ' +
          '(local, git) has no provenance.',
      ),
  })
  .meta({
    'x-kubernetes-validations': [
      ...Object.entries(SOURCE_NEEDS).flatMap(([type, needs]) =>
        needs.fields.map((field) => ({
          rule: `self.type != '${type}' || has(self.${field})`,
          message: `source.${field} is required when source.type is ${type}`,
        })),
      ),
      ...SOURCE_PLACE_RULES.map(({ cel, field, message }) => ({
        rule: cel,
        fieldPath: `.${field}`,
        message,
      })),
      ...SECRET_REF_RULES.map(({ cel, message }) => ({ rule: cel, fieldPath: '.secret_ref', message })),
      ...PROXY_RULES.map(({ cel, message }) => ({ rule: cel, fieldPath: '.proxy_server', message })),
      ...VERIFY_RULES.map(({ cel, message }) => ({ rule: cel, fieldPath: '.verify', message })),
    ],
  })
  .superRefine((source, ctx) => {
    for (const field of ['location', 'subpath', 'reference', 'chart', 'version', 'proxy_server'] as const) {
      const value = source[field];
      if (value !== undefined && [...value].some((c) => c < ' ' || c === '\u007f')) {
        ctx.addIssue({ code: 'custom', path: [field], message: 'must not contain control characters' });
      }
    }
    // Passed to helm or git as arguments of their own: a leading '-' would be read as an option.
    for (const field of ['reference', 'chart', 'version'] as const) {
      if (source[field]?.startsWith('-')) {
        ctx.addIssue({
          code: 'custom',
          path: [field],
          message: `must not start with "-" (${quoted(source[field])} would be read as an option)`,
        });
      }
    }
    const needs = SOURCE_NEEDS[source.type];
    for (const field of needs.fields) {
      if (!source[field]) {
        ctx.addIssue({
          code: 'custom',
          path: [field],
          message: `required when source.type is ${source.type}`,
        });
      }
    }
    const placeProblems = sourcePlaceProblems(source);
    for (const { field, message } of placeProblems) ctx.addIssue({ code: 'custom', path: [field], message });
    for (const { message } of secretRefProblems(source))
      ctx.addIssue({ code: 'custom', path: ['secret_ref'], message });
    for (const { message } of proxyProblems(source))
      ctx.addIssue({ code: 'custom', path: ['proxy_server'], message });
    for (const { message } of verifyProblems(source))
      ctx.addIssue({ code: 'custom', path: ['verify'], message });
    if (!placeProblems.length && source.location && needs.scheme && !needs.scheme.test(source.location)) {
      ctx.addIssue({
        code: 'custom',
        path: ['location'],
        message: `must be ${needs.schemeText} when source.type is ${source.type}`,
      });
    }
  })
  .describe('Where the chart comes from.');

const resourceType = z
  .enum(['deployment', 'daemonset', 'statefulset', 'pod', 'job'])
  .describe('Kind of resource to wait for.');
/** What `upgrade.pre.delete` deletes: what a wait waits for, and CronJobs (as Armada deletes them). */
const deletedType = z.enum([...resourceType.options, 'cronjob']).describe('Kind of resource to delete.');

export const chartWait = z
  .strictObject({
    timeout: positiveSeconds('wait.timeout')
      .optional()
      .describe('Seconds to wait for the release to be ready.'),
    labels: labels.optional(),
    resources: z
      .array(
        z.strictObject({
          type: resourceType,
          labels: labels.optional(),
          min_ready: countOrPercent('min_ready')
            .optional()
            .describe(
              'How many must be ready, as in Armada: a count or a percentage such as "80%" (default: all). ' +
                'A deployment, daemonset or statefulset entry needs every object ready, each with that many of its own pods: ' +
                'available of its updated replicas, available of its desired pods, ready of its replicas ' +
                '(a percentage rounded up as Armada rounds it, ceil(total × NN / 100) in floating point). ' +
                'A pod or job entry, where Armada takes none, needs that many ready objects of the entry.',
            ),
        }),
      )
      .max(32)
      .optional()
      .describe('Which resources to wait for (default, as in Armada: jobs and pods).'),
    native: z
      .strictObject({ enabled: z.boolean().describe("Also wait with Helm's own --wait.") })
      .optional()
      .describe("Helm's own wait."),
  })
  .describe('Armada-style wait after install or upgrade.');

export const canaryStep = z.strictObject({
  percent: z
    .number()
    .int('percent must be a whole number')
    .min(1, 'percent must be from 1 to 100')
    .max(100, 'percent must be from 1 to 100')
    .describe('Share of replicas on the new version during this step, 1..100.'),
  sleep: duration('sleep')
    .optional()
    .describe('How long to hold this step: seconds, or a duration such as "5m".'),
  approval: z.boolean().optional().describe('Hold this step until an approve signal.'),
});

/** Canary steps: at least one, percents strictly increasing; a final 100 % is implied. */
export const percentSteps = <Step extends z.ZodType<{ percent: number }>>(step: Step) =>
  z
    .array(step)
    .min(1, 'there must be at least one step')
    .max(20, 'at most 20 steps')
    .superRefine((steps, ctx) => {
      steps.forEach((current, i) => {
        const previous = steps[i - 1]?.percent;
        if (previous !== undefined && current.percent <= previous) {
          ctx.addIssue({
            code: 'custom',
            path: [i, 'percent'],
            message: `percent must be greater than the previous step's ${previous}`,
          });
        }
      });
    })
    .describe(
      'Percent steps, strictly increasing; a final 100 % is implied when the last step is below 100.',
    );

/** A canary's timeouts, the same on ArmadaChart canaries and Deployers. */
export const canaryTimeouts = {
  approval_timeout: duration('approval_timeout').optional().describe('How long an approval step waits.'),
  on_timeout: z
    .enum(['rollback', 'promote'])
    .optional()
    .describe('What happens when an approval times out (default rollback).'),
  step_timeout: duration('step_timeout')
    .optional()
    .describe('How long a step may take to become ready before the canary rolls back.'),
};

/**
 * Separation of duties at approval gates (a manifest's `approval`, a canary's approval steps),
 * enforced by the run: approvals count only when the API server authenticated them (docs/explanation/security.md).
 */
export const approvalRules = {
  distinct_approvers: z
    .number()
    .int('distinct_approvers must be a whole number')
    .min(1, 'distinct_approvers must be from 1 to 10')
    .max(10, 'distinct_approvers must be from 1 to 10')
    .optional()
    .describe('Approvals by this many different authenticated users before a gate passes (default 1).'),
  not_author: z
    .boolean()
    .optional()
    .describe("true: the user whose apply last changed this object's spec may not approve its gates."),
};

/** on_timeout says what an approval's timeout does: without an approval step it would do nothing. */
export function onTimeoutNeedsApproval(
  spec: { on_timeout?: string; steps: { approval?: boolean }[] },
  ctx: z.RefinementCtx,
): void {
  if (spec.on_timeout && !spec.steps.some((step) => step.approval))
    ctx.addIssue({
      code: 'custom',
      path: ['on_timeout'],
      message: 'on_timeout needs at least one step with approval',
    });
}

export const canary = z
  .strictObject({
    steps: percentSteps(canaryStep),
    ...canaryTimeouts,
    ...approvalRules,
    analysis: canaryAnalysis.optional(),
    traffic: traffic.optional(),
  })
  .superRefine(onTimeoutNeedsApproval)
  .describe('Step the release through percentages instead of switching at once (armada-temporal extension).');

/** The key a `values_from` reference reads when it names none, as in Flux's HelmRelease. */
export const DEFAULT_VALUES_KEY = 'values.yaml';

/**
 * One `values_from` entry: a key of a Secret or ConfigMap in the ArmadaChart's own namespace,
 * read by the worker when it needs the values (never carried in the run). As Flux's
 * HelmRelease `valuesFrom`: `valuesKey` is `key`, `targetPath` is `target_path`.
 */
export const valuesReference = z
  .strictObject({
    kind: z.enum(['Secret', 'ConfigMap']).describe('Kind of the object holding the values.'),
    name: objectName('values_from[].name').describe(
      "Name of the Secret or ConfigMap, in the ArmadaChart's own namespace.",
    ),
    key: z
      .string()
      .max(253)
      .regex(/^[-._a-zA-Z0-9]+$/, "key must be a Secret or ConfigMap key: letters, digits, '-', '_' and '.'")
      .default(DEFAULT_VALUES_KEY)
      .describe('Key of the object whose value is read.'),
    target_path: z
      .string()
      .min(1)
      .max(253)
      .regex(/^[^.]+(\.[^.]+)*$/, 'target_path must be a dot path such as auth.password')
      .optional()
      .describe(
        "Dot path, e.g. auth.password, at which the key's value is set as a string; without it the value is YAML merged into the values.",
      ),
    optional: z
      .boolean()
      .optional()
      .describe('Skip this entry when the object or the key is missing, instead of failing the run.'),
  })
  .describe('Values read from a key of a Secret or ConfigMap.');

export const armadaChartSpec = z
  .strictObject({
    chart_name: z
      .string()
      .min(1)
      .max(253)
      .optional()
      .describe('Name of the chart (informational, as in Armada).'),
    release: releaseName.describe('Helm release name; a manifest prefixes it with its release_prefix.'),
    namespace: dns1123Label('namespace').describe(
      "Namespace the release is installed into: the object's own, unless an ArmadaPolicy grants another.",
    ),
    service_account_name: serviceAccountName(),
    adopt: z
      .boolean()
      .optional()
      .describe(
        'Take over a release that armada-temporal did not create (allowed only by an ArmadaPolicy with allow_adoption).',
      ),
    target_state: targetState.default('deployed'),
    source: chartSource,
    dependencies: orderedNames('chart', 0)
      .optional()
      .describe(
        "ArmadaChart names (same namespace) whose charts become this chart's subcharts, as in Armada: each under charts/<its Chart.yaml name>, with their own dependencies; a list, even an empty one, replaces what the chart has under charts/.",
      ),
    dependency_only: z
      .boolean()
      .optional()
      .describe(
        'Never deployed on its own: while no group lists it, this chart is only a dependency of the charts that list it.',
      ),
    values: z
      .record(z.string(), z.unknown())
      .superRefine((values, ctx) => {
        const { bytes, depth } = jsonShape(values);
        if (bytes > MAX_VALUES_BYTES) {
          ctx.addIssue({
            code: 'custom',
            message: `Helm values must be at most ${kib(MAX_VALUES_BYTES)} as JSON; these are ${kib(bytes)}`,
          });
        }
        if (depth > MAX_VALUES_DEPTH) {
          ctx.addIssue({
            code: 'custom',
            message: `Helm values must nest at most ${MAX_VALUES_DEPTH} levels deep; these nest ${depth}`,
          });
        }
      })
      .optional()
      .meta({ 'x-kubernetes-preserve-unknown-fields': true })
      .describe('Helm values, free-form; merged over values_from.'),
    values_from: z
      .array(valuesReference)
      .max(32)
      .optional()
      .describe(
        "Values from Secrets and ConfigMaps of the object's namespace, merged in order (a later entry wins), with values on top; read by the worker, never stored in the run.",
      ),
    wait: chartWait.optional(),
    test: z
      .strictObject({
        enabled: z
          .boolean()
          .describe(
            "Run `helm test` after install or upgrade and the wait. A test pod that fails fails the chart at once (never retried); the release stays as written, for the manifest's on_failure.",
          ),
        timeout: positiveSeconds('test.timeout').optional().describe('Seconds the tests may take.'),
      })
      .optional()
      .describe('Helm tests.'),
    upgrade: z
      .strictObject({
        pre: z
          .strictObject({
            delete: z
              .array(
                z.strictObject({
                  type: deletedType,
                  labels: labels.optional(),
                }),
              )
              .max(32)
              .optional()
              .describe('Resources deleted before the upgrade.'),
          })
          .optional()
          .describe('Actions before an upgrade.'),
        options: z
          .strictObject({
            force: z.boolean().optional().describe('helm upgrade --force.'),
            no_hooks: z.boolean().optional().describe('helm upgrade --no-hooks.'),
          })
          .optional()
          .describe('Helm upgrade flags.'),
      })
      .optional()
      .describe('Upgrade behaviour.'),
    protected: z
      .strictObject({
        continue_processing: z
          .boolean()
          .optional()
          .describe('When the release is found failed, skip it and go on instead of stopping.'),
      })
      .optional()
      .describe('Never upgrade a release found in a failed state.'),
    delete: z
      .strictObject({
        timeout: positiveSeconds('delete.timeout').optional().describe('Seconds an uninstall may take.'),
      })
      .optional()
      .describe('Uninstall behaviour.'),
    canary: canary.optional(),
    notifications: notifications.optional(),
    windows: deployWindows,
    drift: z
      .enum(['repair', 'report', 'ignore'])
      .default('repair')
      .describe(
        'When an object of the release is deleted or edited outside Helm: repair (re-apply the current revision), report (a Warning Event only) or ignore.',
      ),
  })
  .describe('One Helm release.');

export const armadaChartStatus = z
  .strictObject({
    helm: z
      .strictObject({
        revision: z.number().int().optional().describe('Current Helm revision.'),
        status: z.string().optional().describe('Helm status of that revision.'),
        previous_revision: z.number().int().optional().describe('Revision before the last change.'),
      })
      .optional()
      .describe('The release as Helm records it.'),
    progress: z
      .strictObject({
        step: z.number().int().optional().describe('Current canary step (1-based).'),
        steps: z.number().int().optional().describe('Number of canary steps.'),
        percent: z.number().int().optional().describe('Share of replicas on the new version.'),
        next_step_at: z.string().optional().describe('When the current hold ends (RFC 3339).'),
        summary: z.string().optional().describe('Progress for a person, e.g. "2/4 30%".'),
      })
      .optional()
      .describe('Where a deploy or canary stands.'),
    ...commonStatus,
  })
  .describe('Observed state, written by armada-temporal.');

export type ArmadaChartSpec = z.infer<typeof armadaChartSpec>;
export type ArmadaChartSpecInput = z.input<typeof armadaChartSpec>;
export type ArmadaChartStatus = z.infer<typeof armadaChartStatus>;
export type ChartSource = z.infer<typeof chartSource>;
export type CanarySpec = z.infer<typeof canary>;
export type ValuesReference = z.infer<typeof valuesReference>;
