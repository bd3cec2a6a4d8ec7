import { createHash, createHmac } from 'node:crypto';
import {
  comparableDigest,
  keyedDigest,
  treeDigest,
  unkeyedReleaseDigest,
  type TreeFile,
} from '../../activities/charts/digest';
import { stableJson } from '../../core/stable-json';

const sha256 = (text: string) => createHash('sha256').update(text).digest('hex');
const file = (path: string, text: string): TreeFile => ({ path, content: Buffer.from(text) });

describe('stableJson', () => {
  it.each<[string, unknown, string]>([
    ['writes keys in sorted order', { b: 1, a: 2 }, '{"a":2,"b":1}'],
    ['sorts the keys of nested objects too', { z: { y: 1, x: 2 }, a: [] }, '{"a":[],"z":{"x":2,"y":1}}'],
    ['sorts objects inside arrays but keeps the array order', [{ b: 1, a: 1 }, 3, 1], '[{"a":1,"b":1},3,1]'],
    ['sorts by code unit, upper case before lower case', { b: 1, B: 2, a: 3 }, '{"B":2,"a":3,"b":1}'],
    ['sorts numeric-looking keys as text', { 10: 'x', 9: 'y', 1: 'z' }, '{"1":"z","10":"x","9":"y"}'],
    [
      'writes scalars as JSON does',
      { s: 'é"\n', n: -1.5, t: true, f: false, z: null },
      '{"f":false,"n":-1.5,"s":"é\\"\\n","t":true,"z":null}',
    ],
    ['leaves out undefined members of objects', { a: undefined, b: 1 }, '{"b":1}'],
    ['writes undefined array items as null', [undefined, 1], '[null,1]'],
    ['writes non-finite numbers as null', [NaN, Infinity], '[null,null]'],
    ['honours toJSON, as dates use it', { at: new Date(0) }, '{"at":"1970-01-01T00:00:00.000Z"}'],
    ['writes a top-level undefined as null', undefined, 'null'],
    ['writes an empty object as {}', {}, '{}'],
  ])('%s', (_name, value, expected) => {
    expect(stableJson(value)).toBe(expected);
  });

  it.each<[string, unknown, unknown]>([
    [
      'objects whose keys were written in another order',
      { a: 1, b: { c: 2, d: 3 } },
      { b: { d: 3, c: 2 }, a: 1 },
    ],
    [
      'deeply nested values built in different orders',
      { image: { tag: '1', repository: 'r' }, env: [{ value: 'v', name: 'n' }] },
      { env: [{ name: 'n', value: 'v' }], image: { repository: 'r', tag: '1' } },
    ],
  ])('gives the same text for %s', (_name, left, right) => {
    expect(stableJson(left)).toBe(stableJson(right));
  });

  it.each<[string, unknown, unknown]>([
    ['arrays in a different order', [1, 2], [2, 1]],
    ['a number and the same digits as a string', { a: 1 }, { a: '1' }],
    ['null and an empty object', null, {}],
  ])('gives different text for %s', (_name, left, right) => {
    expect(stableJson(left)).not.toBe(stableJson(right));
  });

  it.each<[string, () => unknown]>([
    [
      'a circular structure',
      () => {
        const loop: Record<string, unknown> = {};
        loop.self = loop;
        return loop;
      },
    ],
    ['a BigInt', () => ({ n: BigInt(1) })],
  ])('refuses %s with a TypeError', (_name, make) => {
    expect(() => stableJson(make())).toThrow(TypeError);
  });

  it('encodes an object seen twice but not circular', () => {
    const shared = { b: 1, a: 2 };
    expect(stableJson({ x: shared, y: shared })).toBe('{"x":{"a":2,"b":1},"y":{"a":2,"b":1}}');
  });
});

describe('unkeyedReleaseDigest', () => {
  const chart = 'c'.repeat(64);

  it('is the sha256 hex of the chart digest, a newline and the stable JSON of the values', () => {
    expect(unkeyedReleaseDigest(chart, { b: 1, a: 2 })).toBe(sha256(`${chart}\n{"a":2,"b":1}`));
  });

  it.each<[string, unknown]>([
    ['undefined', undefined],
    ['null', null],
  ])('treats %s values as no values, the same as {}', (_name, values) => {
    expect(unkeyedReleaseDigest(chart, values)).toBe(unkeyedReleaseDigest(chart, {}));
  });
});

