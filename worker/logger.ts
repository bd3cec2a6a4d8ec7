import { DefaultLogger, type LogEntry, type LogLevel } from '@temporalio/worker';
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

/**
 * One log entry as one JSON line: `{"time","level","component","message", …metadata}`, the
 * level in lower case, the SDK's metadata (workflowId, activityType, sdkComponent …) flattened
 * in, withheld keys dropped.
 */
export function logLine(
  entry: Pick<LogEntry, 'level' | 'message' | 'meta'> & { timestampNanos?: bigint },
  component = 'worker',
): string {
  const millis = entry.timestampNanos === undefined ? Date.now() : Number(entry.timestampNanos / 1_000_000n);
  const meta: Record<string, unknown> = {};
  for (const [key, value] of Object.entries(entry.meta ?? {}))
    if (!WITHHELD.has(key) && !OWN.has(key)) meta[key] = plain(value);
  return JSON.stringify({
    time: new Date(millis).toISOString(),
    level: entry.level.toLowerCase(),
    component,
    message: entry.message,
    ...meta,
  });
}

/** Info and below to stdout, warnings and errors to stderr (as the bridge does). */
function write(entry: LogEntry): void {
  const line = logLine(entry);
  if (entry.level === 'WARN' || entry.level === 'ERROR') console.error(line);
  else console.log(line);
}

/**
 * The worker's logger, for the SDK (Runtime.install) and the process's own lines: entries below
 * `level` are dropped, the rest written by `output` (default: one JSON line, see logLine).
 */
export function jsonLogger(level: LogLevelName, output: (entry: LogEntry) => void = write): DefaultLogger {
  return new DefaultLogger(SDK_LEVELS[level], output);
}

/**
 * What the SDK's Rust core forwards to the logger: its own entries from `level` up, but never
 * its DEBUG chatter (every poll); third-party crates' errors only.
 */
export function coreLogFilter(level: LogLevelName): { core: LogLevel; other: LogLevel } {
  return { core: level === 'debug' ? 'INFO' : SDK_LEVELS[level], other: 'ERROR' };
}
