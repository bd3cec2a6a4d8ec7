import { FILE_HEADERS_ONLY, formatPatch, structuredPatch } from 'diff';
import { stringify } from 'yaml';
import { sha256Hex } from '../activities/charts/digest';
import { renderedObjects, type RenderedObject } from '../activities/helm/manifest';

/** What a diff shows for each value of a Secret's `data` and `stringData`. */
export const MASK = '***';
/** A Secret value that differs from the live one, or that the live Secret lacks. */
export const MASK_CHANGED = `${MASK} (changed)`;
export const MASK_NEW = `${MASK} (new)`;

/** How a diff names an object: `Deployment/apps/web` (the release's namespace when it names none). */
function objectKey(object: RenderedObject, namespace: string): string {
  const { kind, metadata } = object;
  return `${String(kind)}/${String(metadata?.namespace ?? namespace)}/${String(metadata?.name)}`;
}

const SECRET_FIELDS = ['data', 'stringData'] as const;
const isSecret = (o: RenderedObject) => o.apiVersion === 'v1' && o.kind === 'Secret';

/** `data.password` → sha256 of its value, for every value of a Secret. */
function secretDigests(secret: RenderedObject): Map<string, string> {
  const digests = new Map<string, string>();
  for (const field of SECRET_FIELDS)
    for (const [key, value] of Object.entries((secret[field] ?? {}) as Record<string, unknown>))
      digests.set(`${field}.${key}`, sha256Hex(String(value)));
  return digests;
}

/**
 * A Secret with each value of `data` and `stringData` replaced: by MASK, or, given the digests of
 * the live Secret of the same name (`live`), by MASK_CHANGED where the value's sha256 differs
 * and MASK_NEW where the live Secret has no such key. Only the digests are compared: no value
 * is printed, nor a hash of one (a short secret's hash is a guess away from the secret). Any
 * other object is returned as it is.
 */
export function maskSecret(object: RenderedObject, live?: Map<string, string>): RenderedObject {
  if (!isSecret(object)) return object;
  const masked: RenderedObject = { ...object };
  const digests = secretDigests(object);
  for (const field of SECRET_FIELDS) {
    const values = object[field] as Record<string, unknown> | undefined;
    if (!values) continue;
    masked[field] = Object.fromEntries(
      Object.keys(values).map((key) => {
        const before = live?.get(`${field}.${key}`);
        if (!live) return [key, MASK];
        if (before === undefined) return [key, MASK_NEW];
        return [key, before === digests.get(`${field}.${key}`) ? MASK : MASK_CHANGED];
      }),
    );
  }
  return masked;
}

/** One object's change between a release's live manifest and the one a run would write. */
export interface ObjectDiff {
  /** `Kind/namespace/name`. */
  object: string;
  change: 'added' | 'removed' | 'changed';
  /** A unified diff of the object's YAML (Secrets masked), `--- live/…` against `+++ wanted/…`. */
  patch: string;
}

/** An object as YAML, masked; no line folding, so a long value stays one line of the diff. */
const yamlOf = (object: RenderedObject | undefined) => (object ? stringify(object, { lineWidth: 0 }) : '');

/**
 * The objects that differ between the `live` manifest (`helm get manifest`; '' for none) and the
 * `wanted` one (what the run would write; '' for an uninstall), in object order (kind, namespace,
 * name): each as a unified diff of its YAML with three lines of context, an added one against
 * /dev/null and a removed one to it. Secrets are masked on both sides (maskSecret), the wanted
 * side marked against the live one. Objects are compared as parsed, so comments and the order
 * helm printed them in make no difference. Throws InvalidChart when either is not YAML.
 */
export function manifestDiff(live: string, wanted: string, namespace: string): ObjectDiff[] {
  const byKey = (manifest: string) =>
    new Map(renderedObjects(manifest).map((o) => [objectKey(o, namespace), o] as const));
  const before = byKey(live);
  const after = byKey(wanted);
  const keys = [...new Set([...before.keys(), ...after.keys()])].sort();
  return keys.flatMap((key): ObjectDiff[] => {
    const old = before.get(key);
    const next = after.get(key);
    const oldText = yamlOf(old && maskSecret(old));
    const newText = yamlOf(next && maskSecret(next, old && isSecret(old) ? secretDigests(old) : undefined));
    if (oldText === newText) return [];
    const patch = formatPatch(
      structuredPatch(
        old ? `live/${key}` : '/dev/null',
        next ? `wanted/${key}` : '/dev/null',
        oldText,
        newText,
      ),
      FILE_HEADERS_ONLY,
    );
    return [{ object: key, change: !old ? 'added' : !next ? 'removed' : 'changed', patch }];
  });
}
