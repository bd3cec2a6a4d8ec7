import type { Context } from '@temporalio/activity';
import { ApplicationFailure } from '@temporalio/common';
import { createHash, randomUUID } from 'node:crypto';
import { createReadStream } from 'node:fs';
import { mkdir, mkdtemp, open, readdir, readFile, realpath, rename, rm, stat } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import path from 'node:path';
import type { ChartSource } from '../../api/chart';
import { quoted } from '../../api/common';
import {
  proxyProblems,
  secretRefProblems,
  sourcePlaceProblems,
  verifyProblems,
  withoutCredentials,
} from '../../api/source-location';
import { NonRetryable } from '../../core/failures';
import { HELM_COMMAND_FAILED } from '../helm/errors';
import { runHelm } from '../helm/exec';
import { currentActivity, heartbeating, runProcess, type ProcessResult } from '../process';
import { toolPath } from '../tools';
import type { ChartObjectRef } from '../../core/contracts/charts';
import {
  basicAuthorization,
  gitConfigEnv,
  gitCredentialConfig,
  inPrivateDirectory,
  PRIVATE_REPOSITORY,
  readSourceCredentials,
  redactCredentials,
  writeHelmCredentials,
  type HelmConfigFiles,
  type SourceCredentials,
} from './credentials';
import { treeDigest, type TreeFile } from './digest';
import { chartUnverified, ofChart, readKeyring, verifyProvenance, type Keyring } from './provenance';
import { fetchThroughProxy, gitProxy, helmProxyEnv, redactProxyCredentials } from './proxy';
import { variable } from '../../core/environment';

/** A chart on local disk and the digest of its content alone (no values). */
export interface LocalChart {
  ref: string;
  contentDigest: string;
}

/** Largest chart archive a `tar` source may download; Helm itself refuses charts far smaller. */
const MAX_ARCHIVE_BYTES = 64 * 1024 * 1024;
/** Largest provenance file a `tar` source may download: a chart's is a few KiB. */
const MAX_PROVENANCE_BYTES = 1024 * 1024;
/** How much of a tool's error output a failure carries. */
const FAILURE_TAIL_LINES = 20;
/** git's answers for a repository or reference that does not exist: retrying cannot help. */
const GIT_NOT_FOUND =
  /couldn't find remote ref|does not appear to be a git repository|repository .* not found|not our ref|unadvertised object|invalid refspec/i;
/** helm pull's answers for a missing OCI tag or repository or a missing repository index. */
const PULL_NOT_FOUND = /: not found\b|name unknown|manifest unknown|status code 404|: 404 Not Found/i;
/** helm's answers when a registry or repository wants credentials, or other ones. */
const PULL_UNAUTHORIZED =
  /status code 40[13]\b|\b40[13] (Unauthorized|Forbidden)\b|basic credential not found/i;
/** git's, asked for credentials it was not given (it never prompts: runTool) or refused them. */
const GIT_UNAUTHORIZED =
  /Authentication failed|could not read (Username|Password)|The requested URL returned error: 40[13]\b/i;

/**
 * The chart of `source` on this worker's disk, fetched with the credentials of its
 * `source.secret_ref` (read in `owner`'s namespace, as its ServiceAccount), which reach each
 * tool without its arguments: a header for downloads, 0600 configuration files in a private
 * directory for helm (readable in /proc, arguments are anyone's), git's configuration in its
 * environment. Failures are redacted of them.
 *
 * Cache and credentials: every fetch asks the source, with the chart's own credentials, before
 * anything cached is used; the artefacts named by content (`<cache>/<digest>.tgz`, `git-<commit>`)
 * are reused only once the source has served that content to this chart. helm pull reads its
 * content cache only for a digest the authenticated index or registry gave it. A private fetch's
 * helm configuration and repository index live in a private directory removed afterwards, never
 * in the worker's helm homes, where they would serve charts that name no credentials.
 *
 * `source.proxy_server` reaches only this chart's fetch: the download of a `tar` source
 * (fetchThroughProxy), the environment of its `git fetch` (gitFetchEnv) or of its `helm pull`
 * (helmProxyEnv); never the worker's own environment. The proxy is not part of any digest: the
 * same chart fetched through a proxy or directly is the same content, so a change of proxy alone
 * upgrades no release. Failures are redacted of the proxy's credentials too.
 *
 * `source.verify`: the keyring is read before anything is fetched, and the archive is verified
 * against its provenance file (activities/charts/provenance.ts) before it is returned: a chart
 * that fails is never cached as this run's, never built, never deployed.
 */
