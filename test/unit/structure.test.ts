import path from 'node:path';
import { fileCycles, importGraph, importsOf, sourceFiles, type FileImport } from '../helpers/import-graph';

/**
 * The layering of docs/explanation/architecture.md: api → core → {workflows, activities, kube} →
 * {runs, worker} → {bridge, cli}, no arrow back and no file cycle (type-only imports count).
 */
const ROOT = path.join(__dirname, '..', '..');
const PRODUCT = ['api', 'core', 'workflows', 'activities', 'kube', 'runs', 'worker', 'bridge', 'cli'];
/** The only files of workflows/ the folders above it and beside it may import: the message definitions. */
const MESSAGE_DEFINITIONS = ['workflows/messages.ts', 'workflows/search-attributes.ts'];
/** The folders that signal, query and search runs: they may import MESSAGE_DEFINITIONS. */
const MESSAGE_USERS = ['activities', 'kube', 'runs', 'bridge', 'cli'];
/** Folders each folder may import besides itself (workflows/ only through MESSAGE_DEFINITIONS unless listed). */
const MAY_IMPORT: Record<string, readonly string[]> = {
  api: [],
  core: ['api'],
  // workflows/ names activities only by type (proxyActivities<typeof activities>): see the rule below.
  workflows: ['api', 'core'],
  kube: ['api', 'core'],
  // kube/ is the Kubernetes client the activities call through.
  activities: ['api', 'core', 'kube'],
  runs: ['api', 'core', 'kube'],
  // The worker registers the workflows (bundle) and the activities.
  worker: ['api', 'core', 'kube', 'activities', 'workflows', 'runs'],
  // The bridge loads no activity code; bridge/ and cli/ never import each other.
  bridge: ['api', 'core', 'kube', 'runs', 'worker'],
  cli: ['api', 'core', 'kube', 'activities', 'runs'],
};
/** What core/ may take from packages: pure code only (no I/O, no Temporal, no Kubernetes client). */
const CORE_PACKAGES = /^(zod|@noble\/[\w-]+)(\/|$)/;

const folderOf = (file: string) => file.split('/')[0];

/** Why an import breaks the layering, or undefined when it is allowed. */
export function layeringProblem(imp: FileImport): string | undefined {
  const from = folderOf(imp.from);
  if (!imp.to) {
    if (from === 'core' && !CORE_PACKAGES.test(imp.specifier))
      return 'core/ imports only api/, core/, zod and @noble/*';
    return undefined;
  }
  const to = folderOf(imp.to);
  if (to === from || !PRODUCT.includes(to)) return undefined;
  if (MAY_IMPORT[from].includes(to)) return undefined;
  if (from === 'workflows' && to === 'activities')
    return imp.typeOnly ? undefined : 'workflows/ import activities/ by type only';
  if (to === 'workflows' && MESSAGE_USERS.includes(from))
    return MESSAGE_DEFINITIONS.includes(imp.to)
      ? undefined
      : `${from}/ may import from workflows/ only ${MESSAGE_DEFINITIONS.join(' and ')}`;
  return `${from}/ may not import ${to}/ (allowed: ${MAY_IMPORT[from].join(', ') || 'nothing'})`;
}

describe('importsOf', () => {
  it('reads value, type-only, inline-type, re-export, bare, dynamic and multi-line imports', () => {
    const source = [
      "import { a, b as c } from './values';",
      "import type { T } from '../types';",
      "import { type U, type V } from './inline-types';",
      "import { type W, x } from './mixed';",
      "import * as all from '../all';",
      "import def, { y } from 'pkg';",
      "export { z } from './re-export';",
      "export type { Z } from './re-export-type';",
      "import './effects';",
      'const later = () => import("./lazy");',
      "const old = require('./required');",
      'import {',
      '  first,',
      '  type second,',
      "} from './multi-line';",
    ].join('\n');
    expect(importsOf(source)).toEqual([
      { specifier: './values', typeOnly: false },
      { specifier: '../types', typeOnly: true },
      { specifier: './inline-types', typeOnly: true },
      { specifier: './mixed', typeOnly: false },
      { specifier: '../all', typeOnly: false },
      { specifier: 'pkg', typeOnly: false },
      { specifier: './re-export', typeOnly: false },
      { specifier: './re-export-type', typeOnly: true },
      { specifier: './effects', typeOnly: false },
      { specifier: './lazy', typeOnly: false },
      { specifier: './required', typeOnly: false },
      { specifier: './multi-line', typeOnly: false },
    ]);
  });

  it('ignores imports in comments and words that only look like imports', () => {
    const source = [
      "// import { gone } from './line-comment';",
      "/* import { gone } from './block-comment'; */",
      "const url = 'https://example.com'; import { kept } from './after-url';",
      "export const from = 'x'; const text = `import a from 'b'`;",
    ].join('\n');
    expect(importsOf(source).map((i) => i.specifier)).toEqual(['./after-url']);
  });
});

