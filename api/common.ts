import { z } from 'zod';
import { ACTUAL_STATES } from './states';
import { DURATION, durationSeconds } from './duration';

/** API group and version of every armada kind (compatible with the Armada document model). */
export const GROUP = 'armada.airshipit.org';
export const VERSION = 'v1alpha1';
export const API_VERSION = `${GROUP}/${VERSION}`;

const DNS1123_LABEL = /^[a-z0-9]([-a-z0-9]*[a-z0-9])?$/;
const DNS1123_SUBDOMAIN = /^[a-z0-9]([-a-z0-9]*[a-z0-9])?(\.[a-z0-9]([-a-z0-9]*[a-z0-9])?)*$/;
const PERCENT = /^[0-9]+%$/;
/** Longest string an int-or-string field takes; also bounds the CEL regex's cost estimate. */
const INT_OR_STRING_MAX_LENGTH = 32;
/**
 * Longest duration or timeout the API takes: 30 days. Longer ones are typos or hostile (10^12 s
 * overflows the protobuf Duration Temporal sends a timer or timeout as, and wedges the run).
 */
export const MAX_SECONDS = 30 * 24 * 3600;
const MAX_SECONDS_TEXT = `at most 30 days (${MAX_SECONDS} s)`;

/** A value quoted for a message, cut short so a hostile megabyte never lands in a condition. */
export function quoted(value: string, max = 64): string {
  return JSON.stringify(value.length > max ? `${value.slice(0, max)}…` : value);
}

const LABEL_NAME = /^[A-Za-z0-9]([-A-Za-z0-9_.]*[A-Za-z0-9])?$/;

/** Whether `key` is a Kubernetes label key: `[prefix/]name`, prefix a DNS-1123 subdomain. */
export function isLabelKey(key: string): boolean {
  const slash = key.lastIndexOf('/');
  const [prefix, name] = slash < 0 ? [undefined, key] : [key.slice(0, slash), key.slice(slash + 1)];
  if (prefix !== undefined && (prefix.length > 253 || !DNS1123_SUBDOMAIN.test(prefix))) return false;
  return name.length <= 63 && LABEL_NAME.test(name);
}

/** Whether `value` is a Kubernetes label value: empty, or at most 63 of `[A-Za-z0-9-_.]`. */
export function isLabelValue(value: string): boolean {
  return value === '' || (value.length <= 63 && LABEL_NAME.test(value));
}

/** A namespace or another DNS-1123 label: lower case alphanumerics and '-', at most 63 characters. */
export const dns1123Label = (what: string) =>
  z
    .string()
    .max(63, `${what} must be at most 63 characters`)
    .regex(
      DNS1123_LABEL,
      `${what} must be a DNS-1123 label: lower case letters, digits and '-', starting and ending with a letter or digit`,
    );

/**
 * `service_account_name`: the ServiceAccount of the object's own namespace its run acts as (as
 * Flux's `serviceAccountName`); checked by ArmadaPolicy `require_service_account` and the
 * bridge's lockdown.
 */
export const serviceAccountName = () =>
  dns1123Label('service_account_name')
    .optional()
    .describe(
      "ServiceAccount of the object's namespace its run acts as; default: the bridge's ARMADA_DEFAULT_SERVICE_ACCOUNT.",
    );

/** The name of another object: a DNS-1123 subdomain, at most 253 characters. */
export const objectName = (what: string) =>
  z
    .string()
    .max(253, `${what} must be at most 253 characters`)
    .regex(DNS1123_SUBDOMAIN, `${what} must be a DNS-1123 name: lower case letters, digits, '-' and '.'`);

/** Label selector as a map, as Armada writes it (`labels: {app: web}`). */
export const labels = z
  .record(z.string().max(317), z.string().max(63))
  .superRefine((pairs, ctx) => {
    // The CRD cannot check map keys; a key or value a selector cannot hold fails only later, in kubectl.
    for (const [key, value] of Object.entries(pairs)) {
      if (!isLabelKey(key)) {
        ctx.addIssue({
          code: 'custom',
          path: [key],
          message: `${quoted(key)} is not a Kubernetes label key`,
        });
      } else if (!isLabelValue(value)) {
        ctx.addIssue({
          code: 'custom',
          path: [key],
          message: `${quoted(value)} is not a Kubernetes label value`,
        });
      }
    }
  })
  .describe('Label selector as key/value pairs; an object matches when it has all of them.');

/** A positive duration: whole seconds, or a string like "30s", "5m", "1h30m". */
export const duration = (what: string) =>
  z
    .union([z.number().int(), z.string()])
    .meta({
      'x-kubernetes-int-or-string': true,
      maxLength: INT_OR_STRING_MAX_LENGTH,
      'x-kubernetes-validations': [
        {
          rule: `type(self) == int ? self > 0 : self.matches('${DURATION.source}')`,
          message: `${what} must be a positive number of seconds or a duration such as "30s", "5m" or "1h30m"`,
        },
      ],
    })
    .superRefine((value, ctx) => {
      if (typeof value === 'string' && value.length > INT_OR_STRING_MAX_LENGTH) {
        ctx.addIssue({
          code: 'custom',
          message: `${what} must be at most ${INT_OR_STRING_MAX_LENGTH} characters`,
        });
        return;
      }
      const seconds = durationSeconds(value);
      if (seconds === null) {
        ctx.addIssue({
          code: 'custom',
          message: `${what} "${value}" is not a duration such as "30s", "5m" or "1h30m"`,
        });
      } else if (seconds <= 0) {
        ctx.addIssue({ code: 'custom', message: `${what} must be positive` });
      } else if (seconds > MAX_SECONDS) {
        ctx.addIssue({ code: 'custom', message: `${what} must be ${MAX_SECONDS_TEXT}` });
      }
    });

