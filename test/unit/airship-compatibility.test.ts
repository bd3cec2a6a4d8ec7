import { readdirSync, readFileSync } from 'node:fs';
import path from 'node:path';
import { parse } from 'yaml';

/**
 * docs/airship-compatibility.md lists every field of airship Armada's and armada-operator's
 * schemas with a verdict. The schemas are pinned in test/fixtures/airship-schemas/; this walks
 * each one and checks its table lists every field it defines, once, and nothing it does not: a
 * field new upstream (refreshing the pinned copy) fails here until the table says what
 * armada-temporal does with it.
 */
const repo = path.resolve(__dirname, '../..');
const PINNED_DIR = 'test/fixtures/airship-schemas';
const DOC = 'docs/airship-compatibility.md';

/** Each pinned schema: the doc's table (its heading) that lists its fields, as which version, from where. */
const PINNED = [
  { file: 'armada-chart-schema-v1.yaml', table: 'armada/Chart', version: 'v1', root: 'data' },
  { file: 'armada-chart-schema-v2.yaml', table: 'armada/Chart', version: 'v2', root: 'data' },
  { file: 'armada-chartgroup-schema-v1.yaml', table: 'armada/ChartGroup', version: 'v1', root: 'data' },
  { file: 'armada-chartgroup-schema-v2.yaml', table: 'armada/ChartGroup', version: 'v2', root: 'data' },
  { file: 'armada-manifest-schema-v1.yaml', table: 'armada/Manifest', version: 'v1', root: 'data' },
  { file: 'armada-manifest-schema-v2.yaml', table: 'armada/Manifest', version: 'v2', root: 'data' },
  // The operator's schema is the whole object's: its fields sit under `data` by their own name.
  {
    file: 'armada.airshipit.org_armadacharts.yaml',
    table: 'armada-operator ArmadaChart',
    version: 'v1',
    root: '',
  },
];

/** The verdicts the doc may give; the last two must say how, or why. */
const VERDICT = /^(supported differently|supported|refused)\b/;

interface JsonSchema {
  properties?: Record<string, JsonSchema>;
  items?: JsonSchema;
  additionalProperties?: JsonSchema | boolean;
  anyOf?: JsonSchema[];
  oneOf?: JsonSchema[];
  allOf?: JsonSchema[];
  $ref?: string;
  definitions?: Record<string, JsonSchema>;
  /** Those that only constrain values (`type`, `required`, ...). */
  [keyword: string]: unknown;
}

/** Keywords that hold fields, and those that only constrain values: the walk refuses any other. */
const STRUCTURE = ['properties', 'items', 'additionalProperties', 'anyOf', 'oneOf', 'allOf', '$ref'];
const CONSTRAINTS = [
  ...['$schema', 'definitions', 'type', 'required', 'description', 'enum', 'format'],
  ...['minimum', 'minLength', 'maxLength', 'pattern', 'x-kubernetes-preserve-unknown-fields'],
];

/**
 * Every field `schema` names, at any depth, as a path from `root`: a list's items are `[]`, the
 * entries of a map (`additionalProperties`) `*`; a map's keys are not fields, so a map of strings
 * adds none. Alternatives (`anyOf`, `oneOf`, `allOf`) add the fields of each; `$ref`s point into the
 * schema's own `definitions`. A keyword the walk does not know fails it, rather than hiding the
 * fields it might hold.
 */
function fieldPaths(schema: JsonSchema, root: string): string[] {
  const paths = new Set<string>();
  const walk = (node: JsonSchema, at: string): void => {
    const unknown = Object.keys(node).filter((k) => !STRUCTURE.includes(k) && !CONSTRAINTS.includes(k));
    if (unknown.length) throw new Error(`${at || 'the root'}: the walk does not read ${unknown.join(', ')}`);
    if (node.$ref !== undefined) walk(definition(schema, node.$ref), at);
    for (const [name, field] of Object.entries(node.properties ?? {})) {
      const fieldPath = at ? `${at}.${name}` : name;
      paths.add(fieldPath);
      walk(field, fieldPath);
    }
    if (node.items) walk(node.items, `${at}[]`);
    if (typeof node.additionalProperties === 'object') walk(node.additionalProperties, `${at}.*`);
    for (const branch of [...(node.anyOf ?? []), ...(node.oneOf ?? []), ...(node.allOf ?? [])])
      walk(branch, at);
  };
  walk(schema, root);
  return [...paths].sort();
}

