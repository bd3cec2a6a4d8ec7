import { ApplicationFailure } from '@temporalio/common';
import { valuesReference } from '../../api/chart';
import {
  REDACTED,
  mergeValues,
  redactText,
  valuesStrings,
  type ValuesDocument,
} from '../../activities/values/merge';
import { NonRetryable } from '../../core/failures';

/** A values_from document as the worker reads it: YAML merged, or with `target_path` one string. */
const doc = (text: string, more: { target_path?: string; name?: string } = {}): ValuesDocument => ({
  reference: valuesReference.parse({
    kind: 'Secret',
    name: more.name ?? 'db',
    target_path: more.target_path,
  }),
  name: `ArmadaChart team-a/web values_from[0] (Secret ${more.name ?? 'db'}, key values.yaml)`,
  text,
});

/** The failure mergeValues throws for `documents`, to read its type and message. */
function failureOf(documents: ValuesDocument[]): ApplicationFailure {
  try {
    mergeValues(documents, undefined);
  } catch (err) {
    if (err instanceof ApplicationFailure) return err;
    throw err;
  }
  throw new Error('mergeValues did not fail');
}

describe('mergeValues (values_from in order, then the inline values on top, as Flux merges)', () => {
  it.each<[string, ValuesDocument[], Record<string, unknown> | undefined, Record<string, unknown>]>([
    ['returns the inline values as they are without documents', [], { a: 1 }, { a: 1 }],
    ['gives no values at all as {}', [], undefined, {}],
    ['reads a document as a YAML map', [doc('a: 1\nb:\n  c: x\n')], undefined, { a: 1, b: { c: 'x' } }],
    [
      'lets a later document win over an earlier one, key by key',
      [doc('a: {b: 1, c: 1}'), doc('a: {c: 2}')],
      undefined,
      { a: { b: 1, c: 2 } },
    ],
    [
      'puts the inline values on top of every document',
      [doc('a: {b: 1, c: 1}')],
      { a: { b: 3 } },
      { a: { b: 3, c: 1 } },
    ],
    ['replaces a list instead of merging it', [doc('l: [1, 2, 3]')], { l: [9] }, { l: [9] }],
    ['lets a map replace a scalar', [doc('a: 1'), doc('a: {b: 2}')], undefined, { a: { b: 2 } }],
    [
      'sets a target_path document as one string',
      [doc('s3cr3t', { target_path: 'auth.password' })],
      undefined,
      { auth: { password: 's3cr3t' } },
    ],
    [
      'keeps a target_path value a string, as --set-string does',
      [doc('1234', { target_path: 'port' }), doc('true', { target_path: 'on' })],
      undefined,
      { port: '1234', on: 'true' },
    ],
    [
      'keeps the maps on a target_path and replaces a scalar in its way',
      [doc('a: {b: 1}\nx: 1'), doc('v', { target_path: 'a.c' }), doc('w', { target_path: 'x.y' })],
      undefined,
      { a: { b: 1, c: 'v' }, x: { y: 'w' } },
    ],
    [
      'follows the worked example of its doc comment',
      [doc('a: {b: 1, c: 1}'), doc('a: {c: 2}'), doc('x', { target_path: 'a.d' })],
      { a: { b: 3 } },
      { a: { b: 3, c: 2, d: 'x' } },
    ],
    ['reads an empty document as no values', [doc(''), doc('# only a comment\n')], { a: 1 }, { a: 1 }],
    ['reads YAML 1.1 as helm does: 0644 is octal', [doc('mode: 0644')], undefined, { mode: 420 }],
  ])('%s', (_name, documents, inline, expected) => {
    expect(mergeValues(documents, inline)).toEqual(expected);
  });

  it('treats a __proto__ key as a value, never as the prototype', () => {
    const merged = mergeValues(
      [doc('__proto__: {polluted: true}'), doc('x', { target_path: '__proto__.y' })],
      {},
    );
    expect(Object.getPrototypeOf(merged)).toBe(Object.prototype);
    expect(({} as Record<string, unknown>).polluted).toBeUndefined();
    expect(Object.hasOwn(merged, '__proto__')).toBe(true);
  });

  it('changes neither the documents nor the inline values', () => {
    const inline = { a: { b: 1 } };
    mergeValues([doc('a: {c: 2}'), doc('x', { target_path: 'a.d' })], inline);
    expect(inline).toEqual({ a: { b: 1 } });
  });

  it.each<[string, string, RegExp]>([
    [
      'names a YAML syntax error by position, never by content',
      'ok: 1\npassword: hunter22: x\n',
      /^ArmadaChart team-a\/web values_from\[0\] \(Secret db, key values\.yaml\) is not valid YAML \([A-Z_]+ at line 2\)$/,
    ],
    [
      'refuses a list, naming the entry',
      '- hunter22\n',
      /values_from\[0\] \(Secret db, key values\.yaml\) holds a list, not a map of values/,
    ],
    [
      'refuses a plain string and suggests target_path',
      'hunter22',
      /holds a string, not a map of values; set target_path/,
    ],
  ])('%s', (_name, text, message) => {
    const failure = failureOf([doc(text)]);
    expect(failure.type).toBe(NonRetryable.InvalidValues);
    expect(failure.nonRetryable).toBe(true);
    expect(failure.message).toMatch(message);
    expect(failure.message).not.toContain('hunter22');
    expect(failure.stack).not.toContain('hunter22');
  });
});

describe('valuesStrings and redactText (keeping values_from out of helm failures)', () => {
  it('finds every string and number of the documents, longest first, and leaves out short ones', () => {
    const documents = [
      doc('db: {password: hunter22, port: 5432, tls: true, user: ab}'),
      doc('tok-abcdef', { target_path: 't' }),
    ];
    expect(valuesStrings(documents)).toEqual(['tok-abcdef', 'hunter22', '5432']);
  });

  it('replaces each of them in a message, a longer one before a string inside it', () => {
    const message = 'Invalid value: "hunter22-extra" and "hunter22"';
    expect(redactText(message, ['hunter22-extra', 'hunter22'])).toBe(
      `Invalid value: "${REDACTED}" and "${REDACTED}"`,
    );
  });
});

describe('the values_from schema', () => {
  it('reads values.yaml when no key is named, as Flux does', () => {
    expect(valuesReference.parse({ kind: 'ConfigMap', name: 'flags' })).toEqual({
      kind: 'ConfigMap',
      name: 'flags',
      key: 'values.yaml',
    });
  });

  it.each<[string, Record<string, unknown>, string]>([
    ['a kind other than Secret or ConfigMap', { kind: 'Pod', name: 'x' }, 'kind'],
    ['a name that is no object name', { kind: 'Secret', name: 'Not_A_Name' }, 'name'],
    ['a key a Secret cannot hold', { kind: 'Secret', name: 'db', key: 'a/b' }, 'key'],
    [
      'a target_path with an empty segment',
      { kind: 'Secret', name: 'db', target_path: 'a..b' },
      'target_path',
    ],
  ])('refuses %s, naming the field', (_name, reference, field) => {
    const result = valuesReference.safeParse(reference);
    expect(result.success).toBe(false);
    expect(result.error?.issues.map((issue) => issue.path.join('.'))).toEqual([field]);
  });
});
