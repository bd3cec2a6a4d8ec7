/**
 * Query templates of a Prometheus analysis; no zod and no I/O here, so the schema checks a
 * template and the activity renders it with the same code.
 *
 * A template is PromQL with placeholders in double braces (spaces inside allowed):
 * - `{{namespace}}`: the namespace of the Deployments, e.g. `shop`;
 * - `{{selector}}`: label matchers of exactly the pods of one side (the canary's, or the
 *   stable's for compare_to_stable), to put inside a series selector:
 *   `namespace="shop",pod=~"web-canary-5d9f-abcde|web-canary-5d9f-fghij"`;
 * - `{{labels.<key>}}`: the value of a label that every pod of that side carries, e.g.
 *   `{{labels.app}}`.
 * Example: `sum(rate(http_errors_total{ {{selector}} }[1m])) / sum(rate(http_requests_total{ {{selector}} }[1m]))`.
 */

/** The pods of one side of a canary, as a template sees them. */
export interface QuerySide {
  namespace: string;
  /** Names of the side's pods; at least one. */
  pods: readonly string[];
  /** The labels every one of those pods carries with the same value. */
  labels: Readonly<Record<string, string>>;
}

/** `{{ name }}`: a placeholder; its name may not contain braces. */
const PLACEHOLDER = /\{\{\s*([^{}]*?)\s*\}\}/g;
/** A Kubernetes label key: an optional DNS-subdomain prefix and `/`, then a name of up to 63 characters. */
const LABEL_KEY = /^([a-z0-9]([-a-z0-9.]{0,251}[a-z0-9])?\/)?[A-Za-z0-9]([-A-Za-z0-9_.]{0,61}[A-Za-z0-9])?$/;
const KNOWN = '{{namespace}}, {{selector}} or {{labels.<key>}}';

type Placeholder = { kind: 'namespace' } | { kind: 'selector' } | { kind: 'label'; key: string };

/** What a placeholder's name stands for; undefined when it is none of the known ones. */
function placeholder(name: string): Placeholder | undefined {
  if (name === 'namespace' || name === 'selector') return { kind: name };
  const key = /^labels\.(.+)$/.exec(name)?.[1];
  return key !== undefined && LABEL_KEY.test(key) ? { kind: 'label', key } : undefined;
}

/**
 * Why a template cannot be rendered, or undefined when it can: an unknown placeholder
 * (`{{pod}}`, `{{labels.}}`) or `{{` / `}}` outside a placeholder.
 */
export function queryTemplateProblem(template: string): string | undefined {
  const unknown = [...template.matchAll(PLACEHOLDER)].find(([, name]) => !placeholder(name));
  if (unknown) return `unknown placeholder ${unknown[0]}: use ${KNOWN}`;
  const rest = template.replace(PLACEHOLDER, ' ');
  if (rest.includes('{{') || rest.includes('}}'))
    return `"{{" or "}}" outside a placeholder: write ${KNOWN}, and put a space between a selector's brace and a placeholder`;
  return undefined;
}

/**
 * The template with its placeholders filled in for `side`. Throws when the template has a
 * problem (see queryTemplateProblem) or names a label not every pod of the side carries.
 */
export function renderQuery(template: string, side: QuerySide): string {
  const problem = queryTemplateProblem(template);
  if (problem) throw new Error(problem);
  return template.replace(PLACEHOLDER, (_, name: string) => {
    const found = placeholder(name)!;
    if (found.kind === 'namespace') return side.namespace;
    if (found.kind === 'selector') return selector(side);
    const value = side.labels[found.key];
    if (value === undefined)
      throw new Error(`label ${found.key} of {{labels.${found.key}}} is not on every pod`);
    return value;
  });
}

/**
 * `namespace="shop",pod=~"a|b"`. Pod names are DNS subdomains: a `.` is the only character
 * that a regular expression reads specially, escaped as `\.`, written `\\.` in a PromQL string.
 */
function selector({ namespace, pods }: QuerySide): string {
  if (!pods.length) throw new Error('no pods to select');
  const alternatives = pods.map((pod) => pod.replaceAll('.', '\\\\.')).join('|');
  return `namespace="${namespace}",pod=~"${alternatives}"`;
}
