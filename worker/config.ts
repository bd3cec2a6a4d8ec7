import { z } from 'zod';
import { temporalVariables, withTemporalConnection } from './temporal-connection';
import { DEFAULT_TASK_QUEUE } from './worker';

const NOT_A_PORT = 'ARMADA_METRICS_PORT must be a port number (0: any free port)';

/** `ARMADA_METRICS_PORT`: where a process serves /metrics and /healthz; 0 picks a free port. */
export const metricsPort = (fallback: number) =>
  z.coerce
    .number({ error: NOT_A_PORT })
    .int(NOT_A_PORT)
    .min(0, NOT_A_PORT)
    .max(65535, NOT_A_PORT)
    .default(fallback)
    .describe('port of the Prometheus /metrics endpoint; 0: any free port');

export const LOG_LEVELS = ['error', 'warn', 'info', 'debug'] as const;
export type LogLevelName = (typeof LOG_LEVELS)[number];

/** Unset and empty are the same (a chart may pass an empty value). */
const unsetIfEmpty = (value: unknown) => (value === '' ? undefined : value);

const NOT_SECONDS = 'must be a whole number of seconds, 0 or more';

const configSchema = z
  .object({
    ...temporalVariables,
    ARMADA_TASK_QUEUE: z.string().min(1).default(DEFAULT_TASK_QUEUE).describe('task queue of the worker'),
    ARMADA_METRICS_PORT: metricsPort(9465),
    ARMADA_LOG_LEVEL: z
      .preprocess(
        unsetIfEmpty,
        z
          .enum(LOG_LEVELS, {
            error: (issue) => `must be one of ${LOG_LEVELS.join(', ')}, not "${String(issue.input)}"`,
          })
          .default('info'),
      )
      .describe('lowest level logged: error, warn, info or debug'),
    ARMADA_SHUTDOWN_GRACE_SECONDS: z
      .preprocess(
        unsetIfEmpty,
        z.coerce.number({ error: NOT_SECONDS }).int(NOT_SECONDS).min(0, NOT_SECONDS).default(30),
      )
      .describe('on SIGTERM, how long running activities may go on before they are cancelled'),
  })
  .transform(withTemporalConnection);

export type WorkerConfig = z.infer<typeof configSchema>;

/** A process's configuration from the environment; throws one line per bad variable. */
export function parseEnv<Schema extends z.ZodType>(schema: Schema, env: NodeJS.ProcessEnv): z.infer<Schema> {
  const parsed = schema.safeParse(env);
  if (parsed.success) return parsed.data;
  const lines = parsed.error.issues.map((issue) => `${issue.path.join('.')}: ${issue.message}`);
  throw new Error(`invalid configuration:\n${lines.join('\n')}`);
}

/** The worker's configuration from the environment. */
export function loadConfig(env: NodeJS.ProcessEnv = process.env): WorkerConfig {
  return parseEnv(configSchema, env);
}
