import { z } from 'zod';
import { API_VERSION } from './common';
import { isKindName, kinds, objectMetadata, type KindName } from './kinds';
import { policyKind } from './policy';

/** One reason an object is invalid: the field path as kubectl prints it, and the reason in words. */
export interface Problem {
  path: string;
  message: string;
}

/** `spec.path: message; ...`: an invalid object's problems, as its Invalid condition says them. */
export function describeProblems(problems: readonly Problem[]): string {
  return problems.map((p) => `${p.path}: ${p.message}`).join('; ');
}

export interface Validation {
  kind?: KindName | typeof policyKind.kind;
  name?: string;
  problems: Problem[];
  /** The spec as the kind's schema parses it (defaults filled in), when the spec itself is valid. */
  spec?: unknown;
}

/** Longest path segment a problem repeats (a map key in values or labels can be a megabyte). */
const MAX_SEGMENT = 64;

/**
 * ["spec", "canary", "steps", 1, "percent"] → "spec.canary.steps[1].percent"; a segment longer
 * than 64 characters is cut to its first 64 and "…".
 */
export function formatPath(path: readonly PropertyKey[]): string {
  return path.reduce<string>((out, part) => {
    if (typeof part === 'number') return `${out}[${part}]`;
    const text = String(part);
    const segment = text.length > MAX_SEGMENT ? `${text.slice(0, MAX_SEGMENT)}…` : text;
    return out ? `${out}.${segment}` : segment;
  }, '');
}

/** Plain words for zod's generic messages; the schemas' own messages are kept as written. */
export const plainWords: z.core.$ZodErrorMap = (issue) => {
  if (issue.input === undefined && (issue.code === 'invalid_type' || issue.code === 'invalid_value')) {
    return 'required';
  }
  if (issue.code === 'invalid_value') {
    return `must be one of ${issue.values.map((v) => JSON.stringify(v)).join(', ')}`;
  }
  // The only unions in the schemas are int-or-string fields (durations, min_ready).
  if (issue.code === 'invalid_union') return 'must be a whole number or a string';
  return undefined;
};

/** A zod error as problems, paths under `prefix`; `unknownField` is said of a field no schema has. */
export function problemsOf(
  error: z.ZodError,
  prefix: readonly PropertyKey[],
  unknownField = 'unknown field',
): Problem[] {
  return error.issues.flatMap((issue) =>
    issue.code === 'unrecognized_keys'
      ? issue.keys.map((key) => ({
          path: formatPath([...prefix, ...issue.path, key]),
          message: unknownField,
        }))
      : [{ path: formatPath([...prefix, ...issue.path]), message: issue.message }],
  );
}

/**
 * Checks one document against the kind's schema and every semantic rule the CRD cannot
 * express. The same function serves `armadactl validate` (an ArmadaPolicy's file too) and the
 * bridge.
 */
export function validateObject(doc: unknown): Validation {
  if (typeof doc !== 'object' || doc === null || Array.isArray(doc)) {
    return {
      problems: [
        { path: '', message: 'a document must be an object with apiVersion, kind, metadata and spec' },
      ],
    };
  }
  const obj = doc as Record<string, unknown>;
  const problems: Problem[] = [];
  if (obj.apiVersion !== API_VERSION) {
    problems.push({ path: 'apiVersion', message: `must be ${API_VERSION}` });
  }
  const kind = obj.kind;
  const def = isKindName(kind) ? kinds[kind] : kind === policyKind.kind ? policyKind : undefined;
  if (!def) {
    problems.push({
      path: 'kind',
      message: `must be one of ${[...Object.keys(kinds), policyKind.kind].join(', ')}`,
    });
    return { problems };
  }
  const metadata = objectMetadata.safeParse(obj.metadata ?? {}, { error: plainWords });
  if (!metadata.success) problems.push(...problemsOf(metadata.error, ['metadata']));
  const spec = def.spec.safeParse(obj.spec, { error: plainWords });
  if (!spec.success) problems.push(...problemsOf(spec.error, ['spec']));
  const name = metadata.success ? metadata.data.name : undefined;
  return { kind: def.kind, name, problems, ...(spec.success && { spec: spec.data }) };
}
