import { readdir, readFile, stat } from 'node:fs/promises';
import path from 'node:path';
import { parseAllDocuments } from 'yaml';
import { GROUP } from '../api/common';
import { convertAirshipDocuments, isAirshipDocument, type ConvertedDocument } from '../api/from-airship';
import { validateObject, type Validation } from '../api/validate';
import type { ArmadaChartSpec } from '../api/chart';
import type { ArmadaChartGroupSpec } from '../api/chart-group';
import type { ArmadaManifestSpec } from '../api/manifest';
import type { DeployerSpec } from '../api/deployer';
import { lockstepProblems } from '../core/plan/lockstep';

/** One problem, located the way `armadactl validate` prints it: `file:doc kind/name: path: reason`. */
export interface LocatedProblem {
  file: string;
  doc: number;
  /** Its object's place in the document's `items` when the document is a List. */
  item?: number;
  object: string;
  path: string;
  message: string;
}

export interface ValidationReport {
  valid: number;
  skipped: number;
  problems: LocatedProblem[];
}

/** Where an object stands in a file: `site.yaml:3`, or `stdin:1 items[2]` for an item of a List. */
export function placeOf({ file, doc, item }: { file: string; doc: number; item?: number }): string {
  return `${file}:${doc}${item === undefined ? '' : ` items[${item}]`}`;
}

export function formatProblem(p: LocatedProblem): string {
  return `${placeOf(p)} ${p.object}: ${p.path ? `${p.path}: ` : ''}${p.message}`;
}

/** How many objects (documents, or items of a List) `problems` are about. */
export const invalidDocuments = (problems: LocatedProblem[]) => new Set(problems.map((p) => placeOf(p))).size;

/**
 * The YAML files named: files as given; directories searched recursively in name order,
 * skipping Helm charts (folders with a Chart.yaml), whose templates are not armada documents.
 */
async function yamlFiles(target: string): Promise<string[]> {
  if (!(await stat(target)).isDirectory()) return [target];
  const entries = (await readdir(target, { withFileTypes: true })).sort((a, b) =>
    a.name.localeCompare(b.name),
  );
  if (entries.some((e) => e.isFile() && e.name === 'Chart.yaml')) return [];
  const files: string[] = [];
  for (const entry of entries) {
    const full = path.join(target, entry.name);
    if (entry.isDirectory()) files.push(...(await yamlFiles(full)));
    else if (entry.isFile() && /\.ya?ml$/.test(entry.name)) files.push(full);
  }
  return files;
}

/** An armada object of a file, valid: as written, or converted from airship's format. */
export interface FileObject {
  doc: number;
  /** Its place in the document's `items` when the document is a List. */
  item?: number;
  /** The custom resource as `kubectl apply` takes it (a converted one as armadactl convert prints it). */
  object: { apiVersion: string; kind: string; metadata: { name: string; namespace?: string }; spec: unknown };
  kind: NonNullable<Validation['kind']>;
  name: string;
  /** The spec as its schema parses it, defaults filled in. */
  spec: unknown;
  /** How the file names it when written in airship's format, e.g. `armada/Chart/v2 web`. */
  airship?: string;
}

/** A file's valid armada objects in file order, the problems of the others, and what is not armada's. */
export interface FileReport {
  objects: FileObject[];
  problems: LocatedProblem[];
  /** Documents of other API groups (a Namespace beside the charts, say). */
  skipped: number;
}

/** One object of a file: a document, or an item of a document that is a List. */
interface Entry {
  doc: number;
  item?: number;
  value: unknown;
}

/**
 * The items of a list as `kubectl get -o yaml` prints it (`kind: List`) or the API server lists
 * a kind (`ArmadaChartList`, of an armada.airshipit.org version): what an export of a cluster is.
 */
export function listItems(value: unknown): unknown[] | undefined {
  const { apiVersion, kind, items } = value as Record<string, unknown>;
  const ourList =
    typeof apiVersion === 'string' &&
    apiVersion.startsWith(`${GROUP}/`) &&
    typeof kind === 'string' &&
    kind.endsWith('List');
  return (kind === 'List' || ourList) && Array.isArray(items) ? (items as unknown[]) : undefined;
}

/**
 * Reads one file as armada reads every file (see readArmadaText). `armadactl validate`, `apply`
 * and `convert` all read files through it.
 */
export async function readArmadaFile(file: string): Promise<FileReport> {
  return readArmadaText(file, await readFile(file, 'utf8'));
}

/**
 * Reads the text of one file, named `file` in what it reports: each object (a document, or each
 * item of a List) checked against the armada schemas and rules, airship Armada's documents
 * converted first (api/from-airship.ts) and their problems named at their own fields.
 */