/** Whole seconds, strictly positive (Armada's `timeout` fields). */
export const positiveSeconds = (what: string) =>
  z
    .number()
    .int(`${what} must be whole seconds`)
    .positive(`${what} must be positive`)
    // A refinement, not .max(): the CRD stays as generated; the validator and the bridge check it.
    .refine((seconds) => seconds <= MAX_SECONDS, `${what} must be ${MAX_SECONDS_TEXT}`);

/** A count, or a percentage as "NN%" (`min_ready`). */
export const countOrPercent = (what: string) =>
  z
    .union([z.number().int(), z.string()])
    .meta({
      'x-kubernetes-int-or-string': true,
      maxLength: INT_OR_STRING_MAX_LENGTH,
      'x-kubernetes-validations': [
        {
          rule: `type(self) == int ? self >= 0 : self.matches('${PERCENT.source}')`,
          message: `${what} must be a count (0 or more) or a percentage such as "80%"`,
        },
      ],
    })
    .superRefine((value, ctx) => {
      if (typeof value === 'string' && value.length > INT_OR_STRING_MAX_LENGTH) {
        ctx.addIssue({
          code: 'custom',
          message: `${what} must be at most ${INT_OR_STRING_MAX_LENGTH} characters`,
        });
      } else if (
        typeof value === 'number' ? value < 0 : !PERCENT.test(value) || Number(value.slice(0, -1)) > 100
      ) {
        ctx.addIssue({
          code: 'custom',
          message: `${what} must be a count (0 or more) or a percentage from "0%" to "100%"`,
        });
      }
    });

export const targetState = z
  .enum(['uninitialized', 'deployed', 'uninstalled'])
  .describe(
    'What the object should be: deployed, uninstalled, or uninitialized (nothing is done). An object listed by a parent follows the parent.',
  );

/** metav1.Condition, as Kubernetes API conventions define it. */
export const condition = z.strictObject({
  type: z.string().describe('Condition type, e.g. Ready, Progressing, Invalid.'),
  status: z.enum(['True', 'False', 'Unknown']).describe('Whether the condition holds.'),
  reason: z.string().describe('One CamelCase word saying why.'),
  message: z.string().describe('What happened, for a person.'),
  lastTransitionTime: z.string().describe('When status last changed (RFC 3339).'),
  observedGeneration: z
    .number()
    .int()
    .optional()
    .describe('The metadata.generation this condition was computed from.'),
});

/** Status fields every kind shares. */
export const commonStatus = {
  actual_state: z
    .string()
    .optional()
    .describe(
      `Where the object stands, a word of the state vocabulary in lower case: ${ACTUAL_STATES.join(', ')}.`,
    ),
  satisfied: z
    .boolean()
    .optional()
    .describe(
      'Whether the object is in its target state at its current generation: false while a run works on it, and while a changed spec (metadata.generation above observedGeneration) is not deployed yet.',
    ),
  reason: z.string().optional().describe('Why, in a few words.'),
  observedGeneration: z
    .number()
    .int()
    .optional()
    .describe('The metadata.generation the controller last acted on.'),
  conditions: z
    .array(condition)
    .optional()
    .describe('Current conditions (Ready, Reconciling, Stalled, Paused, Invalid, ...).'),
  paused: z
    .strictObject({
      by: z.string().optional().describe('Who paused the run.'),
      reason: z.string().optional().describe('Why, as they said it.'),
      since: z.string().describe('When the run was paused (RFC 3339).'),
    })
    .optional()
    .describe('Set while the run is paused (condition Paused); cleared on resume.'),
  held: z
    .strictObject({
      for: z
        .enum(['freeze', 'window'])
        .describe('freeze: an ArmadaPolicy freezes the cluster; window: outside its deploy windows.'),
      reason: z.string().describe('Why, with the freeze reason or the opening time.'),
      since: z.string().describe('When the run began to hold (RFC 3339).'),
      until: z.string().optional().describe('When the next deploy window opens (RFC 3339).'),
    })
    .optional()
    .describe(
      'Set while the run holds at a safe point for a freeze or a closed deploy window (condition Held); cleared when it goes on.',
    ),
  workflow: z
    .strictObject({
      id: z.string().describe('Temporal workflow ID.'),
      run_id: z.string().optional().describe('Temporal run ID of the current run.'),
      url: z.string().optional().describe('Link to the run in the Temporal UI.'),
    })
    .optional()
    .describe('The Temporal workflow that drives this object.'),
};
