import { parseArgs, type ParseArgsConfig } from 'node:util';
import { GROUP } from '../api/common';
import { PlanError } from '../workflows/plan/manifest';
import { connect, temporalTarget } from './connect';
import { manifestDocuments } from './documents';
import {
  control,
  follow,
  formatProgress,
  manifestWorkflowId,
  progressOf,
  startManifest,
  type ControlCommand,
} from './runs';
import { formatProblem, validateFiles } from './validate';

type Print = (line: string) => void;

/** A usage error: armadactl prints the command's help and exits 2. */
class UsageError extends Error {}

interface Command {
  usage: string;
  options: NonNullable<ParseArgsConfig['options']>;
  run(args: { values: Record<string, unknown>; positionals: string[] }, out: Print): Promise<number>;
}

const namespaceOption = { namespace: { type: 'string', short: 'n', default: 'default' } } as const;

const commands: Record<string, Command> = {
  validate: {
    usage: `armadactl validate -f FILE|DIR [-f FILE|DIR ...]

Checks every ArmadaManifest, ArmadaChartGroup, ArmadaChart and Deployer document (multi-document
YAML files too; directories are searched recursively) against the same schemas and rules the
cluster and the bridge apply. Prints each problem as 'file:doc kind/name: path: reason'.
Exit code 0 only when every document is valid.`,
    options: { filename: { type: 'string', short: 'f', multiple: true } },
    async run({ values }, out) {
      const files = values.filename as string[] | undefined;
      if (!files?.length) throw new UsageError('name at least one file or directory with -f');
      const report = await validateFiles(files);
      for (const problem of report.problems) out(formatProblem(problem));
      const invalid = new Set(report.problems.map((p) => `${p.file}:${p.doc}`)).size;
      const skipped = report.skipped ? `, ${report.skipped} skipped (not ${GROUP})` : '';
      out(`${report.valid} valid, ${invalid} invalid${skipped}`);
      return invalid ? 1 : 0;
    },
  },
  apply: {
    usage: `armadactl apply -f FILE [--wait] [--on-failure stop|rollback] [-n NAMESPACE] [--manifest NAME]

Validates a multi-document file (an ArmadaManifest with its groups and charts), then starts the
manifest's run on the worker. With --wait, shows its progress until it ends: exit 0 when every
chart is deployed, 1 when the run failed or was rolled back.`,
    options: {
      filename: { type: 'string', short: 'f' },
      wait: { type: 'boolean', short: 'w' },
      'on-failure': { type: 'string' },
      manifest: { type: 'string' },
      ...namespaceOption,
    },
    async run({ values }, out) {
      const file = values.filename as string | undefined;
      if (!file) throw new UsageError('name the manifest file with -f');
      const onFailure = values['on-failure'] as string | undefined;
      if (onFailure !== undefined && onFailure !== 'stop' && onFailure !== 'rollback') {
        throw new UsageError(`--on-failure must be stop or rollback, not "${onFailure}"`);
      }
      const report = await validateFiles([file]);
      if (report.problems.length) {
        for (const problem of report.problems) out(formatProblem(problem));
        out(`not applied: ${new Set(report.problems.map((p) => p.doc)).size} invalid document(s)`);
        return 1;
      }
      const docs = await manifestDocuments(
        file,
        values.namespace as string,
        values.manifest as string | undefined,
      );
      if (onFailure) docs.manifest.spec.on_failure = onFailure;
      const target = docs.manifest.spec.target_state;
      if (target === 'uninitialized') {
        out(`${docs.manifest.name}: target_state is uninitialized; nothing to do`);
        return 0;
      }
      const { client, close } = await connect();
      try {
        const mode = target === 'uninstalled' ? 'uninstall' : 'deploy';
        const workflowId = await startManifest(client, docs, temporalTarget().taskQueue, mode);
        out(`started ${workflowId}`);
        if (!values.wait) return 0;
        try {
          const outcome = await follow(client, workflowId, out);
          out(`${outcome.manifest}: ${outcome.state}`);
          return outcome.state === (mode === 'uninstall' ? 'uninstalled' : 'deployed') ? 0 : 1;
        } catch (err) {
          out(`${docs.manifest.name}: failed: ${causeOf(err)}`);
          return 1;
        }
      } finally {
        await close();
      }
    },
  },
  status: {
    usage: `armadactl status NAME [-n NAMESPACE] [--output json]

Shows the run of ArmadaManifest NAME: its phase and, per group and chart, state and revision.`,
    options: { output: { type: 'string', short: 'o' }, ...namespaceOption },
    async run({ values, positionals }, out) {
      const name = onlyName(positionals);
      const { client, close } = await connect();
      try {
        const progress = await progressOf(client, manifestWorkflowId(values.namespace as string, name));
        if (values.output === 'json') out(JSON.stringify(progress, null, 2));
        else formatProgress(progress).forEach((line) => out(line));
        return 0;
      } finally {
        await close();
      }
    },
  },
};

