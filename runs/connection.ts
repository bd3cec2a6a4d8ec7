import { readFileSync, statSync } from 'node:fs';
import { homedir, platform } from 'node:os';
import path from 'node:path';
import type { ConnectionOptions, TLSConfig } from '@temporalio/client';
import {
  loadClientConfigFromToml,
  type ClientConfigProfile,
  type ConfigDataSource,
} from '@temporalio/envconfig';
import type { NativeConnectionOptions } from '@temporalio/worker';
import { z } from 'zod';
import { variable } from '../core/environment';

/** A certificate or key: a file, or PEM text from a profile, and the setting that named it. */
export type CertSource = { setting: string; path: string } | { setting: string; data: Uint8Array };

/** How the worker, the bridge and armadactl reach Temporal. */
export interface TemporalConnection {
  address: string;
  namespace: string;
  apiKey?: string;
  /** Absent: plain text. */
  tls?: {
    /** The name the server's certificate is checked against (SNI); default: the address's host. */
    serverName?: string;
    /** Default: the system's trusted CAs (Temporal Cloud). */
    serverCaCert?: CertSource;
    /** mTLS: both or neither. */
    clientCert?: CertSource;
    clientKey?: CertSource;
  };
}

const DEFAULT_ADDRESS = 'localhost:7233';
const DEFAULT_NAMESPACE = 'default';
const DEFAULT_PROFILE = 'default';

const isFile = (file: string) => statSync(file, { throwIfNoEntry: false })?.isFile() ?? false;

/** Unset and empty are the same: compose files and Helm charts often pass empty values. */
const optional = <Schema extends z.ZodType>(schema: Schema) =>
  z.preprocess((value) => (value === '' ? undefined : value), schema.optional());

const text = optional(z.string());
const flag = optional(
  z
    .enum(['true', 'false', '1', '0'], {
      error: (issue) => `must be true or false, not "${String(issue.input)}"`,
    })
    .transform((value) => value === 'true' || value === '1'),
);
const file = optional(
  z.string().refine(isFile, { error: (issue) => `no such file: ${String(issue.input)}` }),
);

/**
 * The Temporal SDK's standard variables, as the Temporal CLI reads them too. A process spreads
 * them into its schema and ends it with `.transform(withTemporalConnection)`.
 */
export const temporalVariables = {
  TEMPORAL_ADDRESS: text.describe(
    `Temporal frontend host:port; default ${DEFAULT_ADDRESS} (npm start: its own dev server)`,
  ),
  TEMPORAL_NAMESPACE: text.describe(`Temporal namespace; default ${DEFAULT_NAMESPACE}`),
  TEMPORAL_API_KEY: text.describe('API key (Temporal Cloud); turns TLS on'),
  TEMPORAL_TLS: flag.describe('true or false; default: on when any TLS setting or an API key is given'),
  TEMPORAL_TLS_CLIENT_CERT_PATH: file.describe('mTLS: PEM client certificate, with its key'),
  TEMPORAL_TLS_CLIENT_KEY_PATH: file.describe('mTLS: PEM private key of the client certificate'),
  TEMPORAL_TLS_SERVER_CA_CERT_PATH: file.describe(
    "PEM CA of the server's certificate; default: the system's",
  ),
  TEMPORAL_TLS_SERVER_NAME: text.describe(
    "name checked in the server's certificate; default: the address's host",
  ),
  TEMPORAL_TLS_DISABLE_HOST_VERIFICATION: flag
    .refine((disable) => disable !== true, {
      error:
        "the TypeScript SDK always verifies the server's name; set TEMPORAL_TLS_SERVER_NAME to a name in its certificate",
    })
    .describe(
      'refused when true: the TypeScript SDK always verifies the server name (set TEMPORAL_TLS_SERVER_NAME)',
    ),
  TEMPORAL_PROFILE: text.describe(`profile of the Temporal CLI config file; default ${DEFAULT_PROFILE}`),
  TEMPORAL_CONFIG_FILE: file.describe(
    'Temporal CLI config file (`temporal config set`); default ~/.config/temporalio/temporal.toml ($XDG_CONFIG_HOME if set), where an absent file is no error',
  ),
};

