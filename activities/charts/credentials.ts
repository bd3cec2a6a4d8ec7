import { ApplicationFailure } from '@temporalio/common';
import { mkdir, mkdtemp, rm, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import path from 'node:path';
import { SOURCE_SECRET_KEYS, type ChartSource } from '../../api/chart';
import { NonRetryable } from '../../core/failures';
import { readObjectData, withoutStrings } from '../values/read';
import type { ChartObjectRef } from '../../core/contracts/charts';

/** What a `source.secret_ref` Secret gives a fetch: HTTP basic credentials. */
export interface SourceCredentials {
  username: string;
  password: string;
  /** Where they came from, as failures name it: `Secret team-a/charts-login`. */
  from: string;
}

/** What stands in a failure message for a credential. */
export const REDACTED_CREDENTIAL = '<secret_ref>';

/** The name of the one repository in the private repositories.yaml of a `repo` fetch. */
export const PRIVATE_REPOSITORY = 'armada-source';

/**
 * The credentials `source.secret_ref` names, read now from `owner`'s namespace as its
 * ServiceAccount (readObjectData, as `values_from` is read); undefined for a source without one.
 * A missing Secret or key fails non-retryably (CredentialsNotFound), naming the chart, the
 * Secret, the key and the namespace, before anything is fetched or written.
 */
export async function readSourceCredentials(
  source: ChartSource,
  owner: ChartObjectRef | undefined,
  signal?: AbortSignal,
): Promise<SourceCredentials | undefined> {
  const name = source.secret_ref?.name;
  if (name === undefined) return undefined;
  if (!owner) {
    throw credentialsNotFound(
      `${source.type} chart ${source.location}: source.secret_ref names Secret ${name}, but the request names no ArmadaChart whose namespace holds it`,
    );
  }
  const { chart, namespace } = owner;
  const described = `ArmadaChart ${namespace}/${chart} source.secret_ref (Secret ${name})`;
  const data = await readObjectData(owner, { kind: 'Secret', name }, described, signal);
  if (!data) throw credentialsNotFound(`${described}: Secret ${name} not found in namespace ${namespace}`);
  const [username, password] = SOURCE_SECRET_KEYS.map((key) => {
    const value = data[key];
    if (value === undefined)
      throw credentialsNotFound(`${described}: Secret ${namespace}/${name} has no key ${key}`);
    return value;
  });
  return { username, password, from: `Secret ${namespace}/${name}` };
}

function credentialsNotFound(message: string): ApplicationFailure {
  return ApplicationFailure.nonRetryable(
    `${message}; create it with keys ${SOURCE_SECRET_KEYS.join(' and ')}`,
    NonRetryable.CredentialsNotFound,
  );
}

/** An HTTP Authorization header's value for `credentials` (Basic, RFC 7617). */
export function basicAuthorization({ username, password }: Pick<SourceCredentials, 'username' | 'password'>) {
  return `Basic ${Buffer.from(`${username}:${password}`).toString('base64')}`;
}

/**
 * `err` as it may leave a fetch: every form of the password (as it is, and inside a Basic header
 * or a registry config's `auth`) replaced by REDACTED_CREDENTIAL, however short, unlike values:
 * a tool that quotes its configuration must never show a credential.
 */
export function redactCredentials(err: unknown, credentials: SourceCredentials | undefined): unknown {
  if (!credentials?.password) return err;
  const basic = basicAuthorization(credentials).slice('Basic '.length);
  return withoutStrings(err, [basic, credentials.password], REDACTED_CREDENTIAL);
}

/**
 * The git configuration that makes git send `credentials` to `location` and nowhere else:
 * `http.<location>.extraHeader`, which git applies only to URLs under `location` (a redirect to
 * another host gets no header), so the URL stays free of credentials. Given to git by gitConfigEnv.
 */
export function gitCredentialConfig(
  location: string,
  credentials: SourceCredentials,
): Record<string, string> {
  return { [`http.${location}.extraHeader`]: `Authorization: ${basicAuthorization(credentials)}` };
}

/**
 * `config` as git reads configuration from its environment (`GIT_CONFIG_COUNT`, git 2.31+): the
 * effect of `git -c key=value` for one run, but out of the arguments, which any user can read in
 * /proc (the environment is not). No entries, no variables.
 */
export function gitConfigEnv(config: Record<string, string>): Record<string, string> {
  const entries = Object.entries(config);
  if (entries.length === 0) return {};
  return Object.fromEntries([
    ['GIT_CONFIG_COUNT', String(entries.length)],
    ...entries.flatMap(([key, value], i) => [
      [`GIT_CONFIG_KEY_${i}`, key],
      [`GIT_CONFIG_VALUE_${i}`, value],
    ]),
  ]);
}

/**
 * helm's registry configuration (`--registry-config`, Docker's config.json format) with
 * `credentials` for the registry of the oci:// `location`, keyed as `helm registry login` keys
 * it (Docker Hub under its historical index address).
 */
export function registryConfig(location: string, credentials: SourceCredentials): string {
  const host = new URL(location).host;
  const key = host === 'docker.io' || host === 'registry-1.docker.io' ? 'https://index.docker.io/v1/' : host;
  const auth = basicAuthorization(credentials).slice('Basic '.length);
  return JSON.stringify({ auths: { [key]: { auth } } });
}

/**
 * helm's repositories.yaml (`--repository-config`; JSON is YAML) holding the one repository
 * PRIVATE_REPOSITORY at `url` with `credentials`. helm sends them only to that repository's host.
 */
export function repositoryConfig(url: string, credentials: SourceCredentials): string {
  const { username, password } = credentials;
  return JSON.stringify({
    apiVersion: 'v1',
    repositories: [{ name: PRIVATE_REPOSITORY, url, username, password }],
  });
}

/** Where a private helm fetch keeps its configuration, inside a private directory (inPrivateDirectory). */
export interface HelmConfigFiles {
  /** `--repository-config` */
  repositories: string;
  /** `--repository-cache`: the private repository's index, never in the worker's own cache. */
  repositoryCache: string;
  /** `--registry-config` */
  registry: string;
}

/**
 * Writes the file helm reads `credentials` for `source` from (repositories.yaml for `repo`, the
 * registry configuration for `oci`), 0600 in `dir`; returns where helm finds its configuration.
 */
export async function writeHelmCredentials(
  source: ChartSource,
  credentials: SourceCredentials,
  dir: string,
): Promise<HelmConfigFiles> {
  const files: HelmConfigFiles = {
    repositories: path.join(dir, 'repositories.yaml'),
    repositoryCache: path.join(dir, 'repository-cache'),
    registry: path.join(dir, 'registry.json'),
  };
  const location = source.location ?? '';
  if (source.type === 'oci') {
    await writeFile(files.registry, registryConfig(location, credentials), { mode: 0o600 });
  } else {
    await writeFile(files.repositories, repositoryConfig(location, credentials), { mode: 0o600 });
    await mkdir(files.repositoryCache, { mode: 0o700 });
  }
  return files;
}

/**
 * Runs `work` with a fresh directory that only this process can read (mkdtemp makes it 0700),
 * removed when `work` ends, whichever way: where credentials and private indexes are written
 * for the one tool run that needs them, never into the worker's own helm or git configuration.
 */
export async function inPrivateDirectory<T>(work: (dir: string) => Promise<T>): Promise<T> {
  const dir = await mkdtemp(path.join(tmpdir(), 'armada-credentials-'));
  try {
    return await work(dir);
  } finally {
    await rm(dir, { recursive: true, force: true });
  }
}
