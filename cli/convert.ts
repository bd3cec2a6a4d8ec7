import { readFile } from 'node:fs/promises';
import { stringify } from 'yaml';
import { asJson, json, UsageError, type Command } from './command';
import {
  formatProblem,
  invalidDocuments,
  placeOf,
  readArmadaText,
  type FileObject,
  type FileReport,
} from './validate';

/** What messages call standard input (`-f -`). */
const STDIN = 'stdin';

/** The text of FILE, or of standard input for `-`. */
async function inputText(
  file: string,
  stdin: NodeJS.ReadableStream,
): Promise<{ name: string; text: string }> {
  if (file !== '-') return { name: file, text: await readFile(file, 'utf8') };
  const chunks: Buffer[] = [];
  for await (const chunk of stdin) chunks.push(typeof chunk === 'string' ? Buffer.from(chunk) : chunk);
  return { name: STDIN, text: Buffer.concat(chunks).toString('utf8') };
}

/**
 * The object as convert prints it; with `adopt`, an ArmadaChart takes over the release of its
 * name that exists already (one the armada-operator or Armada installed), which armada-temporal
 * otherwise leaves alone (docs/explanation/security.md, "Release ownership").
 */
export function printedObject(o: FileObject, adopt: boolean): FileObject['object'] {
  if (!adopt || o.kind !== 'ArmadaChart') return o.object;
  return { ...o.object, spec: { ...(o.object.spec as object), adopt: true } };
}

/** convert's last line (on stderr): how many objects it printed, left out and skipped. */
export function convertSummary(report: FileReport): string {
  const notConverted = invalidDocuments(report.problems);
  return [
    `${report.objects.length} converted`,
    ...(notConverted ? [`${notConverted} not converted and not printed`] : []),
    ...(report.skipped ? [`${report.skipped} skipped (not armada's)`] : []),
  ].join(', ');
}

export const convertCommand: Command = {
  usage: `armadactl convert -f FILE|- [--adopt] [--output yaml|json]

Rewrites the documents of FILE (- reads standard input) into the custom resources kubectl apply
takes, and prints them. airship Armada's documents (schema armada/Manifest, armada/ChartGroup or
armada/Chart, v1 or v2, with metadata.name and their fields under data) and the
armada-operator's ArmadaCharts (armada.airshipit.org/v1, their fields under data) become
ArmadaManifest, ArmadaChartGroup and ArmadaChart objects of armada.airshipit.org/v1alpha1;
objects of v1alpha1 are printed as written; documents of other kinds are skipped. A List (what
kubectl get -o yaml prints) or an ArmadaChartList is read as its items, so

  kubectl get armadacharts.v1.armada.airshipit.org -A -o yaml | armadactl convert -f -

converts what an armada-operator cluster holds. An operator object keeps its name, namespace,
labels and annotations; what the API server and the operator set on it (uid, resourceVersion,
generation, creationTimestamp, managedFields, ownerReferences, finalizers, status, kubectl's
last-applied-configuration annotation) is dropped. Armada's documents keep no namespace
(kubectl apply -n decides). Each field airship defines is mapped onto ours, with Armada's
defaults, or refused (docs/airship-compatibility.md); validate and apply read such files
the same way. --adopt sets adopt: true on every ArmadaChart, to take over the releases the
operator or Armada installed (an ArmadaPolicy with allow_adoption must allow it).

Prints YAML, one document per object, each after a comment naming where it came from
(FILE:DOC, items[N] within a List, and its schema); --output json (-o json) prints one List.
A document with anything that cannot be carried over prints no object, so nothing is applied
half-meant; the others are printed. On stderr: each field not carried, as validate names it
(FILE:DOC document: path: reason), then a count ('2 converted, 1 not converted and not
printed'). Exit code 0 when every document was converted, 1 when any was not.
import is its former name, and does the same.`,
  options: {
    filename: {
      type: 'string',
      short: 'f',
      value: 'FILE|-',
      description: 'the file to convert; - reads standard input',
    },
    adopt: { type: 'boolean', description: 'set adopt: true on every ArmadaChart' },
    output: {
      type: 'string',
      short: 'o',
      value: 'yaml|json',
      description: 'yaml (the default): one document per object; json: one List',
    },
  },
  async run({ values, err, stdin }, out) {
    const file = values.filename as string | undefined;
    if (!file) throw new UsageError('name the file with -f (- for standard input)');
    const asked = asJson(values, 'yaml');
    const { name, text } = await inputText(file, stdin);
    const report = readArmadaText(name, text);
    if (!report.objects.length && !report.problems.length)
      throw new Error(`${name} has no armada or airship Armada document to convert`);
    const adopt = values.adopt === true;
    if (asked)
      out(
        json({ apiVersion: 'v1', kind: 'List', items: report.objects.map((o) => printedObject(o, adopt)) }),
      );
    else if (report.objects.length)
      out(
        report.objects
          .map(
            (o) =>
              `# ${placeOf({ file: name, ...o })} ${o.airship ?? `${o.kind}/${o.name}`}\n${stringify(printedObject(o, adopt))}`,
          )
          .join('---\n')
          .trimEnd(),
      );
    for (const problem of report.problems) err(formatProblem(problem));
    err(convertSummary(report));
    return report.problems.length ? 1 : 0;
  },
};