export type TemporalVariables = z.output<z.ZodObject<typeof temporalVariables>>;

/** The Temporal CLI's config file: $XDG_CONFIG_HOME (else ~/.config; macOS: ~/Library/Application Support)/temporalio/temporal.toml. */
export function defaultConfigFile(env: NodeJS.ProcessEnv = process.env): string {
  const base =
    platform() === 'darwin'
      ? path.join(homedir(), 'Library', 'Application Support')
      : variable(env, 'XDG_CONFIG_HOME') || path.join(homedir(), '.config');
  return path.join(base, 'temporalio', 'temporal.toml');
}

type Report = (setting: string, message: string) => void;

/** The chosen profile of the config file; none (`{}`) when the file is absent and no profile was asked for. */
function readProfile(env: TemporalVariables, report: Report): ClientConfigProfile {
  const configFile = env.TEMPORAL_CONFIG_FILE ?? defaultConfigFile();
  const name = env.TEMPORAL_PROFILE ?? DEFAULT_PROFILE;
  let profiles: Record<string, ClientConfigProfile> = {};
  if (isFile(configFile)) {
    try {
      const toml = readFileSync(configFile);
      if (toml.toString().trim()) profiles = loadClientConfigFromToml(toml, { strict: false }).profiles;
    } catch (err) {
      // smol-toml's message goes on with the offending lines; its first line and the line number do.
      const { message, line } = err as Error & { line?: number };
      const where = line === undefined ? '' : ` (line ${line})`;
      report('TEMPORAL_CONFIG_FILE', `cannot read ${configFile}: ${message.split('\n')[0]}${where}`);
      return {};
    }
  }
  const profile = Object.hasOwn(profiles, name) ? profiles[name] : undefined;
  if (!profile && env.TEMPORAL_PROFILE !== undefined)
    report(
      'TEMPORAL_PROFILE',
      isFile(configFile)
        ? `no profile "${name}" in ${configFile}`
        : `no profile "${name}": no file ${configFile}`,
    );
  return profile ?? {};
}

/**
 * The connection from the variables and, below them, the profile: an explicit variable wins over
 * the profile, which wins over the defaults. TLS is on when asked for, else when any TLS setting
 * or an API key is given. Each inconsistency is reported as one issue.
 */
function resolve(env: TemporalVariables, report: Report): TemporalConnection {
  const profile = readProfile(env, report);
  const inProfile = (key: string) => `profile.${env.TEMPORAL_PROFILE ?? DEFAULT_PROFILE}.tls.${key}`;
  const cert = (
    variable: string,
    value: string | undefined,
    key: string,
    fromProfile?: ConfigDataSource,
  ): CertSource | undefined => {
    if (value !== undefined) return { setting: variable, path: value };
    if (fromProfile === undefined) return undefined;
    return 'path' in fromProfile
      ? { setting: inProfile(`${key}_path`), path: fromProfile.path }
      : { setting: inProfile(`${key}_data`), data: Buffer.from(fromProfile.data) };
  };
  const tls = {
    serverName: env.TEMPORAL_TLS_SERVER_NAME ?? profile.tls?.serverName,
    serverCaCert: cert(
      'TEMPORAL_TLS_SERVER_CA_CERT_PATH',
      env.TEMPORAL_TLS_SERVER_CA_CERT_PATH,
      'server_ca_cert',
      profile.tls?.serverCACert,
    ),
    clientCert: cert(
      'TEMPORAL_TLS_CLIENT_CERT_PATH',
      env.TEMPORAL_TLS_CLIENT_CERT_PATH,
      'client_cert',
      profile.tls?.clientCert,
    ),
    clientKey: cert(
      'TEMPORAL_TLS_CLIENT_KEY_PATH',
      env.TEMPORAL_TLS_CLIENT_KEY_PATH,
      'client_key',
      profile.tls?.clientKey,
    ),
  };
  const apiKey = env.TEMPORAL_API_KEY ?? profile.apiKey;

  for (const source of [tls.serverCaCert, tls.clientCert, tls.clientKey])
    if (source && 'path' in source && !isFile(source.path))
      report(source.setting, `no such file: ${source.path}`);
  if (tls.clientCert && !tls.clientKey)
    report(
      'TEMPORAL_TLS_CLIENT_KEY_PATH',
      `not set, but ${tls.clientCert.setting} is: a client certificate needs its key`,
    );
  if (tls.clientKey && !tls.clientCert)
    report(
      'TEMPORAL_TLS_CLIENT_CERT_PATH',
      `not set, but ${tls.clientKey.setting} is: a client key needs its certificate`,
    );

  const tlsGiven = Object.values(tls).some((value) => value !== undefined);
  const asked =
    env.TEMPORAL_TLS !== undefined
      ? { setting: 'TEMPORAL_TLS', on: env.TEMPORAL_TLS }
      : profile.tls?.disabled !== undefined
        ? { setting: inProfile('disabled'), on: !profile.tls.disabled }
        : undefined;
  if (asked?.on === false && tlsGiven)
    report(asked.setting, 'turns TLS off, but a server name, CA or client certificate is given');

  return {
    address: env.TEMPORAL_ADDRESS ?? profile.address ?? DEFAULT_ADDRESS,
    namespace: env.TEMPORAL_NAMESPACE ?? profile.namespace ?? DEFAULT_NAMESPACE,
    ...(apiKey !== undefined && { apiKey }),
    ...((asked?.on ?? (tlsGiven || apiKey !== undefined)) && { tls }),
  };
}