function definition(schema: JsonSchema, ref: string): JsonSchema {
  const name = /^#\/definitions\/(.+)$/.exec(ref)?.[1];
  const found = name === undefined ? undefined : schema.definitions?.[name];
  if (!found) throw new Error(`${ref}: not a definition of the schema`);
  return found;
}

/** `a.{b,c}[].{d,e}` → `a.b[].d`, `a.b[].e`, `a.c[].d`, `a.c[].e`. */
function expandBraces(written: string): string[] {
  const group = /\{([^{}]+)\}/.exec(written);
  if (!group) return [written];
  const [before, after] = [written.slice(0, group.index), written.slice(group.index + group[0].length)];
  return group[1].split(',').flatMap((alternative) => expandBraces(before + alternative + after));
}

interface Row {
  line: number;
  fields: { path: string; version?: string }[];
  verdict: string;
}

/** The doc's tables by heading: each row's field paths (braces expanded) and verdict. */
function tablesOf(doc: string): Map<string, Row[]> {
  const tables = new Map<string, Row[]>();
  let heading = '';
  doc.split('\n').forEach((text, i) => {
    if (text.startsWith('## ')) heading = text.slice(3).trim();
    if (!text.startsWith('| `')) return;
    const [, field, verdict] = text.split('|').map((cell) => cell.trim());
    const fields = [...field.matchAll(/`([^`]+)`(?: \((v\d+)\))?/g)].flatMap(([, written, version]) =>
      expandBraces(written).map((p) => ({ path: p, version })),
    );
    tables.set(heading, [...(tables.get(heading) ?? []), { line: i + 1, fields, verdict }]);
  });
  return tables;
}

/** What a table gets wrong against the fields a schema defines. */
function mismatches(defined: readonly string[], listed: readonly string[]) {
  return {
    unlisted: defined.filter((p) => !listed.includes(p)),
    stale: [...new Set(listed.filter((p) => !defined.includes(p)))],
    twice: [...new Set(listed.filter((p, i) => listed.indexOf(p) !== i))],
  };
}

const NONE = { unlisted: [], stale: [], twice: [] };

const readPinned = (file: string) => readFileSync(path.join(repo, PINNED_DIR, file), 'utf8');
const tables = tablesOf(readFileSync(path.join(repo, DOC), 'utf8'));

/** The paths a table lists for one version of its schema (a path with no version is in all). */
const listedFor = (table: string, version: string) =>
  (tables.get(table) ?? []).flatMap((row) =>
    row.fields.filter((f) => (f.version ?? version) === version).map((f) => f.path),
  );

describe(`${DOC} lists every field of the pinned schemas`, () => {
  it.each(PINNED)(
    '$table $version ($file): every field once, and none it lacks',
    ({ file, table, version, root }) => {
      const defined = fieldPaths(parse(readPinned(file)) as JsonSchema, root);
      expect(defined.length).toBeGreaterThan(0);
      expect(mismatches(defined, listedFor(table, version))).toEqual(NONE);
    },
  );

  it('marks a path with versions of its table only', () => {
    const versionsOf = (table: string) => PINNED.filter((p) => p.table === table).map((p) => p.version);
    const wrong = [...new Set(PINNED.map((p) => p.table))].flatMap((table) =>
      (tables.get(table) ?? []).flatMap((row) =>
        row.fields
          .filter((f) => f.version && !versionsOf(table).includes(f.version))
          .map((f) => `${row.line}: ${f.path}`),
      ),
    );
    expect(wrong).toEqual([]);
  });

  it('gives each row a verdict of the three, with the how or why the last two need', () => {
    const rows = [...tables.values()].flat();
    expect(rows.length).toBeGreaterThan(0);
    for (const { line, verdict } of rows) {
      const word = VERDICT.exec(verdict)?.[1];
      expect({ line, verdict, word }).toEqual({ line, verdict, word: expect.any(String) });
      if (word !== 'supported')
        expect({ line, verdict }).toEqual({ line, verdict: expect.stringMatching(/: \S/) });
    }
  });
});

describe(`${PINNED_DIR}/`, () => {
  it('holds the schemas this test reads, no more', () => {
    const files = readdirSync(path.join(repo, PINNED_DIR)).filter((f) => f.endsWith('.yaml'));
    expect(files.sort()).toEqual(PINNED.map((p) => p.file).sort());
  });

  it.each(PINNED)('$file names its source and licence', ({ file }) => {
    const header = readPinned(file)
      .split('\n')
      .filter((l) => l.startsWith('#'))
      .join('\n');
    expect(header).toMatch(/Source: https:\/\/opendev\.org\/airship\/[\w-]+ /);
    expect(header).toMatch(/commit [0-9a-f]{40}\n/);
    expect(header).toMatch(/path \S+\.yaml/);
    expect(header).toMatch(/Apache License, Version 2\.0/);
  });
});

describe('the walk of a schema', () => {
  const schema: JsonSchema = {
    definitions: {
      entry: { properties: { min_ready: {}, labels: { additionalProperties: { type: 'string' } } } },
    },
    properties: {
      name: { type: 'string' },
      wait: {
        properties: {
          resources: {
            anyOf: [
              {
                additionalProperties: {
                  anyOf: [{ $ref: '#/definitions/entry' }, { items: { $ref: '#/definitions/entry' } }],
                },
              },
              { items: { allOf: [{ $ref: '#/definitions/entry' }, { properties: { type: {} } }] } },
            ],
          },
        },
      },
    },
  };

  it('names every field through lists, maps, alternatives and references, and no map key', () => {
    expect(fieldPaths(schema, 'data')).toEqual([
      'data.name',
      'data.wait',
      'data.wait.resources',
      'data.wait.resources.*.labels',
      'data.wait.resources.*.min_ready',
      'data.wait.resources.*[].labels',
      'data.wait.resources.*[].min_ready',
      'data.wait.resources[].labels',
      'data.wait.resources[].min_ready',
      'data.wait.resources[].type',
    ]);
  });

  it('fails on a keyword that could hold fields it does not read', () => {
    expect(() => fieldPaths({ properties: { x: { patternProperties: {} } } }, 'data')).toThrow(
      'data.x: the walk does not read patternProperties',
    );
  });

  it('finds a field added upstream unlisted, and a field removed upstream stale', () => {
    const pinned = parse(readPinned('armada-chart-schema-v2.yaml')) as JsonSchema;
    const listed = listedFor('armada/Chart', 'v2');
    const wait = pinned.properties?.wait?.properties ?? {};
    const withWaitFields = (fields: Record<string, JsonSchema>): JsonSchema => ({
      ...pinned,
      properties: { ...pinned.properties, wait: { ...pinned.properties?.wait, properties: fields } },
    });
    expect(mismatches(fieldPaths(withWaitFields({ ...wait, jitter: {} }), 'data'), listed)).toEqual({
      ...NONE,
      unlisted: ['data.wait.jitter'],
    });
    const withoutTimeout = Object.fromEntries(Object.entries(wait).filter(([name]) => name !== 'timeout'));
    expect(mismatches(fieldPaths(withWaitFields(withoutTimeout), 'data'), listed)).toEqual({
      ...NONE,
      stale: ['data.wait.timeout'],
    });
  });

  it('expands braces into every combination', () => {
    expect(expandBraces('a.{b,c}[].{d,e}')).toEqual(['a.b[].d', 'a.b[].e', 'a.c[].d', 'a.c[].e']);
  });
});
