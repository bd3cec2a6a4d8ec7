import { readdirSync, readFileSync } from 'node:fs';
import { mkdtemp, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import path from 'node:path';
import { parseAllDocuments } from 'yaml';
import { type KindName, kinds } from '../../api/kinds';
import { validateObject } from '../../api/validate';
import type { ArmadaChartSpec } from '../../api/chart';
import type { ArmadaChartGroupSpec } from '../../api/chart-group';
import type { ArmadaManifestSpec } from '../../api/manifest';
import {
  planGroup,
  planManifest,
  PlanError,
  rivalClaims,
  type ClaimDocument,
} from '../../core/plan/manifest';
import { uniqueName } from '../helpers/env';
import { crossObjectCases, goodManifest, hostileDocuments, type Doc } from '../fixtures/hostile';
import { createObject, dryRunCreate, installCrds, kubectl } from '../helpers/kube';
import { eventually } from '../helpers/processes';

const examplesDir = path.resolve(__dirname, '../../examples');
const corpusDir = path.resolve(__dirname, '../fixtures/invalid');

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
    // The API server publishes a new CRD's OpenAPI a moment after discovery lists it.
    const out = await eventually('the CRD schema in OpenAPI', async () => {
      const text = await kubectl('explain', 'act.spec.canary.steps');
      return text.includes('Percent steps, strictly increasing') ? text : undefined;
    });
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

/**
 * What stops `target` of a set of documents, as the bridge judges it: planManifest or planGroup
 * (names that do not resolve, a chart in two groups, a release twice in one plan), then
 * rivalClaims against every document (created in the order given).
 */
function planProblems(docs: Doc[], target: { kind: KindName; name: string }, namespace: string): string[] {
  const specs = <T>(kind: KindName) =>
    Object.fromEntries(
      docs.filter((d) => d.kind === kind).map((d) => [d.metadata.name, kinds[kind].spec.parse(d.spec) as T]),
    );
  const charts = specs<ArmadaChartSpec>('ArmadaChart');
  const own = docs.find((d) => d.kind === target.kind && d.metadata.name === target.name)!;
  const problems: string[] = [];
  try {
    if (target.kind === 'ArmadaManifest') {
      const spec = kinds.ArmadaManifest.spec.parse(own.spec) as ArmadaManifestSpec;
      const groups = specs<ArmadaChartGroupSpec>('ArmadaChartGroup');
      planManifest({ namespace, manifest: { name: target.name, spec }, groups, charts });
    } else if (target.kind === 'ArmadaChartGroup') {
      const spec = kinds.ArmadaChartGroup.spec.parse(own.spec) as ArmadaChartGroupSpec;
      planGroup({ namespace, name: target.name, spec, charts });
    }
  } catch (err) {
    if (!(err instanceof PlanError)) throw err;
    problems.push(...err.problems);
  }
  const claims: ClaimDocument[] = docs.map((d, i) => ({
    kind: d.kind as ClaimDocument['kind'],
    namespace,
    name: d.metadata.name,
    createdAt: i,
    spec: d.spec,
  }));
  return [...problems, ...rivalClaims({ ...target, namespace }, claims)];
}

describe('the hostile-input corpus (issue 8, drill 6)', () => {
  const RELEASES = 'hostile-apps';
  const documents = hostileDocuments(RELEASES);
  const sets = crossObjectCases(RELEASES, DRY_RUN_NAMESPACE);
  const STORAGE_NAMESPACE = uniqueName('api-hostile');

  beforeAll(async () => {
    await kubectl('create', 'namespace', STORAGE_NAMESPACE);
  });
  afterAll(async () => {
    await kubectl('delete', 'namespace', STORAGE_NAMESPACE, '--wait=false');
  });

  it('has at least 60 cases', () => {
    expect(documents.length + sets.length).toBeGreaterThanOrEqual(60);
  });

  it.each(documents.map((c) => [`${c.name} (${c.where}: ${c.field})`, c]))(
    '%s is refused there, naming the problem',
    async (_name, c) => {
      const dryRun = await dryRunCreate(c.doc, DRY_RUN_NAMESPACE);
      if (c.where === 'apiserver') {
        expect(dryRun).toContain(c.refusal ?? c.field);
      } else {
        expect(dryRun).toBeNull();
      }
      if (c.where === 'storage') {
        // A dry run stops short of etcd; only a real create meets its limits.
        expect(await createObject(c.doc, STORAGE_NAMESPACE)).toContain(c.refusal);
      }
      expect(validateObject(c.doc).problems.filter(under(c.field))).not.toEqual([]);
    },
  );

  it.each(sets.map((c) => [c.name, c]))(
    '%s: each document alone is valid, and the planner refuses the set naming the other object',
    async (_name, c) => {
      for (const d of c.docs) {
        expect(await dryRunCreate(d, DRY_RUN_NAMESPACE)).toBeNull();
        expect(validateObject(d).problems).toEqual([]);
      }
      const all = [...goodManifest(RELEASES), ...c.docs];
      expect(planProblems(all, c.target, DRY_RUN_NAMESPACE)).toContain(c.problem);
      // The good manifest is never the one refused.
      expect(planProblems(all, { kind: 'ArmadaManifest', name: 'good' }, DRY_RUN_NAMESPACE)).toEqual([]);
    },
  );

  it('kubectl apply (client-side) cannot even send an object over 256 KiB: its annotation is too long', async () => {
    const big = documents.find((c) => c.name === 'values of 1.2 MiB in one string')!;
    const file = path.join(await mkdtemp(path.join(tmpdir(), 'hostile-')), 'big.json');
    await writeFile(file, JSON.stringify(big.doc));
    await expect(kubectl('apply', '-n', DRY_RUN_NAMESPACE, '--dry-run=server', '-f', file)).rejects.toThrow(
      /metadata\.annotations: Too long: may not be more than 262144 bytes/,
    );
  });
});