/**
 * The transform that ends a schema spreading `temporalVariables`: the variables give way to
 * `temporal`, the resolved connection.
 */
export function withTemporalConnection<Env extends TemporalVariables>(env: Env, ctx: z.RefinementCtx) {
  const report: Report = (setting, message) => ctx.addIssue({ code: 'custom', path: [setting], message });
  const temporal = resolve(env, report);
  const rest: Partial<Env> = { ...env };
  for (const name of Object.keys(temporalVariables)) delete rest[name as keyof Env];
  return { ...(rest as Omit<Env, keyof TemporalVariables>), temporal };
}

const connectionSchema = z.object(temporalVariables).transform(withTemporalConnection);

/**
 * The connection alone (armadactl); throws one line per bad variable, as `parseEnv` in
 * ./config does (not imported from there: that module loads the whole worker).
 */
export function loadTemporalConnection(env: NodeJS.ProcessEnv = process.env): TemporalConnection {
  const parsed = connectionSchema.safeParse(env);
  if (parsed.success) return parsed.data.temporal;
  const lines = parsed.error.issues.map((issue) => `${issue.path.join('.')}: ${issue.message}`);
  throw new Error(`invalid configuration:\n${lines.join('\n')}`);
}

/** A certificate's bytes; an error names the setting and the file. */
function read(source: CertSource): Buffer {
  if ('data' in source) return Buffer.from(source.data);
  try {
    return readFileSync(source.path);
  } catch (err) {
    const { code, message } = err as NodeJS.ErrnoException;
    throw new Error(`${source.setting}: cannot read ${source.path} (${code ?? message})`, { cause: err });
  }
}

/** The options both connection kinds share; reads the certificate files. */
function connectionOptions({ address, apiKey, tls }: TemporalConnection) {
  const tlsOption: TLSConfig | false = tls !== undefined && {
    serverNameOverride: tls.serverName,
    serverRootCACertificate: tls.serverCaCert && read(tls.serverCaCert),
    clientCertPair: tls.clientCert &&
      tls.clientKey && { crt: read(tls.clientCert), key: read(tls.clientKey) },
  };
  return { address, apiKey, tls: tlsOption };
}

/** `NativeConnection.connect`'s options (the worker). */
export const nativeConnectionOptions = (connection: TemporalConnection): NativeConnectionOptions =>
  connectionOptions(connection);

/** `Connection.connect`'s options (the bridge, armadactl). */
export const clientConnectionOptions = (connection: TemporalConnection): ConnectionOptions =>
  connectionOptions(connection);
