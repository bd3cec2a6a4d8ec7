import { z } from 'zod';

/**
 * How the worker and the bridge write their log lines: one JSON object a line for collectors, or
 * one readable line per entry for a person at a terminal (`npm start`).
 */

export const LOG_FORMATS = ['json', 'text'] as const;
export type LogFormat = (typeof LOG_FORMATS)[number];

export const logFormatVariable = {
  ARMADA_LOG_FORMAT: z
    .preprocess(
      (value) => (value === '' ? undefined : value),
      z
        .enum(LOG_FORMATS, {
          error: (issue) => `must be one of ${LOG_FORMATS.join(', ')}, not "${String(issue.input)}"`,
        })
        .optional(),
    )
    .describe(
      'json: one JSON object a line; text: one readable line (time level component message key=value); unset: text on a terminal, json otherwise',
    ),
};

/** One log entry, before it is written. */
export interface LogRecord {
  time: Date;
  /** Lower case: debug, info, warn, error. */
  level: string;
  component: string;
  message: string;
  fields: Record<string, unknown>;
}

/** `{"time","level","component","message", …fields}`, as collectors read it. */
export function jsonLine({ time, level, component, message, fields }: LogRecord): string {
  return JSON.stringify({ time: time.toISOString(), level, component, message, ...fields });
}

/** A value needing no quotes: no space, quote, `=` or backslash. */
const BARE = /^[^\s"=\\]+$/;

function textValue(value: unknown): string {
  if (typeof value === 'string') return BARE.test(value) ? value : JSON.stringify(value);
  return JSON.stringify(value) ?? String(value);
}

const twoDigits = (n: number) => String(n).padStart(2, '0');

/**
 * `14:03:07.120 WARN  bridge could not acquire or renew the Lease lease=default/armada-bridge
 * error="HTTP 503: …"`: the local time of day, the level in capitals, the component, the
 * message, then each field as key=value (quoted when it has spaces, JSON when not a string).
 */
export function textLine({ time, level, component, message, fields }: LogRecord): string {
  const clock = `${twoDigits(time.getHours())}:${twoDigits(time.getMinutes())}:${twoDigits(time.getSeconds())}.${String(time.getMilliseconds()).padStart(3, '0')}`;
  const pairs = Object.entries(fields)
    .filter(([, value]) => value !== undefined)
    .map(([key, value]) => `${key}=${textValue(value)}`);
  return [clock, level.toUpperCase().padEnd(5), component, message, ...pairs].join(' ');
}

/** The format of the lines written to a stream: as set, else text on a terminal, JSON elsewhere. */
export function formatFor(setting: LogFormat | undefined, isTTY: boolean): LogFormat {
  return setting ?? (isTTY ? 'text' : 'json');
}

type Stream = Pick<NodeJS.WriteStream, 'isTTY' | 'write'>;

/**
 * Writes each record, debug and info to `out`, warnings and errors to `err`, each stream in its
 * own format (formatFor): `npm start 2>errors.log` shows text and keeps JSON.
 */
export function logWriter(
  setting: LogFormat | undefined,
  out: Stream = process.stdout,
  err: Stream = process.stderr,
): (record: LogRecord) => void {
  const lineFor = (stream: Stream) =>
    formatFor(setting, stream.isTTY === true) === 'text' ? textLine : jsonLine;
  const outLine = lineFor(out);
  const errLine = lineFor(err);
  return (record) => {
    if (record.level === 'warn' || record.level === 'error') err.write(`${errLine(record)}\n`);
    else out.write(`${outLine(record)}\n`);
  };
}

/**
 * ARMADA_LOG_FORMAT as set in `env`, for what logs before or without the process's configuration
 * (a configuration that does not parse is itself logged); unknown values count as unset.
 */
export function logFormatOf(env: NodeJS.ProcessEnv): LogFormat | undefined {
  const parsed = logFormatVariable.ARMADA_LOG_FORMAT.safeParse(env.ARMADA_LOG_FORMAT);
  return parsed.success ? parsed.data : undefined;
}