const controlUsage: Record<ControlCommand, string> = {
  pause: 'holds the run before its next chart or group starts; Helm calls already running finish',
  resume: 'lets a paused run go on',
  approve: 'passes the approval gate the run waits at',
  rollback: 'starts no more charts, lets running ones finish, then undoes every change of the run',
};
for (const command of Object.keys(controlUsage) as ControlCommand[]) {
  commands[command] = {
    usage: `armadactl ${command} NAME [-n NAMESPACE] [--reason TEXT]\n\n${command[0].toUpperCase()}${command.slice(1)}: ${controlUsage[command]}.`,
    options: { reason: { type: 'string' }, ...namespaceOption },
    async run({ values, positionals }, out) {
      const name = onlyName(positionals);
      const { client, close } = await connect();
      try {
        const workflowId = manifestWorkflowId(values.namespace as string, name);
        await control(client, workflowId, command, {
          by: process.env.USER,
          reason: values.reason as string | undefined,
        });
        out(`${command}: sent to ${workflowId}`);
        return 0;
      } finally {
        await close();
      }
    },
  };
}

const USAGE = `armadactl: durable, sequenced Helm deploys on Kubernetes

Commands:
${Object.values(commands)
  .map((c) => `  ${c.usage.split('\n')[0]}`)
  .join('\n')}

Temporal is reached through TEMPORAL_ADDRESS (default localhost:7233) and TEMPORAL_NAMESPACE.
Run 'armadactl COMMAND --help' for a command's details.`;

function onlyName(positionals: string[]): string {
  if (positionals.length !== 1) throw new UsageError('name one ArmadaManifest');
  return positionals[0];
}

function causeOf(err: unknown): string {
  let e = err as Error & { cause?: unknown };
  while (e.cause instanceof Error) e = e.cause as Error & { cause?: unknown };
  return e.message;
}

/** Runs one armadactl command line; returns the exit code. */
export async function main(
  argv: string[],
  out: Print = console.log,
  err: Print = console.error,
): Promise<number> {
  const [name, ...rest] = argv;
  if (name === undefined || name === '--help' || name === '-h' || name === 'help') {
    out(USAGE);
    return name === undefined ? 2 : 0;
  }
  const command = commands[name];
  if (!command) {
    err(`armadactl: unknown command "${name}"\n\n${USAGE}`);
    return 2;
  }
  try {
    const { values, positionals } = parseArgs({
      args: rest,
      options: { ...command.options, help: { type: 'boolean', short: 'h' } },
      allowPositionals: true,
    });
    if (values.help) {
      out(command.usage);
      return 0;
    }
    return await command.run({ values, positionals }, out);
  } catch (e) {
    if (e instanceof UsageError || (e as { code?: string }).code?.startsWith('ERR_PARSE_ARGS')) {
      err(`armadactl ${name}: ${(e as Error).message}\n\nUsage: ${command.usage}`);
      return 2;
    }
    if (e instanceof PlanError) {
      e.problems.forEach((p) => err(`armadactl ${name}: ${p}`));
      return 1;
    }
    err(`armadactl ${name}: ${(e as Error).message}`);
    return name === 'validate' ? 2 : 1;
  }
}

if (require.main === module) {
  void main(process.argv.slice(2)).then((code) => process.exit(code));
}