describe('fileCycles', () => {
  it('names the files of each cycle, type-only imports included, and nothing else', () => {
    const edges = [
      { from: 'a.ts', to: 'b.ts' },
      { from: 'b.ts', to: 'c.ts' },
      { from: 'c.ts', to: 'a.ts' },
      { from: 'c.ts', to: 'd.ts' },
      { from: 'd.ts', to: 'e.ts' },
      { from: 'f.ts', to: 'f.ts' },
      { from: 'g.ts' },
    ];
    expect(fileCycles(edges)).toEqual(expect.arrayContaining([['a.ts', 'b.ts', 'c.ts'], ['f.ts']]));
    expect(fileCycles(edges)).toHaveLength(2);
  });
});

describe('layeringProblem', () => {
  const imp = (from: string, to: string | undefined, typeOnly = false, specifier = 'x'): FileImport => ({
    from,
    to,
    typeOnly,
    specifier,
  });
  it.each([
    ['core/plan/a.ts', 'api/chart.ts', false],
    ['core/a.ts', undefined, false, 'zod'],
    ['core/a.ts', undefined, false, '@noble/curves/ed25519'],
    ['workflows/chart.ts', 'activities/index.ts', true],
    ['activities/x.ts', 'kube/client.ts', false],
    ['bridge/x.ts', 'workflows/messages.ts', false],
    ['cli/x.ts', 'workflows/search-attributes.ts', false],
    ['worker/x.ts', 'workflows/index.ts', false],
  ])('allows %s → %s (type-only %s)', (from, to, typeOnly, specifier = 'x') => {
    expect(layeringProblem(imp(from, to, typeOnly, specifier))).toBeUndefined();
  });
  it.each([
    ['core/a.ts', 'workflows/chart.ts', false, 'x', 'core/ may not import workflows/'],
    ['core/a.ts', 'workflows/messages.ts', true, 'x', 'core/ may not import workflows/'],
    ['core/a.ts', undefined, false, '@temporalio/workflow', 'core/ imports only'],
    ['core/a.ts', undefined, false, 'node:fs', 'core/ imports only'],
    ['workflows/chart.ts', 'activities/index.ts', false, 'x', 'by type only'],
    ['workflows/chart.ts', 'kube/client.ts', true, 'x', 'workflows/ may not import kube/'],
    ['activities/x.ts', 'workflows/chart.ts', true, 'x', 'only workflows/messages.ts'],
    ['runs/x.ts', 'bridge/x.ts', false, 'x', 'runs/ may not import bridge/'],
    ['api/x.ts', 'core/x.ts', true, 'x', 'api/ may not import core/'],
  ])('refuses %s → %s (type-only %s)', (from, to, typeOnly, specifier, why) => {
    expect(layeringProblem(imp(from, to, typeOnly, specifier))).toContain(why);
  });
});

describe('the product code', () => {
  const graph = importGraph(ROOT, sourceFiles(ROOT, PRODUCT));

  it('is read whole (the parser finds the imports of every folder)', () => {
    for (const folder of PRODUCT.filter((f) => f !== 'api'))
      expect(graph.filter((i) => folderOf(i.from) === folder).length).toBeGreaterThan(0);
  });

  const cycles = fileCycles(graph).map((cycle) => cycle.join(' ↔ '));

  it('has no file cycle', () => {
    expect(cycles).toEqual([]);
  });

  it('imports only along the layers', () => {
    const problems = graph.flatMap((imp) => {
      const why = layeringProblem(imp);
      return why ? [`${imp.from} imports '${imp.specifier}': ${why}`] : [];
    });
    expect(problems).toEqual([]);
  });
});
