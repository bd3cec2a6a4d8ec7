import { z } from 'zod';
import { GROUP, VERSION } from './common';
import { kinds, type KindDefinition } from './kinds';
import { policyKind } from './policy';
import { structuralViolations } from './structural';

type Schema = Record<string, unknown>;

const SAFE_INTEGER_BOUNDS = [Number.MIN_SAFE_INTEGER, Number.MAX_SAFE_INTEGER];

/**
 * Rewrites zod's OpenAPI 3.0 output into a structural schema, in place:
 * int-or-string unions lose their anyOf, free-form values lose the `additionalProperties: {}`,
 * objects lose `additionalProperties: false` (the API server prunes unknown fields itself),
 * record keys lose `propertyNames`, an empty `properties` goes, and zod's safe-integer bounds
 * are dropped as noise.
 */
function makeStructural(schema: Schema): Schema {
  if (schema['x-kubernetes-int-or-string']) {
    delete schema.anyOf;
    delete schema.type;
  }
  if (schema['x-kubernetes-preserve-unknown-fields']) delete schema.additionalProperties;
  if (schema.properties && 'additionalProperties' in schema) delete schema.additionalProperties;
  // The API server stores no empty `properties`: kept, the stored CRD differed from the file,
  // and helm's server-side apply of the chart's copy conflicted with kubectl's over .spec.versions.
  if (schema.properties && Object.keys(schema.properties).length === 0) delete schema.properties;
  delete schema.propertyNames;
  if (SAFE_INTEGER_BOUNDS.includes(schema.minimum as number)) delete schema.minimum;
  if (SAFE_INTEGER_BOUNDS.includes(schema.maximum as number)) delete schema.maximum;
  for (const child of Object.values((schema.properties ?? {}) as Record<string, Schema>))
    makeStructural(child);
  if (typeof schema.items === 'object') makeStructural(schema.items as Schema);
  if (typeof schema.additionalProperties === 'object') makeStructural(schema.additionalProperties as Schema);
  return schema;
}

/** The structural OpenAPI v3 schema of a zod schema, as the input a user writes. */
export function openApiSchema(schema: z.ZodType): Schema {
  const json = z.toJSONSchema(schema, {
    target: 'openapi-3.0',
    io: 'input',
    unrepresentable: 'throw',
  }) as Schema;
  delete json.$schema;
  return makeStructural(json);
}

/** The CustomResourceDefinition of one kind. Throws when its schema is not structural. */
export function crdFor(def: KindDefinition): Schema {
  const openAPIV3Schema: Schema = {
    type: 'object',
    description: def.description,
    properties: {
      apiVersion: { type: 'string', description: `${GROUP}/${VERSION}` },
      kind: { type: 'string', description: def.kind },
      metadata: { type: 'object' },
      spec: openApiSchema(def.spec),
      status: openApiSchema(def.status),
    },
    required: ['spec'],
  };
  const violations = structuralViolations(openAPIV3Schema);
  if (violations.length) throw new Error(`${def.kind} schema is not structural:\n${violations.join('\n')}`);
  return {
    apiVersion: 'apiextensions.k8s.io/v1',
    kind: 'CustomResourceDefinition',
    metadata: { name: `${def.plural}.${GROUP}` },
    spec: {
      group: GROUP,
      names: {
        kind: def.kind,
        listKind: `${def.kind}List`,
        plural: def.plural,
        singular: def.singular,
        shortNames: def.shortNames,
        categories: ['armada'],
      },
      scope: def.scope ?? 'Namespaced',
      versions: [
        {
          name: VERSION,
          served: true,
          storage: true,
          subresources: { status: {} },
          additionalPrinterColumns: def.columns,
          schema: { openAPIV3Schema },
        },
      ],
    },
  };
}

/** Every kind with a CRD: the four a run deploys, and the policy that bounds them. */
export const crdKinds: readonly KindDefinition[] = [...Object.values(kinds), policyKind];

/** Every CRD, keyed by the file it is written to under deploy/crds/. */
export function allCrds(): Record<string, Schema> {
  return Object.fromEntries(crdKinds.map((def) => [`${def.plural}.yaml`, crdFor(def)]));
}
