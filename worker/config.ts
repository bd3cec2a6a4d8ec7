import { z } from 'zod';
import { temporalVariables, withTemporalConnection } from './temporal-connection';
import { DEFAULT_TASK_QUEUE } from './worker';

const configSchema = z
  .object({
    ...temporalVariables,
    ARMADA_TASK_QUEUE: z.string().min(1).default(DEFAULT_TASK_QUEUE).describe('task queue of the worker'),
  })
  .transform(withTemporalConnection);

export type WorkerConfig = z.infer<typeof configSchema>;

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