export async function fetchChart(source: ChartSource, owner?: ChartObjectRef): Promise<LocalChart> {
  // Again here, not only in the validator: an object written before the rule, or a caller that
  // skips validation, must not make the worker read its own disk.
  const broken = sourcePlaceProblems(source)[0];
  if (broken) {
    throw chartNotFound(
      `${describeSource(source)}: source.${broken.field} ${quoted(source[broken.field] ?? '')} ${broken.message}`,
    );
  }
  // Fetching without the credentials the object names would only fail later, less clearly.
  const unusable = secretRefProblems(source)[0];
  if (unusable) throw chartNotFound(`${describeSource(source)}: source.secret_ref ${unusable.message}`);
  const unproxied = proxyProblems(source)[0];
  if (unproxied) throw chartNotFound(`${describeSource(source)}: source.proxy_server ${unproxied.message}`);
  const what = `${owner ? ofChart(owner) : ''}${describeSource(source)}`;
  const unverifiable = verifyProblems(source)[0];
  if (unverifiable) throw chartUnverified(`${what}: source.verify ${unverifiable.message}`);
  const signal = currentActivity()?.cancellationSignal;
  const credentials = await readSourceCredentials(source, owner, signal);
  const keyring = await readKeyring(source, owner, what, signal);
  const verified = keyring && { keyring, what };
  try {
    switch (source.type) {
      case 'local':
        return await localChart(source);
      case 'tar':
        return await tarChart(source, credentials, verified);
      case 'repo':
      case 'oci':
        return await pulledChart(source, credentials, verified);
      case 'git':
        return await gitChart(source, credentials);
    }
  } catch (err) {
    throw redactProxyCredentials(redactCredentials(err, credentials), source.proxy_server);
  }
}

/**
 * `local`: reads the directory in place; writes nothing. The directory, followed through
 * symbolic links, and every link in it must stay under the charts root.
 */
async function localChart(source: ChartSource): Promise<LocalChart> {
  const root = path.resolve(variable(process.env, 'ARMADA_CHARTS_ROOT') || process.cwd());
  const directory = inside(source, 'location', root, required(source, 'location'));
  const ref = inside(source, 'subpath', directory, source.subpath);
  await requireChartDirectory(ref, source);
  const realRoot = await realpath(root);
  const confine = {
    source,
    fence: realRoot,
    name: `the charts root ${realRoot} (ARMADA_CHARTS_ROOT, else the working directory)`,
  };
  return { ref, contentDigest: await directoryDigest(ref, confine) };
}

/** What a chart that must be verified is verified with, and how failures name it. */
interface Verification {
  keyring: Keyring;
  what: string;
}

/**
 * `tar`: writes `<cache>/<sha256(archive)>.tgz` and, with a subpath, its extracted tree; returns
 * the ref. With `verified`, the archive is verified against `<location>.prov` first.
 */
async function tarChart(
  source: ChartSource,
  credentials?: SourceCredentials,
  verified?: Verification,
): Promise<LocalChart> {
  const url = required(source, 'location');
  const cache = await cacheDir();
  const { archive, archiveDigest } = await download(source, url, cache, credentials);
  if (verified) {
    const provenance = await downloadProvenance(source, url, credentials, verified.what);
    const fileName = path.posix.basename(new URL(url).pathname) || 'chart.tgz';
    await verifyProvenance(archive, fileName, provenance, verified.keyring, verified.what);
  }
  if (!source.subpath) return { ref: archive, contentDigest: archiveDigest };

  const tree = await extract(archive, path.join(cache, `${archiveDigest}.d`));
  const ref = inside(source, 'subpath', tree, source.subpath);
  await requireChartDirectory(ref, source);
  return { ref, contentDigest: await directoryDigest(ref, await fetchedTree(source, tree)) };
}

/**
 * Downloads `url` (the location of `source`) into `cache`, with `credentials` when given:
 * streamed into a temporary file there, then renamed to `<sha256 of the bytes>.tgz`, so a
 * reader never sees a partial archive and a name always holds the same bytes (a URL may serve
 * other bytes later). Returns that file and the sha256 hex.
 */