describe('keyedDigest of unkeyedReleaseDigest (the release digest)', () => {
  const chart = 'c'.repeat(64);
  const key = Buffer.alloc(32, 7);
  const digest = (chartDigest: string, values: unknown, withKey: Uint8Array = key) =>
    keyedDigest(unkeyedReleaseDigest(chartDigest, values), withKey);

  it('is hmac-sha256: and the HMAC-SHA256 hex, under the key, of the unkeyed digest', () => {
    const unkeyed = unkeyedReleaseDigest(chart, { a: 1 });
    expect(digest(chart, { a: 1 })).toBe(
      `hmac-sha256:${createHmac('sha256', key).update(unkeyed).digest('hex')}`,
    );
    expect(digest(chart, { a: 1 })).toMatch(/^hmac-sha256:[0-9a-f]{64}$/);
  });

  it('is not the unkeyed digest, nor sha256 of the inputs: a guessed Secret value cannot be tested against it', () => {
    const values = { password: 'hunter2' };
    const recorded = digest(chart, values);
    const guess = sha256(`${chart}\n${stableJson(values)}`);
    expect(recorded).not.toContain(guess);
    expect(recorded).not.toContain(unkeyedReleaseDigest(chart, values));
  });

  it('is the same for the same key and inputs, and differs under another key', () => {
    expect(digest(chart, { a: 1 })).toBe(digest(chart, { a: 1 }, Buffer.alloc(32, 7)));
    expect(digest(chart, { a: 1 }, Buffer.alloc(32, 8))).not.toBe(digest(chart, { a: 1 }));
  });

  it.each<[string, [string, unknown], [string, unknown]]>([
    ['values written in another key order', [chart, { a: 1, b: [1, 2] }], [chart, { b: [1, 2], a: 1 }]],
    ['no values and empty values', [chart, undefined], [chart, {}]],
  ])('stays the same for %s', (_name, left, right) => {
    expect(digest(...left)).toBe(digest(...right));
  });

  it.each<[string, [string, unknown], [string, unknown]]>([
    ['a changed value', [chart, { replicaCount: 2 }], [chart, { replicaCount: 3 }]],
    ['an added value', [chart, { a: 1 }], [chart, { a: 1, b: 1 }]],
    ['a nested value', [chart, { image: { tag: '1' } }], [chart, { image: { tag: '2' } }]],
    ['another chart digest', [chart, { a: 1 }], ['d'.repeat(64), { a: 1 }]],
  ])('changes with %s', (_name, left, right) => {
    expect(digest(...left)).not.toBe(digest(...right));
  });
});

describe('comparableDigest', () => {
  const chart = 'c'.repeat(64);
  const key = Buffer.alloc(32, 7);

  it('keys an unkeyed digest recorded before: it equals the keyed digest of the same inputs', () => {
    const recordedBefore = unkeyedReleaseDigest(chart, { a: 1, b: 2 });
    expect(comparableDigest(recordedBefore, key)).toBe(
      keyedDigest(unkeyedReleaseDigest(chart, { b: 2, a: 1 }), key),
    );
  });

  it('leaves an unkeyed digest of other inputs unequal', () => {
    const recordedBefore = unkeyedReleaseDigest(chart, { a: 1 });
    expect(comparableDigest(recordedBefore, key)).not.toBe(
      keyedDigest(unkeyedReleaseDigest(chart, { a: 2 }), key),
    );
  });

  it.each<[string, string | undefined]>([
    ['a keyed digest', keyedDigest('x', Buffer.alloc(32, 7))],
    ['no digest', undefined],
    ['a digest of no known form', 'ABC'],
  ])('returns %s as it is', (_name, recorded) => {
    expect(comparableDigest(recorded, key)).toBe(recorded);
  });
});

describe('treeDigest', () => {
  const chart = [
    file('Chart.yaml', 'name: x\n'),
    file('templates/a.yaml', 'kind: A\n'),
    file('values.yaml', ''),
  ];

  it('is the sha256 over sorted files written as path NUL length NUL bytes', () => {
    const expected = sha256(
      'Chart.yaml\u00008\u0000name: x\ntemplates/a.yaml\u00008\u0000kind: A\nvalues.yaml\u00000\u0000',
    );
    expect(treeDigest(chart)).toBe(expected);
  });

  it('does not depend on the order the files are listed in', () => {
    expect(treeDigest([...chart].reverse())).toBe(treeDigest(chart));
  });

  it.each<[string, TreeFile[]]>([
    ['a changed file', [chart[0], file('templates/a.yaml', 'kind: B\n'), chart[2]]],
    ['an added file', [...chart, file('templates/b.yaml', '')]],
    ['a removed file', chart.slice(0, 2)],
    ['a renamed file', [chart[0], file('templates/b.yaml', 'kind: A\n'), chart[2]]],
    [
      'bytes moved from one file to the next',
      [file('Chart.yaml', 'name: x\nkind: A\n'), file('templates/a.yaml', ''), chart[2]],
    ],
  ])('changes with %s', (_name, files) => {
    expect(treeDigest(files)).not.toBe(treeDigest(chart));
  });

  it('tells an empty tree from a tree of one empty file', () => {
    expect(treeDigest([])).not.toBe(treeDigest([file('a', '')]));
  });
});
