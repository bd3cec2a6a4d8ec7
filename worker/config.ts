import { z } from 'zod';
import { metricsPort, parseEnv, taskQueueVariable } from '../runs/config';
import { logFormatVariable } from '../runs/log-format';
import { temporalVariables, withTemporalConnection } from '../runs/connection';

export const LOG_LEVELS = ['error', 'warn', 'info', 'debug'] as const;
export type LogLevelName = (typeof LOG_LEVELS)[number];

/** Unset and empty are the same (a chart may pass an empty value). */
const unsetIfEmpty = (value: unknown) => (value === '' ? undefined : value);

const NOT_SECONDS = 'must be a whole number of seconds, 0 or more';

export const configSchema = z
  .object({
    ...temporalVariables,
    ...taskQueueVariable,
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
    ...logFormatVariable,
    ARMADA_SHUTDOWN_GRACE_SECONDS: z
      .preprocess(
        unsetIfEmpty,
        z.coerce.number({ error: NOT_SECONDS }).int(NOT_SECONDS).min(0, NOT_SECONDS).default(30),
      )
      .describe('on SIGTERM, how long running activities may go on before they are cancelled'),
    ARMADA_WORKER_DEPLOYMENT: z
      .preprocess(unsetIfEmpty, z.string().min(1).max(255).optional())
      .describe(
        'Temporal Worker Deployment this worker belongs to; with ARMADA_BUILD_ID, turns on worker versioning (docs/how-to/scale-and-upgrade.md); unset: unversioned',
      ),
    ARMADA_BUILD_ID: z
      .preprocess(unsetIfEmpty, z.string().min(1).max(255).optional())
      .describe(
        'build ID of this worker within ARMADA_WORKER_DEPLOYMENT: one per release of the workflow code',
      ),
    ARMADA_WORKFLOW_BUNDLE: z
      .preprocess(unsetIfEmpty, z.string().min(1).optional())
      .describe(
        'workflow bundle built ahead (npm run build: dist/workflow-bundle.js, which npm run worker, npm start and the image pass); unset: bundle ../workflows at start',
      ),
  })
  .superRefine((config, ctx) => {
    if (!config.ARMADA_WORKER_DEPLOYMENT !== !config.ARMADA_BUILD_ID)
      ctx.addIssue({
        code: 'custom',
        path: [config.ARMADA_WORKER_DEPLOYMENT ? 'ARMADA_BUILD_ID' : 'ARMADA_WORKER_DEPLOYMENT'],
        message:
          'ARMADA_WORKER_DEPLOYMENT and ARMADA_BUILD_ID are set together (worker versioning) or not at all',
      });
  })
  .transform(withTemporalConnection);

export type WorkerConfig = z.infer<typeof configSchema>;

/** The worker's configuration from the environment. */
export function loadConfig(env: NodeJS.ProcessEnv = process.env): WorkerConfig {
  return parseEnv(configSchema, env);
}