async function download(
  source: ChartSource,
  url: string,
  cache: string,
  credentials?: SourceCredentials,
): Promise<{ archive: string; archiveDigest: string }> {
  const shown = `${withoutCredentials(url)}${throughProxy(source)}`;
  const activity = currentActivity();
  const { href, headers } = basicAuth(url, credentials);
  const proxy = source.proxy_server;
  const init = { headers, signal: activity?.cancellationSignal };
  let response: Response;
  try {
    response = await (proxy ? fetchThroughProxy(href, proxy, init) : fetch(href, init));
  } catch (err) {
    throwIfCancelled(activity);
    throw new Error(`cannot download ${shown}: ${reason(err)}`, { cause: err });
  }
  if (response.status === 404 || response.status === 410) {
    await response.body?.cancel();
    throw chartNotFound(`chart archive ${shown} not found: HTTP ${response.status}`);
  }
  if (response.status === 401 || response.status === 403) {
    await response.body?.cancel();
    throw sourceUnauthorized(source, credentials, `HTTP ${response.status} from ${shown}`);
  }
  if (!response.ok || !response.body) {
    await response.body?.cancel();
    throw new Error(`cannot download ${shown}: HTTP ${response.status} ${response.statusText}`.trimEnd());
  }

  const temporary = path.join(cache, `.download-${randomUUID()}.tmp`);
  const hash = createHash('sha256');
  const reader = response.body.getReader();
  try {
    await heartbeating(async () => {
      const out = await open(temporary, 'wx', 0o644);
      try {
        let size = 0;
        for (;;) {
          const { done, value } = await reader.read();
          if (done) break;
          size += value.byteLength;
          if (size > MAX_ARCHIVE_BYTES) {
            throw chartNotFound(`chart archive ${shown} is larger than ${MAX_ARCHIVE_BYTES} bytes`);
          }
          hash.update(value);
          await out.write(value);
        }
      } finally {
        await out.close();
      }
    });
    const archiveDigest = hash.digest('hex');
    const archive = path.join(cache, `${archiveDigest}.tgz`);
    await rename(temporary, archive);
    return { archive, archiveDigest };
  } catch (err) {
    await reader.cancel().catch(() => undefined);
    await rm(temporary, { force: true });
    throwIfCancelled(activity);
    if (err instanceof ApplicationFailure) throw err;
    throw new Error(`cannot download ${shown}: ${reason(err)}`, { cause: err });
  }
}

/**
 * The provenance file of the archive at `url`: `<url>.prov` (as helm finds it beside a
 * repository's archive), fetched with the same credentials and proxy. None there (HTTP 404 or
 * 410) fails non-retryably as ChartUnverified; other HTTP errors as the archive's download does.
 */
async function downloadProvenance(
  source: ChartSource,
  url: string,
  credentials: SourceCredentials | undefined,
  what: string,
): Promise<Buffer> {
  const provenanceUrl = new URL(url);
  provenanceUrl.pathname += '.prov';
  const shown = `${withoutCredentials(provenanceUrl.href)}${throughProxy(source)}`;
  const { href, headers } = basicAuth(provenanceUrl.href, credentials);
  const init = { headers, signal: currentActivity()?.cancellationSignal };
  const proxy = source.proxy_server;
  let response: Response;
  try {
    response = await (proxy ? fetchThroughProxy(href, proxy, init) : fetch(href, init));
  } catch (err) {
    throwIfCancelled(currentActivity());
    throw new Error(`cannot download ${shown}: ${reason(err)}`, { cause: err });
  }
  if (response.status === 404 || response.status === 410) {
    await response.body?.cancel();
    throw chartUnverified(`${what}: no provenance file: HTTP ${response.status} from ${shown}`);
  }
  if (response.status === 401 || response.status === 403) {
    await response.body?.cancel();
    throw sourceUnauthorized(source, credentials, `HTTP ${response.status} from ${shown}`);
  }
  if (!response.ok) {
    await response.body?.cancel();
    throw new Error(`cannot download ${shown}: HTTP ${response.status} ${response.statusText}`.trimEnd());
  }
  const provenance = Buffer.from(await response.arrayBuffer());
  if (provenance.length > MAX_PROVENANCE_BYTES)
    throw chartUnverified(`${what}: provenance file ${shown} is larger than ${MAX_PROVENANCE_BYTES} bytes`);
  return provenance;
}

/**
 * Extracts `archive` with the system tar to `target`, unless an earlier call already did (the
 * target is named by the archive's content). Writes a temporary directory beside the target and
 * renames it into place. Returns `target`.
 */
