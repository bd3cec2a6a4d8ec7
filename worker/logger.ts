import { DefaultLogger, type LogEntry, type LogLevel } from '@temporalio/worker';
import { jsonLine, logFormatOf, logWriter, type LogRecord } from '../runs/log-format';
import type { LogLevelName } from './config';

/**
 * Metadata never written, whatever code logs it: an activity's or workflow's arguments and
 * results (chart values carry secrets) and the activity's task token (it can complete the task).
 */
const WITHHELD = new Set([
  'args',
  'arguments',
  'input',
  'result',
  'payload',
  'payloads',
  'headers',
  'taskToken',
]);
/** The line's own fields; metadata of the same name does not replace them. */
const OWN = new Set(['time', 'level', 'component', 'message']);

const SDK_LEVELS: Record<LogLevelName, LogLevel> = {
  error: 'ERROR',
  warn: 'WARN',
  info: 'INFO',
  debug: 'DEBUG',
};

/** An error as text (its own JSON is `{}`); other values as they are. */
function plain(value: unknown): unknown {
  if (value instanceof Error) return value.message;
  if (typeof value === 'bigint') return value.toString();
  return value;
}

/** A log entry of the SDK or the worker as a record: withheld keys dropped, errors as their message. */
export function logRecord(
  entry: Pick<LogEntry, 'level' | 'message' | 'meta'> & { timestampNanos?: bigint },
  component = 'worker',
): LogRecord {
  const millis = entry.timestampNanos === undefined ? Date.now() : Number(entry.timestampNanos / 1_000_000n);
  const fields: Record<string, unknown> = {};
  for (const [key, value] of Object.entries(entry.meta ?? {}))
    if (!WITHHELD.has(key) && !OWN.has(key)) fields[key] = plain(value);
  return {
    time: new Date(millis),
    level: entry.level.toLowerCase(),
    component,
    message: entry.message,
    fields,
  };
}

/**
 * One log entry as one JSON line: `{"time","level","component","message", …metadata}`, the
 * level in lower case, the SDK's metadata (workflowId, activityType, sdkComponent …) flattened
 * in, withheld keys dropped.
 */
export function logLine(
  entry: Pick<LogEntry, 'level' | 'message' | 'meta'> & { timestampNanos?: bigint },
  component = 'worker',
): string {
  return jsonLine(logRecord(entry, component));
}

/**
 * The worker's logger, for the SDK (Runtime.install) and the process's own lines: entries below
 * `level` are dropped, the rest handed to `output` (default: written as ARMADA_LOG_FORMAT says,
 * runs/log-format.ts).
 */
export function workerLogger(
  level: LogLevelName,
  output: (entry: LogEntry) => void = writeEntry,
): DefaultLogger {
  return new DefaultLogger(SDK_LEVELS[level], output);
}

const write = logWriter(logFormatOf(process.env));

/** Writes one of the worker's entries: info and below to stdout, warnings and errors to stderr. */
export function writeEntry(entry: Pick<LogEntry, 'level' | 'message' | 'meta'>): void {
  write(logRecord(entry));
}

/**
 * What the SDK's Rust core forwards to the logger: its own entries from `level` up, but never
 * its DEBUG chatter (every poll); third-party crates' errors only.
 */
export function coreLogFilter(level: LogLevelName): { core: LogLevel; other: LogLevel } {
  return { core: level === 'debug' ? 'INFO' : SDK_LEVELS[level], other: 'ERROR' };
}
