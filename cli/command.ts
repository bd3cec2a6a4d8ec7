import type { ParseArgsConfig } from 'node:util';
import type { Terminal } from './watch';

/** Where a command prints its lines. */
export type Print = (line: string) => void;

/** A usage error: armadactl prints the command's help and exits 2. */
export class UsageError extends Error {}

/** One verb of armadactl: its help, its options (node:util parseArgs) and what it does. */
export interface Command {
  usage: string;
  options: NonNullable<ParseArgsConfig['options']>;
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

export const namespaceOption = { namespace: { type: 'string', short: 'n', default: 'default' } } as const;
export const outputOption = { output: { type: 'string', short: 'o' } } as const;

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
