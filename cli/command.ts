import type { Terminal } from './watch';

/** Where a command prints its lines. */
export type Print = (line: string) => void;

/** A usage error: armadactl prints the command's help and exits 2. */
export class UsageError extends Error {}

/**
 * One option of a command: what node:util parseArgs reads, and what `--help` and
 * docs/reference/armadactl.md say of it.
 */
export interface CommandOption {
  type: 'string' | 'boolean';
  short?: string;
  multiple?: boolean;
  default?: string;
  /** The value's name in the help (`--filename FILE`); a string option's only. */
  value?: string;
  description: string;
}

/**
 * One verb of armadactl: its help (the synopsis line, then what it does), its positional
 * arguments and options, and what it does.
 */
export interface Command {
  usage: string;
  /** Each positional argument's name in the synopsis and what it is. */
  arguments?: Record<string, string>;
  options: Record<string, CommandOption>;
  /** The exit code of an error (default 1): 2 for the commands whose 1 means "found something". */
  failureExit?: number;
  run(
    args: {
      values: Record<string, unknown>;
      positionals: string[];
      terminal?: Terminal;
      err: Print;
      /** What `-f -` reads. */
      stdin: NodeJS.ReadableStream;
    },
    out: Print,
  ): Promise<number>;
}

export const namespaceOption: Record<string, CommandOption> = {
  namespace: {
    type: 'string',
    short: 'n',
    default: 'default',
    value: 'NAMESPACE',
    description: "namespace of the object (or of the file's objects that name none)",
  },
};

/** `--output json`: for programs, where the default is text for people. */
export const outputOption: Record<string, CommandOption> = {
  output: {
    type: 'string',
    short: 'o',
    value: 'json',
    description: 'json: print one JSON document (its shape is given above); default: text for people',
  },
};

/** TARGET, as the commands that act on one object name it. */
export const TARGET_ARGUMENT = {
  TARGET:
    'an ArmadaManifest NAME (or amf/NAME), acg/NAME (ArmadaChartGroup), act/NAME (ArmadaChart) or dpl/NAME (Deployer)',
};

/** The options every command takes besides its own. */
export const HELP_OPTION: Record<string, CommandOption> = {
  help: { type: 'boolean', short: 'h', description: 'print this help' },
};

/** How an option is written in the help: `-n, --namespace NAMESPACE`. */
export function optionSyntax(name: string, option: CommandOption): string {
  const value = option.type === 'string' ? ` ${option.value ?? 'VALUE'}` : '';
  return `${option.short ? `-${option.short}, ` : ''}--${name}${value}`;
}

/** What `armadactl COMMAND --help` prints: the usage, then each argument and option. */
export function helpOf(command: Command): string {
  const options = { ...command.options, ...HELP_OPTION };
  const rows = Object.entries(options).map(([name, option]) => [
    optionSyntax(name, option),
    `${option.description}${option.multiple ? '; may be repeated' : ''}${option.default === undefined ? '' : ` (default ${option.default})`}`,
  ]);
  const args = Object.entries(command.arguments ?? {});
  const width = Math.max(...[...rows, ...args].map(([left]) => left.length));
  const line = ([left, right]: string[]) => `  ${left.padEnd(width)}  ${right}`;
  return [
    command.usage,
    ...(args.length ? ['', 'Arguments:', ...args.map(line)] : []),
    '',
    'Options:',
    ...rows.map(line),
  ].join('\n');
}

/** Whether `--output` asks for JSON (`json`) or the other format (`text` for people, the default). */
export function asJson(values: Record<string, unknown>, other = 'text'): boolean {
  const output = values.output as string | undefined;
  if (output === undefined || output === other) return false;
  if (output === 'json') return true;
  throw new UsageError(`--output must be json or ${other}, not "${output}"`);
}

/** The text of a value printed by `--output json`: indented, keys in a fixed order. */
export const json = (value: unknown) => JSON.stringify(value, null, 2);

/** The one TARGET of a command line. */
export function onlyTarget(positionals: string[]): string {
  if (positionals.length !== 1)
    throw new UsageError('name one run: an ArmadaManifest NAME, acg/NAME, dpl/NAME or act/NAME');
  return positionals[0];
}
