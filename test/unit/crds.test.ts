import { readFileSync } from 'node:fs';
import path from 'node:path';
import { allCrds } from '../../api/crd';
import { renderCrd } from '../../api/generate-crds';
import { REFERENCE_PAGE, withSpecReference } from '../../api/reference';
import { structuralViolations } from '../../api/structural';
import { generatedPages } from '../../docs-tools/pages';

const crdDir = path.resolve(__dirname, '../../deploy/crds');
const chartCrdDir = path.resolve(__dirname, '../../deploy/chart/crds');
const crds = Object.entries(allCrds());

type Crd = { spec: { versions: { schema: { openAPIV3Schema: Record<string, unknown> } }[] } };
const schemaOf = (crd: object) => (crd as Crd).spec.versions[0].schema.openAPIV3Schema;

describe('generated CRDs', () => {
  it('cover the four kinds and the policy', () => {
    expect(crds.map(([file]) => file).sort()).toEqual([
      'armadachartgroups.yaml',
      'armadacharts.yaml',
      'armadamanifests.yaml',
      'armadapolicies.yaml',
      'deployers.yaml',
    ]);
  });

  it.each(crds)('deploy/crds/%s and the chart copy equal what `npm run crds` generates now', (file, crd) => {
    expect(readFileSync(path.join(crdDir, file), 'utf8')).toBe(renderCrd(crd));
    expect(readFileSync(path.join(chartCrdDir, file), 'utf8')).toBe(renderCrd(crd));
  });

  it(`${REFERENCE_PAGE}'s field reference equals what \`npm run crds\` generates now`, () => {
    const page = readFileSync(path.resolve(__dirname, '../..', REFERENCE_PAGE), 'utf8');
    expect(page).toBe(withSpecReference(page));
    expect(page).toContain('| `canary.steps[].percent` (required) | integer |');
  });

  it.each(crds)('%s has a structural schema', (_file, crd) => {
    expect(structuralViolations(schemaOf(crd))).toEqual([]);
  });

  it.each(crds)('%s describes every field', (_file, crd) => {
    const undescribed: string[] = [];
    const walk = (node: Record<string, unknown>, at: string) => {
      for (const [name, child] of Object.entries(
        (node.properties ?? {}) as Record<string, Record<string, unknown>>,
      )) {
        if (!child.description && name !== 'metadata') undescribed.push(`${at}.${name}`);
        walk(child, `${at}.${name}`);
        if (child.items) walk(child.items as Record<string, unknown>, `${at}.${name}[*]`);
      }
    };
    walk(schemaOf(crd), '');
    expect(undescribed).toEqual([]);
  });
});

describe('pages `npm run docs` generates', () => {
  const root = path.resolve(__dirname, '../..');
  const pages = generatedPages(root);

  it('are the armadactl and environment references, the state words, the test times and the benchmark figures', () => {
    expect(pages.map((page) => page.file)).toEqual([
      'docs/reference/armadactl.md',
      'docs/reference/environment.md',
      'docs/reference/observability.md',
      'docs/contributing/testing.md',
      'docs/explanation/performance.md',
    ]);
  });

  it.each(pages.map((page) => [page.file, page] as const))(
    '%s equals what `npm run docs` generates now',
    (file, page) => {
      const current = readFileSync(path.join(root, file), 'utf8');
      expect(current).toBe(page.render(current));
    },
  );
});

describe('structuralViolations', () => {
  it.each([
    ['a $ref', { type: 'object', $ref: '#/definitions/x' }, '.: $ref is not allowed in a structural schema'],
    [
      'a typed anyOf',
      { anyOf: [{ type: 'string' }, { type: 'integer' }] },
      '.: anyOf is not allowed in a structural schema',
    ],
    ['a node without type', { type: 'object', properties: { a: { description: 'x' } } }, '.a: has no type'],
    [
      'additionalProperties beside properties',
      { type: 'object', properties: { a: { type: 'string' } }, additionalProperties: false },
      ': additionalProperties beside properties',
    ],
    [
      'preserve-unknown-fields outside free-form values',
      {
        type: 'object',
        properties: { spec: { type: 'object', 'x-kubernetes-preserve-unknown-fields': true } },
      },
      '.spec: x-kubernetes-preserve-unknown-fields is only for free-form values',
    ],
    [
      'int-or-string that also sets a type',
      { type: 'object', properties: { a: { type: 'string', 'x-kubernetes-int-or-string': true } } },
      '.a: x-kubernetes-int-or-string must not also set type',
    ],
  ])('finds %s', (_name, schema, violation) => {
    expect(structuralViolations(schema)).toContain(violation);
  });
});