export async function extract(archive: string, target: string): Promise<string> {
  if (await isDirectory(target)) return target;
  const temporary = await mkdtemp(`${target}.tmp-`);
  try {
    const result = await runTool('tar', [
      '-xf',
      archive,
      '-C',
      temporary,
      '--no-same-owner',
      '--no-same-permissions',
    ]);
    if (result.code !== 0) {
      throw chartNotFound(`${archive} is not a readable chart archive: ${tail(result.stderr)}`);
    }
    return await settle(temporary, target);
  } finally {
    await rm(temporary, { recursive: true, force: true });
  }
}

/**
 * The helm commands that pull the chart of a `repo` or `oci` source into `destination`, in
 * order. Without `config`, one `helm pull` of the chart (`--repo` for a repository). With the
 * configuration of a private fetch (writeHelmCredentials): for a repository, `helm repo update`
 * of the one repository it names (the index, fetched with its credentials) and `helm pull` of
 * `<that repository>/<chart>`; for a registry, `helm pull` with that registry configuration.
 * Only file names reach the arguments, never a credential.
 */
export function pullCommands(source: ChartSource, destination: string, config?: HelmConfigFiles): string[][] {
  const location = required(source, 'location');
  // --prov: the provenance file too, verified afterwards (pulledChart), so that a failed
  // verification is told from a failed pull.
  const provenance = source.verify ? ['--prov'] : [];
  const pulled = ['--destination', destination, ...versionArgs(source), ...provenance];
  if (source.type === 'oci') {
    const registry = config ? ['--registry-config', config.registry] : [];
    return [['pull', location, ...pulled, ...registry]];
  }
  const chart = required(source, 'chart');
  if (!config) return [['pull', chart, '--repo', location, ...pulled]];
  const repository = [
    '--repository-config',
    config.repositories,
    '--repository-cache',
    config.repositoryCache,
  ];
  return [
    ['repo', 'update', ...repository],
    ['pull', `${PRIVATE_REPOSITORY}/${chart}`, ...pulled, ...repository],
  ];
}

/**
 * `repo` and `oci`: `helm pull` (pullCommands) into a fresh temporary directory, with
 * `credentials` written for helm in a private directory (writeHelmCredentials) when given; then
 * the archive is moved to `<cache>/<file name>-<digest prefix>.tgz` and both directories are
 * removed. Returns that archive and the sha256 of its bytes. With `verified`, the archive is
 * verified against the provenance file pulled with it (helm only warns when there is none)
 * before it is moved.
 */
async function pulledChart(
  source: ChartSource,
  credentials?: SourceCredentials,
  verified?: Verification,
): Promise<LocalChart> {
  const cache = await cacheDir();
  const destination = await mkdtemp(path.join(cache, '.pull-'));
  const env = source.proxy_server === undefined ? undefined : helmProxyEnv(source.proxy_server);
  let said = '';
  const pull = async (config?: HelmConfigFiles) => {
    for (const args of pullCommands(source, destination, config))
      said = (await runHelm(args, undefined, env)).stderr;
  };
  try {
    if (credentials)
      await inPrivateDirectory(async (dir) => pull(await writeHelmCredentials(source, credentials, dir)));
    else await pull();
    const archives = (await readdir(destination)).filter((name) => name.endsWith('.tgz'));
    if (archives.length !== 1) {
      throw new Error(
        `helm pull of ${describeSource(source)} left ${archives.length} archives, expected one`,
      );
    }
    const pulled = path.join(destination, archives[0]);
    if (verified) {
      const provenance = await readFile(`${pulled}.prov`).catch(() => undefined);
      if (!provenance)
        throw chartUnverified(
          `${verified.what}: no provenance file: ${tail(said) || 'helm pull found none'}`,
        );
      await verifyProvenance(pulled, archives[0], provenance, verified.keyring, verified.what);
    }
    const contentDigest = await fileDigest(pulled);
    const ref = path.join(cache, `${archives[0].slice(0, -'.tgz'.length)}-${contentDigest.slice(0, 16)}.tgz`);
    await rename(pulled, ref);
    return { ref, contentDigest };
  } catch (err) {
    if (err instanceof ApplicationFailure && PULL_UNAUTHORIZED.test(err.message))
      throw sourceUnauthorized(source, credentials, err.message);
    throw isPullNotFound(err) ? chartNotFound(`${describeSource(source)}: ${err.message}`) : err;
  } finally {
    await rm(destination, { recursive: true, force: true });
  }
}