export function readArmadaText(file: string, text: string): FileReport {
  const report: FileReport = { objects: [], problems: [], skipped: 0 };
  const entries: Entry[] = [];
  parseAllDocuments(text).forEach((parsed, i) => {
    const doc = i + 1;
    if (parsed.errors.length) {
      report.problems.push({
        file,
        doc,
        object: '?',
        path: '',
        message: `not valid YAML: ${parsed.errors[0].message}`,
      });
      return;
    }
    const value = parsed.toJS() as unknown;
    if (value === null) return; // an empty document, e.g. after a trailing ---
    const items = listItems(value);
    if (items) entries.push(...items.map((item, index) => ({ doc, item: index, value: item })));
    else entries.push({ doc, value });
  });
  const airship = entries.filter((e) => isAirshipDocument(e.value));
  // In the order given: the n-th conversion is the n-th airship entry's.
  const conversions = new Map(
    convertAirshipDocuments(airship).map((converted, i) => [airship[i], converted] as const),
  );
  for (const entry of entries) {
    const converted = conversions.get(entry);
    const apiVersion = (entry.value as { apiVersion?: unknown } | null)?.apiVersion;
    if (!converted && typeof apiVersion === 'string' && !apiVersion.startsWith(`${GROUP}/`)) {
      report.skipped++;
      continue;
    }
    checkEntry(file, entry, converted, report);
  }
  return report;
}

/** Checks one object (as written, or as converted) and adds it or its problems to `report`. */
function checkEntry(
  file: string,
  entry: Entry,
  converted: ConvertedDocument | undefined,
  report: FileReport,
) {
  const { doc, item } = entry;
  const object = converted ? converted.object : entry.value;
  const result = object === undefined ? undefined : validateObject(object);
  const label = converted?.label ?? `${result?.kind ?? '?'}/${result?.name ?? '?'}`;
  const problems = [
    ...(converted?.problems ?? []),
    ...(result?.problems ?? []).map((p) => (converted ? { ...p, path: converted.sourcePath(p.path) } : p)),
  ];
  // A converted field can feed several of ours (wait.labels goes into every wait entry): say it once.
  const said = new Set<string>();
  for (const problem of problems) {
    const key = `${problem.path}\n${problem.message}`;
    if (!said.has(key))
      report.problems.push({ file, doc, ...(item !== undefined && { item }), object: label, ...problem });
    said.add(key);
  }
  if (problems.length || !result?.kind || !result.name) return;
  report.objects.push({
    doc,
    ...(item !== undefined && { item }),
    object: object as FileObject['object'],
    kind: result.kind,
    name: result.name,
    spec: result.spec,
    ...(converted && { airship: converted.label }),
  });
}

/**
 * Reads every file named (directories searched recursively) and adds up what they hold; then
 * checks the lockstep sets whose charts the files hold.
 */
export async function validateFiles(targets: string[]): Promise<ValidationReport> {
  const report: ValidationReport = { valid: 0, skipped: 0, problems: [] };
  const found: FoundObject[] = [];
  for (const file of (await Promise.all(targets.map(yamlFiles))).flat()) {
    const { objects, problems, skipped } = await readArmadaFile(file);
    report.valid += objects.length;
    report.skipped += skipped;
    report.problems.push(...problems);
    found.push(...objects.map((object) => ({ file, object })));
  }
  report.problems.push(...lockstepSetProblems(found));
  return report;
}

interface FoundObject {
  file: string;
  object: FileObject;
}

/**
 * A group with canary_lockstep (its own, or that of a manifest listing it in the same namespace)
 * whose canary charts and Deployers in the files cannot step together (see lockstepProblems).
 * Charts and Deployers the files do not hold are left to the bridge, which plans against the cluster.
 */
function lockstepSetProblems(found: FoundObject[]): LocatedProblem[] {
  const key = (o: FileObject, name = o.name) => `${o.object.metadata.namespace ?? ''}/${name}`;
  const ofKind = (kind: string) =>
    new Map(found.filter((f) => f.object.kind === kind).map((f) => [key(f.object), f.object]));
  const [charts, deployers] = [ofKind('ArmadaChart'), ofKind('Deployer')];
  const byManifest = new Set(
    found.flatMap(({ object }) => {
      const spec = object.spec as ArmadaManifestSpec;
      return object.kind === 'ArmadaManifest' && spec.canary_lockstep
        ? spec.chart_groups.map((g) => key(object, g))
        : [];
    }),
  );
  return found.flatMap(({ file, object }) => {
    const spec = object.spec as ArmadaChartGroupSpec;
    if (object.kind !== 'ArmadaChartGroup' || !(spec.canary_lockstep || byManifest.has(key(object))))
      return [];
    const members = spec.chart_group.flatMap((chart) => {
      const listed = charts.get(key(object, chart));
      return listed ? [{ chart, spec: listed.spec as ArmadaChartSpec }] : [];
    });
    const deployerMembers = (spec.deployers ?? []).flatMap((name) => {
      const listed = deployers.get(key(object, name));
      return listed ? [{ name, spec: listed.spec as DeployerSpec }] : [];
    });
    const problems = lockstepProblems(
      `ArmadaChartGroup ${object.name}`,
      spec.sequenced,
      members,
      deployerMembers,
    );
    return problems.map((message) => ({
      file,
      doc: object.doc,
      object: `${object.kind}/${object.name}`,
      path: '',
      message,
    }));
  });
}
