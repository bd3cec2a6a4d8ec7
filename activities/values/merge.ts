import { ApplicationFailure } from '@temporalio/common';
import { parseDocument } from 'yaml';
import type { ValuesReference } from '../../api/chart';
import { NonRetryable } from '../../core/failures';
import { kubernetesYamlTags } from '../helm/manifest';

/** Helm values: a map, as a values file holds them. */
export type Values = Record<string, unknown>;

/** One `values_from` entry as the worker read it. */
export interface ValuesDocument {
  reference: ValuesReference;
  /** How failures name it, e.g. `ArmadaChart team-a/web values_from[0] (Secret db, key values.yaml)`. */
  name: string;
  /** The key's value as text (a Secret's decoded from base64). */
  text: string;
}

/** What stands in a failure message for a string that came from `values_from`. */
export const REDACTED = '<values_from>';
/**
 * Shorter strings from `values_from` are not redacted from failures: `true`, `yes` or a port
 * number would blot out helm's message while hiding nothing.
 */
const MIN_REDACTED_LENGTH = 4;

/**
 * The values helm is given, as Flux's HelmRelease merges them: the `values_from` documents in
 * order, each one merged over those before it, then the inline `values` on top. A document with
 * a `target_path` sets its raw text, as a string, at that dot path; the others are YAML maps,
 * merged key by key (maps merge recursively; a list or a scalar replaces what was there).
 * Without documents the inline values are returned as they are, so a chart without
 * `values_from` keeps its digest.
 *
 * Example: `{a: {b: 1, c: 1}}` then `{a: {c: 2}}` then target_path `a.d` "x", inline
 * `{a: {b: 3}}` → `{a: {b: 3, c: 2, d: "x"}}`.
 *
 * Throws InvalidValues, naming the document but never its content, when a YAML document does
 * not parse or is not a map.
 */
export function mergeValues(documents: readonly ValuesDocument[], inline: Values | undefined): Values {
  if (!documents.length) return inline ?? {};
  let merged: Values = {};
  for (const document of documents) {
    const path = document.reference.target_path;
    merged =
      path === undefined ? mergeMaps(merged, parseValues(document)) : setAtPath(merged, path, document.text);
  }
  return mergeMaps(merged, inline ?? {});
}

/** `top` merged over `base` (neither is changed): maps merge recursively, anything else replaces. */
export function mergeMaps(base: Values, top: Values): Values {
  const merged = { ...base };
  for (const [key, value] of Object.entries(top)) {
    const below = Object.hasOwn(merged, key) ? merged[key] : undefined;
    setOwn(merged, key, isMap(below) && isMap(value) ? mergeMaps(below, value) : value);
  }
  return merged;
}

/**
 * `values` with `text` set at the dot path `path` (`a.b` → `{a: {b: text}}`); a map on the way is
 * kept, anything else on the way is replaced by a map, as Helm's `--set-string` does.
 */
export function setAtPath(values: Values, path: string, text: string): Values {
  const [key, ...rest] = path.split('.');
  const below = Object.hasOwn(values, key) ? values[key] : undefined;
  const merged = { ...values };
  setOwn(merged, key, rest.length ? setAtPath(isMap(below) ? below : {}, rest.join('.'), text) : text);
  return merged;
}

/**
 * Every string of at least MIN_REDACTED_LENGTH characters the documents hold (a target_path
 * document's whole text, a YAML document's string and number leaves), longest first: what
 * redactText removes from helm's output before it becomes a failure.
 */
export function valuesStrings(documents: readonly ValuesDocument[]): string[] {
  const found = new Set<string>();
  const visit = (value: unknown): void => {
    if (typeof value === 'string' || typeof value === 'number') found.add(String(value));
    else if (Array.isArray(value)) value.forEach(visit);
    else if (isMap(value)) Object.values(value).forEach(visit);
  };
  for (const document of documents) {
    if (document.reference.target_path === undefined) visit(parseValues(document));
    else found.add(document.text);
  }
  return [...found].filter((s) => s.length >= MIN_REDACTED_LENGTH).sort((a, b) => b.length - a.length);
}

/** `text` with every one of `strings` (longest first, see valuesStrings) replaced by `marker`. */
export function redactText(text: string, strings: readonly string[], marker = REDACTED): string {
  return strings.reduce((redacted, s) => redacted.split(s).join(marker), text);
}

/**
 * A YAML document's map of values, read as helm reads a values file (YAML 1.1); an empty
 * document is no values. The failure names the position and YAML's error code only: the
 * `yaml` package's own message quotes the offending line.
 */
function parseValues(document: ValuesDocument): Values {
  const parsed = parseDocument(document.text, {
    schema: 'yaml-1.1',
    customTags: kubernetesYamlTags,
    prettyErrors: false,
  });
  const error = parsed.errors[0];
  if (error) {
    const line = document.text.slice(0, error.pos[0]).split('\n').length;
    throw invalidValues(`${document.name} is not valid YAML (${error.code} at line ${line})`);
  }
  const values = parsed.toJS() as unknown;
  if (values === null || values === undefined) return {};
  if (!isMap(values)) {
    const what = Array.isArray(values) ? 'a list' : `a ${typeof values}`;
    throw invalidValues(
      `${document.name} holds ${what}, not a map of values; set target_path to use it as one value`,
    );
  }
  return values;
}

function invalidValues(message: string): ApplicationFailure {
  return ApplicationFailure.nonRetryable(message, NonRetryable.InvalidValues);
}

function isMap(value: unknown): value is Values {
  return typeof value === 'object' && value !== null && !Array.isArray(value);
}

/** Sets an own property, so a key such as `__proto__` is a value like any other, never a prototype. */
function setOwn(values: Values, key: string, value: unknown): void {
  Object.defineProperty(values, key, { value, enumerable: true, writable: true, configurable: true });
}