/**
 * Whether helm pull failed because the chart is not there: helm's own ChartNotFound, or what
 * helm leaves retryable although retrying cannot help (a missing OCI tag or repository, a
 * repository without an index).
 */
function isPullNotFound(err: unknown): err is ApplicationFailure {
  if (!(err instanceof ApplicationFailure)) return false;
  if (err.type === NonRetryable.ChartNotFound) return true;
  return err.type === HELM_COMMAND_FAILED && PULL_NOT_FOUND.test(err.message);
}

/**
 * `git`: `git init`, a depth-1 fetch of `reference` (default HEAD), with `credentials` when
 * given, through `proxy_server` when set (gitFetchEnv), and a checkout of it in a fresh temporary directory; `.git` is then
 * removed and the tree renamed to `<cache>/git-<commit>/` (kept from an earlier call when it
 * exists). Returns `<that>/<subpath>` and its tree digest.
 */
async function gitChart(source: ChartSource, credentials?: SourceCredentials): Promise<LocalChart> {
  const location = required(source, 'location');
  const reference = source.reference || 'HEAD';
  refuseOption('reference', reference);
  const cache = await cacheDir();
  const temporary = await mkdtemp(path.join(cache, '.git-'));
  try {
    await git(temporary, ['init', '-q']);
    const fetchArgs = ['fetch', '-q', '--depth', '1', '--', location, reference];
    const env = gitFetchEnv(source, credentials);
    const fetched = await runTool(toolPath('git'), fetchArgs, { cwd: temporary, env });
    if (fetched.code !== 0) {
      const from = `${withoutCredentials(location)}${throughProxy(source)}`;
      const what = `git fetch of ${reference} from ${from} failed (exit ${fetched.code})`;
      const message = `${what}: ${tail(fetched.stderr)}`;
      if (GIT_UNAUTHORIZED.test(fetched.stderr)) throw sourceUnauthorized(source, credentials, message);
      throw GIT_NOT_FOUND.test(fetched.stderr) ? chartNotFound(message) : new Error(message);
    }
    await git(temporary, ['checkout', '-q', 'FETCH_HEAD']);
    const commit = (await git(temporary, ['rev-parse', 'HEAD'])).trim();
    await rm(path.join(temporary, '.git'), { recursive: true, force: true });
    const tree = await settle(temporary, path.join(cache, `git-${commit}`));
    const ref = inside(source, 'subpath', tree, source.subpath);
    await requireChartDirectory(ref, source);
    return { ref, contentDigest: await directoryDigest(ref, await fetchedTree(source, tree)) };
  } finally {
    await rm(temporary, { recursive: true, force: true });
  }
}

/**
 * The environment of the `git fetch` of `source`: its `credentials` (gitCredentialConfig), sent
 * to its location only, and its `proxy_server` (gitProxy), for this one fetch.
 */
export function gitFetchEnv(source: ChartSource, credentials?: SourceCredentials): Record<string, string> {
  const location = source.location ?? '';
  const proxy = source.proxy_server === undefined ? undefined : gitProxy(source.proxy_server);
  const config = { ...(credentials && gitCredentialConfig(location, credentials)), ...proxy?.config };
  return { ...gitConfigEnv(config), ...proxy?.env };
}

/** Runs git in `cwd`; returns its stdout, or throws a retryable error with git's last lines. */
async function git(cwd: string, args: string[]): Promise<string> {
  const result = await runTool(toolPath('git'), args, { cwd });
  if (result.code !== 0) {
    throw new Error(`git ${args[0]} failed (exit ${result.code}): ${tail(result.stderr)}`);
  }
  return result.stdout;
}

/** The directory a chart must stay in (a real path), how a failure names it, and whose chart it is. */
export interface Confinement {
  source: ChartSource;
  fence: string;
  name: string;
}

/** A fetched chart stays inside what was fetched (`tree`). */
async function fetchedTree(source: ChartSource, tree: string): Promise<Confinement> {
  return { source, fence: await realpath(tree), name: 'the fetched chart' };
}

/**
 * The content digest of a chart directory: `treeDigest` of every regular file under `dir`
 * (symbolic links followed, as helm does). A directory or link that leads outside
 * `confine.fence` (the chart's own path included) fails as `ChartNotFound`: a chart must not
 * read the worker's own files.
 */
