import { readdirSync, readFileSync } from 'node:fs';
import path from 'node:path';
import { parseAllDocuments } from 'yaml';
import type { KindName } from '../../api/kinds';
import { validateObject } from '../../api/validate';
import { dryRunCreate, installCrds, kubectl } from '../helpers/kube';

const examplesDir = path.resolve(__dirname, '../../examples');
const corpusDir = path.resolve(__dirname, '../fixtures/invalid');

type Doc = { kind: KindName; metadata: { name: string } };

const examples = readdirSync(examplesDir)
  .filter((f) => f.endsWith('.yaml'))
  .flatMap((file) =>
    parseAllDocuments(readFileSync(path.join(examplesDir, file), 'utf8')).map(
      (d) => [file, d.toJS() as Doc] as const,
    ),
  );

/** A corpus case: one document, and its first line `# expect: apiserver|validator <field path>`. */
const corpus = readdirSync(corpusDir)
  .filter((f) => f.endsWith('.yaml'))
  .map((file) => {
    const text = readFileSync(path.join(corpusDir, file), 'utf8');
    const expect = /^# expect: (apiserver|validator) (\S+)/m.exec(text);
    if (!expect) throw new Error(`${file}: first line must be "# expect: apiserver|validator <field>"`);
    return { file, where: expect[1], field: expect[2], doc: parseAllDocuments(text)[0].toJS() as Doc };
  });

/** True when a problem path is the field or lies under it. */
const under = (field: string) => (p: { path: string }) =>
  p.path === field || p.path.startsWith(`${field}.`) || p.path.startsWith(`${field}[`);

/** Dry runs go to a namespace of their own, apart from objects other tests create for real. */
const DRY_RUN_NAMESPACE = 'api-dry-run';

beforeAll(async () => {
  expect(await installCrds()).toMatch(/armadacharts\.armada\.airshipit\.org serverside-applied/);
  await kubectl('create', 'namespace', DRY_RUN_NAMESPACE);
});

describe('the CRDs on a real API server', () => {
  it('kubectl explain shows the field descriptions from the zod schemas', async () => {
    const out = await kubectl('explain', 'act.spec.canary.steps');
    expect(out).toContain('Percent steps, strictly increasing');
    expect(out).toMatch(/percent\s+<integer> -required-\s+Share of replicas on the new version/);
  });

  it('kubectl get act shows NAME, STATE, TARGET STATE, SATISFIED, PROGRESS, AGE', async () => {
    await kubectl('create', 'namespace', 'api-columns');
    await kubectl('apply', '-n', 'api-columns', '-f', path.join(examplesDir, 'sequenced-manifest.yaml'));
    const header = (await kubectl('get', 'act', '-n', 'api-columns')).split('\n')[0];
    expect(header.split(/\s{2,}/)).toEqual(['NAME', 'STATE', 'TARGET STATE', 'SATISFIED', 'PROGRESS', 'AGE']);
    const rows = await kubectl('get', 'act', '-n', 'api-columns', '-o', 'name');
    expect(rows.trim().split('\n').sort()).toEqual(
      ['admin', 'backend', 'settings', 'web'].map((n) => `armadachart.armada.airshipit.org/${n}`),
    );
  });
});

describe('examples', () => {
  it.each(examples.map(([file, doc]) => [`${file} ${doc.kind}/${doc.metadata.name}`, doc]))(
    '%s is accepted by the API server and by the validator',
    async (_name, doc) => {
      expect(await dryRunCreate(doc, DRY_RUN_NAMESPACE)).toBeNull();
      expect(validateObject(doc).problems).toEqual([]);
    },
  );
});

describe('the invalid corpus', () => {
  it('has at least 40 cases', () => {
    expect(corpus.length).toBeGreaterThanOrEqual(40);
  });

  it.each(corpus.map((c) => [`${c.file} (${c.where}: ${c.field})`, c]))(
    '%s is rejected there, naming the field',
    async (_name, c) => {
      const serverMessage = await dryRunCreate(c.doc, DRY_RUN_NAMESPACE);
      const problems = validateObject(c.doc).problems;
      if (c.where === 'apiserver') {
        expect(serverMessage).toContain(c.field);
      } else {
        expect(serverMessage).toBeNull();
      }
      // The validator catches everything, including what the API server already refuses.
      expect(problems.filter(under(c.field))).not.toEqual([]);
    },
  );
});
