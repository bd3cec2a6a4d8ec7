import { z } from 'zod';

/**
 * Configuration shared by the processes (worker, bridge, armadactl): the task queue they meet
 * on, the metrics port and how the environment is parsed. Nothing here loads activity code, so
 * the bridge and the CLI can read it.
 */

/** The task queue the worker polls and the bridge and armadactl start runs on. */
export const DEFAULT_TASK_QUEUE = 'armada';

export const taskQueueVariable = {
  ARMADA_TASK_QUEUE: z.string().min(1).default(DEFAULT_TASK_QUEUE).describe('task queue of the worker'),
};

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