export async function directoryDigest(dir: string, confine: Confinement): Promise<string> {
  const { fence, name: fenceName } = confine;
  const refuse = (why: string) =>
    chartNotFound(`${describeSource(confine.source)}: ${why}, outside ${fenceName}`);
  const files: TreeFile[] = [];
  const visit = async (current: string, relative: string, ancestors: ReadonlySet<string>): Promise<void> => {
    const real = await realpath(current);
    if (!isWithin(fence, real)) throw refuse(`${current} leads to ${real}`);
    if (ancestors.has(real)) return; // a link back up the tree
    const below = new Set(ancestors).add(real);
    for (const entry of await readdir(current, { withFileTypes: true })) {
      const full = path.join(current, entry.name);
      const name = relative ? `${relative}/${entry.name}` : entry.name;
      let kind: 'dir' | 'file' | 'other' = entry.isDirectory() ? 'dir' : entry.isFile() ? 'file' : 'other';
      if (entry.isSymbolicLink()) {
        const target = await realpath(full).catch(() => undefined);
        if (target === undefined) continue; // a dangling link holds no content
        if (!isWithin(fence, target)) {
          throw refuse(`${name} in ${dir} is a symbolic link to ${target}`);
        }
        const info = await stat(target);
        kind = info.isDirectory() ? 'dir' : info.isFile() ? 'file' : 'other';
      }
      if (kind === 'dir') await visit(full, name, below);
      else if (kind === 'file') files.push({ path: name, content: await readFile(full) });
    }
  };
  await visit(dir, '', new Set());
  return treeDigest(files);
}

/** sha256 hex of a file's bytes, streamed. */
async function fileDigest(file: string): Promise<string> {
  const hash = createHash('sha256');
  for await (const chunk of createReadStream(file)) hash.update(chunk as Buffer);
  return hash.digest('hex');
}

/**
 * Renames the finished `temporary` directory to `target`, or keeps `target` when another call
 * got there first with the same content. Returns `target`.
 */
export async function settle(temporary: string, target: string): Promise<string> {
  try {
    await rename(temporary, target);
  } catch (err) {
    const code = (err as NodeJS.ErrnoException).code;
    if ((code !== 'ENOTEMPTY' && code !== 'EEXIST') || !(await isDirectory(target))) throw err;
  }
  return target;
}

/** Creates the chart cache directory when missing; returns its absolute path. */
export async function cacheDir(): Promise<string> {
  const dir = path.resolve(
    variable(process.env, 'ARMADA_CHART_CACHE') || path.join(tmpdir(), 'armada-charts'),
  );
  await mkdir(dir, { recursive: true });
  return dir;
}

/** `root` joined with `relative` (the source's `field`); a value that climbs out of `root` is refused. */
function inside(source: ChartSource, field: 'location' | 'subpath', root: string, relative?: string): string {
  if (!relative) return root;
  const joined = path.resolve(root, relative);
  if (!isWithin(root, joined)) {
    throw chartNotFound(
      `${describeSource(source)}: source.${field} ${quoted(relative)} leads outside ${root}`,
    );
  }
  return joined;
}

function isWithin(root: string, candidate: string): boolean {
  const relative = path.relative(root, candidate);
  return (
    relative === '' ||
    (relative !== '..' && !relative.startsWith(`..${path.sep}`) && !path.isAbsolute(relative))
  );
}

/** Refuses a directory that is missing or has no Chart.yaml, naming the resolved path. */
async function requireChartDirectory(dir: string, source: ChartSource): Promise<void> {
  if (!(await isDirectory(dir)))
    throw chartNotFound(`${describeSource(source)}: chart directory ${dir} not found`);
  const manifest = await stat(path.join(dir, 'Chart.yaml')).catch(() => undefined);
  if (!manifest?.isFile()) throw chartNotFound(`${describeSource(source)}: ${dir} has no Chart.yaml`);
}

async function isDirectory(file: string): Promise<boolean> {
  return (await stat(file).catch(() => undefined))?.isDirectory() ?? false;
}

/** A source field the schema requires for this type; an option-like value is refused unless local. */
function required(source: ChartSource, field: 'location' | 'chart'): string {
  const value = source[field];
  if (!value) throw chartNotFound(`source.${field} is required when source.type is ${source.type}`);
  if (source.type !== 'local') refuseOption(field, value);
  return value;
}

