import { z } from 'zod';
import { metricsPort, parseEnv, taskQueueVariable } from '../runs/config';
import { logFormatVariable } from '../runs/log-format';
import { temporalVariables, withTemporalConnection } from '../runs/connection';

const seconds = (name: string, fallback: number) =>
  z.coerce.number().positive(`${name} must be a positive number of seconds`).default(fallback);

/** A comma-separated list of namespaces; empty: 'all'. */
const namespaces = z
  .string()
  .default('')
  .transform((value) => {
    const names = value
      .split(',')
      .map((n) => n.trim())
      .filter(Boolean);
    return names.length ? names : ('all' as const);
  });

export const configSchema = z
  .object({
    ...temporalVariables,
    ...taskQueueVariable,
    ARMADA_NAMESPACES: namespaces.describe('comma-separated namespaces to watch; empty: every namespace'),
    ARMADA_DRIFT_NAMESPACES: namespaces.describe(
      'comma-separated namespaces whose Helm-managed objects are watched for drift; empty: every namespace',
    ),
    ARMADA_LEASE_NAMESPACE: z.string().min(1).default('default').describe('namespace of the leader Lease'),
    ARMADA_LEASE_NAME: z.string().min(1).default('armada-bridge').describe('name of the leader Lease'),
    ARMADA_LEASE_SECONDS: seconds('ARMADA_LEASE_SECONDS', 15).describe(
      'how long a leader that stopped renewing keeps the Lease; it renews every third of it',
    ),
    ARMADA_RESYNC_SECONDS: seconds('ARMADA_RESYNC_SECONDS', 300).describe(
      'every object is reconciled this often',
    ),
    ARMADA_SETTLE_SECONDS: z.coerce
      .number()
      .min(0, 'ARMADA_SETTLE_SECONDS must be 0 or more seconds')
      .default(1)
      .describe('a manifest or group run starts once it and what it lists have had no spec change this long'),
    // A reconcile mostly waits on the API server and Temporal (a new object's: its finalizer patch,
    // a describe, a list and a start call), so a burst of new objects needs many at once: 8 held
    // 1,000 created 50 at a time to 8 starts per round trip (benchmark 2).
    ARMADA_WORKERS: z.coerce.number().int().min(1).default(32).describe('objects reconciled at once'),
    ARMADA_LOCKDOWN: z
      .enum(['true', 'false', ''])
      .default('')
      .transform((value) => value === 'true')
      .describe(
        'true: a chart or Deployer without a service_account_name (its own or its manifest’s) is Invalid; default false',
      ),
    ARMADA_DEFAULT_SERVICE_ACCOUNT: z
      .string()
      .regex(
        /^[a-z0-9]([-a-z0-9]*[a-z0-9])?$/,
        'ARMADA_DEFAULT_SERVICE_ACCOUNT must be a ServiceAccount name',
      )
      .optional()
      .describe(
        'the ServiceAccount (in the object’s namespace) a run acts as when its object and manifest name none; unset: the worker itself',
      ),
    ARMADA_METRICS_PORT: metricsPort(9464),
    ...logFormatVariable,
  })
  .transform(withTemporalConnection);

export type BridgeConfig = z.infer<typeof configSchema>;

/** The bridge's configuration from the environment; throws one line per bad variable. */
export function loadConfig(env: NodeJS.ProcessEnv = process.env): BridgeConfig {
  return parseEnv(configSchema, env);
}
