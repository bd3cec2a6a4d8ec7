/**
 * Kubernetes' rules for a structural CRD schema (apiextensions.k8s.io/v1), as far as armada's
 * generator can break them. The generator asserts them on every schema it writes; a test does too.
 */
type Schema = Record<string, unknown>;

/** Fields whose values are free-form and may keep unknown fields. */
export const FREE_FORM_PATHS = ['.spec.values'];

const FORBIDDEN_KEYS = [
  '$ref',
  '$defs',
  'definitions',
  'anyOf',
  'oneOf',
  'allOf',
  'not',
  'propertyNames',
  '$schema',
];

/** Every violation of the structural rules in a schema, each with the path where it is. */
export function structuralViolations(schema: Schema, path = ''): string[] {
  const out: string[] = [];
  for (const key of FORBIDDEN_KEYS) {
    if (key in schema) out.push(`${path || '.'}: ${key} is not allowed in a structural schema`);
  }
  const intOrString = schema['x-kubernetes-int-or-string'] === true;
  const freeForm = schema['x-kubernetes-preserve-unknown-fields'] === true;
  if (!intOrString && typeof schema.type !== 'string') out.push(`${path || '.'}: has no type`);
  if (intOrString && 'type' in schema) out.push(`${path}: x-kubernetes-int-or-string must not also set type`);
  if (freeForm && !FREE_FORM_PATHS.includes(path)) {
    out.push(`${path}: x-kubernetes-preserve-unknown-fields is only for free-form values`);
  }
  if (schema.properties && 'additionalProperties' in schema) {
    out.push(`${path}: additionalProperties beside properties`);
  }
  for (const [name, child] of Object.entries((schema.properties ?? {}) as Record<string, Schema>)) {
    out.push(...structuralViolations(child, `${path}.${name}`));
  }
  if (typeof schema.items === 'object')
    out.push(...structuralViolations(schema.items as Schema, `${path}[*]`));
  if (typeof schema.additionalProperties === 'object') {
    out.push(...structuralViolations(schema.additionalProperties as Schema, `${path}{*}`));
  }
  return out;
}