/** A value starting with `-` would be read as an option by helm or git; it never names a chart. */
function refuseOption(field: string, value: string): void {
  if (value.startsWith('-')) throw chartNotFound(`source.${field} must not start with "-": ${value}`);
}

function versionArgs(source: ChartSource): string[] {
  if (!source.version) return [];
  refuseOption('version', source.version);
  return ['--version', source.version];
}

export function describeSource(source: ChartSource): string {
  const where = source.type === 'repo' ? `${source.chart} from ${source.location}` : source.location;
  const version = source.version ? ` version ${source.version}` : '';
  const reference = source.reference ? `@${source.reference}` : '';
  const subpath = source.subpath ? ` (subpath ${source.subpath})` : '';
  return `${source.type} chart ${withoutCredentials(where ?? '')}${reference}${version}${subpath}${throughProxy(source)}`;
}

/** How a failure says that the fetch went through a proxy: ` through proxy <URL without credentials>`. */
function throughProxy(source: ChartSource): string {
  return source.proxy_server ? ` through proxy ${withoutCredentials(source.proxy_server)}` : '';
}

export function chartNotFound(message: string): ApplicationFailure {
  return ApplicationFailure.create({ type: NonRetryable.ChartNotFound, nonRetryable: true, message });
}

/**
 * The server of `source` refused it (HTTP 401 or 403): with `credentials`, those; without, it
 * wants some. Retrying cannot help until the Secret or the source changes.
 */
function sourceUnauthorized(
  source: ChartSource,
  credentials: SourceCredentials | undefined,
  detail: string,
): ApplicationFailure {
  const why = credentials
    ? `the server refused the credentials of ${credentials.from} (source.secret_ref)`
    : 'the server asks for credentials: set source.secret_ref to a Secret with keys username and password';
  return ApplicationFailure.create({
    type: NonRetryable.SourceUnauthorized,
    nonRetryable: true,
    message: `${describeSource(source)}: ${why}: ${detail}`,
  });
}

/**
 * fetch refuses URLs with credentials in them; `https://user:password@host/chart.tgz` becomes the
 * URL without them and an HTTP Basic Authorization header (dropped by fetch on a redirect to
 * another origin). `credentials` from `source.secret_ref` win over the URL's.
 */
function basicAuth(
  location: string,
  credentials?: SourceCredentials,
): { href: string; headers: Record<string, string> } {
  const url = URL.canParse(location) ? new URL(location) : undefined;
  if (url?.protocol !== 'http:' && url?.protocol !== 'https:') {
    throw chartNotFound(`chart archive location ${withoutCredentials(location)} is not an http(s) URL`);
  }
  const inUrl = url.username || url.password;
  const user =
    credentials ??
    (inUrl
      ? { username: decodeURIComponent(url.username), password: decodeURIComponent(url.password) }
      : undefined);
  if (!user) return { href: location, headers: {} };
  url.username = '';
  url.password = '';
  return { href: url.href, headers: { authorization: basicAuthorization(user) } };
}

function reason(err: unknown): string {
  if (!(err instanceof Error)) return String(err);
  const cause = err.cause instanceof Error ? `: ${err.cause.message}` : '';
  return `${err.message}${cause}`;
}

function tail(text: string): string {
  return text.trimEnd().split('\n').slice(-FAILURE_TAIL_LINES).join('\n');
}

/**
 * Runs git or tar as an activity step. git never prompts for credentials, and speaks only the
 * transports a git source may name (api/source-location.ts): a location that slipped past the
 * checks still cannot reach file://, ext:: or git://.
 */
function runTool(
  file: string,
  args: readonly string[],
  opts: { cwd?: string; env?: Record<string, string> } = {},
): Promise<ProcessResult> {
  const env = { ...process.env, GIT_TERMINAL_PROMPT: '0', GIT_ALLOW_PROTOCOL: 'https:http:ssh', ...opts.env };
  return runProcess(file, args, { cwd: opts.cwd, env }).catch((err: unknown) => {
    if ((err as NodeJS.ErrnoException).code === undefined) throw err; // the activity's cancellation
    throw new Error(`cannot run ${file}: ${(err as Error).message}`);
  });
}

function throwIfCancelled(activity: Context | undefined): void {
  if (activity?.cancellationSignal.aborted) throw activity.cancellationSignal.reason;
}
