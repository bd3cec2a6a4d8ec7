import { readdir, readFile, stat } from 'node:fs/promises';
import path from 'node:path';
import { parseAllDocuments } from 'yaml';
import { GROUP } from '../api/common';
import { validateObject } from '../api/validate';

/** One problem, located the way `armadactl validate` prints it: `file:doc kind/name: path: reason`. */
export interface LocatedProblem {
  file: string;
  doc: number;
  object: string;
  path: string;
  message: string;
}

export interface ValidationReport {
  valid: number;
  skipped: number;
  problems: LocatedProblem[];
}

export function formatProblem(p: LocatedProblem): string {
  return `${p.file}:${p.doc} ${p.object}: ${p.path ? `${p.path}: ` : ''}${p.message}`;
}

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

/**
 * Validates every document of every file against the armada schemas and rules. Documents of
 * other API groups (a Namespace beside the charts, say) are skipped and counted.
 */
export async function validateFiles(targets: string[]): Promise<ValidationReport> {
  const report: ValidationReport = { valid: 0, skipped: 0, problems: [] };
  for (const file of (await Promise.all(targets.map(yamlFiles))).flat()) {
    const docs = parseAllDocuments(await readFile(file, 'utf8'));
    docs.forEach((doc, i) => {
      const at = { file, doc: i + 1 };
      if (doc.errors.length) {
        report.problems.push({
          ...at,
          object: '?',
          path: '',
          message: `not valid YAML: ${doc.errors[0].message}`,
        });
        return;
      }
      const obj = doc.toJS() as unknown;
      if (obj === null) return; // an empty document, e.g. after a trailing ---
      const apiVersion = (obj as { apiVersion?: unknown }).apiVersion;
      if (typeof apiVersion === 'string' && !apiVersion.startsWith(`${GROUP}/`)) {
        report.skipped++;
        return;
      }
      const result = validateObject(obj);
      const object = `${result.kind ?? '?'}/${result.name ?? '?'}`;
      if (result.problems.length === 0) report.valid++;
      for (const problem of result.problems) report.problems.push({ ...at, object, ...problem });
    });
  }
  return report;
}
