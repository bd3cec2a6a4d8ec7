import { parseArgs } from 'node:util';
import { GROUP } from '../api/common';
import { formatProblem, validateFiles } from './validate';

const USAGE = `armadactl: durable, sequenced Helm deploys on Kubernetes

Usage:
  armadactl validate -f FILE|DIR [-f ...]   check armada documents before applying them

Run 'armadactl COMMAND --help' for a command's options.`;

const VALIDATE_USAGE = `Usage: armadactl validate -f FILE|DIR [-f FILE|DIR ...]

Checks every ArmadaManifest, ArmadaChartGroup, ArmadaChart and Deployer document (multi-document
YAML files too; directories are searched recursively) against the same schemas and rules the
cluster and the bridge apply. Prints each problem as 'file:doc kind/name: path: reason'.
Exit code 0 only when every document is valid.`;

/** Runs one armadactl command line; returns the exit code. */
export async function main(argv: string[], out = console.log, err = console.error): Promise<number> {
  const [command, ...rest] = argv;
  if (command === 'validate') return validate(rest, out, err);
  if (command === undefined || command === '--help' || command === '-h' || command === 'help') {
    out(USAGE);
    return command === undefined ? 2 : 0;
  }
  err(`armadactl: unknown command "${command}"\n\n${USAGE}`);
  return 2;
}

async function validate(args: string[], out: typeof console.log, err: typeof console.error): Promise<number> {
  let values;
  try {
    ({ values } = parseArgs({
      args,
      options: {
        filename: { type: 'string', short: 'f', multiple: true },
        help: { type: 'boolean', short: 'h' },
      },
    }));
  } catch (e) {
    err(`armadactl validate: ${(e as Error).message}\n\n${VALIDATE_USAGE}`);
    return 2;
  }
  if (values.help) {
    out(VALIDATE_USAGE);
    return 0;
  }
  if (!values.filename?.length) {
    err(`armadactl validate: name at least one file or directory with -f\n\n${VALIDATE_USAGE}`);
    return 2;
  }
  let report;
  try {
    report = await validateFiles(values.filename);
  } catch (e) {
    err(`armadactl validate: ${(e as Error).message}`);
    return 2;
  }
  for (const problem of report.problems) out(formatProblem(problem));
  const invalid = new Set(report.problems.map((p) => `${p.file}:${p.doc}`)).size;
  const skipped = report.skipped ? `, ${report.skipped} skipped (not ${GROUP})` : '';
  out(`${report.valid} valid, ${invalid} invalid${skipped}`);
  return invalid ? 1 : 0;
}

if (require.main === module) {
  void main(process.argv.slice(2)).then((code) => process.exit(code));
}
