/**
 * JSON text in which every object's keys are sorted (by UTF-16 code unit, recursively), so two
 * equal values always give the same text whatever order their keys were written in. Otherwise it
 * follows `JSON.stringify`: `toJSON` is honoured, `undefined`, functions and symbols are left out
 * of objects and become `null` in arrays, non-finite numbers become `null`, a BigInt or a cycle
 * throws a TypeError. A top-level `undefined` gives `"null"`, so the result is always text.
 *
 * Example: `stableJson({ b: [2, { d: 1, c: 0 }], a: 1 })` → `{"a":1,"b":[2,{"c":0,"d":1}]}`.
 */
export function stableJson(value: unknown): string {
  return encode(value, new Set()) ?? 'null';
}

function encode(value: unknown, ancestors: Set<object>): string | undefined {
  const plain = hasToJson(value) ? value.toJSON() : value;
  if (plain === null || typeof plain !== 'object') return JSON.stringify(plain) as string | undefined;
  if (ancestors.has(plain)) throw new TypeError('stableJson: cannot encode a circular structure');
  ancestors.add(plain);
  try {
    if (Array.isArray(plain)) {
      return `[${plain.map((item: unknown) => encode(item, ancestors) ?? 'null').join(',')}]`;
    }
    const record = plain as Record<string, unknown>;
    const members = Object.keys(record)
      .sort()
      .flatMap((key) => {
        const text = encode(record[key], ancestors);
        return text === undefined ? [] : [`${JSON.stringify(key)}:${text}`];
      });
    return `{${members.join(',')}}`;
  } finally {
    ancestors.delete(plain);
  }
}

function hasToJson(value: unknown): value is { toJSON(): unknown } {
  return (
    value !== null &&
    typeof value === 'object' &&
    typeof (value as { toJSON?: unknown }).toJSON === 'function'
  );
}
