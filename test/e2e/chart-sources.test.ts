import { ApplicationFailure } from '@temporalio/common';
import { execFile } from 'node:child_process';
import { cp, mkdir, mkdtemp, readdir, readFile, rename, rm, symlink, writeFile } from 'node:fs/promises';
import type { IncomingMessage, Server, ServerResponse } from 'node:http';
import { tmpdir } from 'node:os';
import path from 'node:path';
import { promisify } from 'node:util';
import type { ChartSource } from '../../api/chart';
import { chartOnThisWorker, prepareChart as prepare } from '../../activities/charts/prepare';
import type { PrepareChartRequest, PreparedChart } from '../../core/contracts/charts';
import { NonRetryable } from '../../core/failures';
import { toolPath } from '../../activities/tools';
import {
  freePort,
  git,
  serveFiles,
  serveGit,
  startOciRegistry,
  type OciRegistry,
} from '../helpers/chart-servers';

/**
 * prepareChart against real components only: the real helm CLI packages, indexes, pushes and
 * renders; a node HTTP server on 127.0.0.1 serves the archive and the repository; a bare git
 * repository is fetched over smart HTTP (git http-backend); distribution's registry (built by npm run tools) serves OCI over TLS.
 */

const run = promisify(execFile);
const helloChart = path.resolve(__dirname, '../../examples/charts/hello');
const realHelm = toolPath('helm');

/** Environment this file changes, restored afterwards. */
const ENV_KEYS = ['ARMADA_CHARTS_ROOT', 'ARMADA_CHART_CACHE', 'ARMADA_HELM'] as const;
const savedEnv = Object.fromEntries(ENV_KEYS.map((key) => [key, process.env[key]]));

let work: string;
let server: Server;
let baseUrl: string;
let gitServer: Server;
/** Where the bare repositories under `<work>/git` are served. */
let gitBase: string;
let gitUrl: string;
/** A chart directory copied from examples/charts/hello that tests may edit: `<work>/local/charts/hello`. */
let localChart: string;
/** `hello` 0.1.0 as helm packages it. */
let packaged: string;
/** `hello` 0.2.0 with replicaCount 4 in values.yaml: the "changed chart". */
let packagedChanged: string;

async function helm(...args: string[]): Promise<string> {
  const { stdout } = await run(toolPath('helm'), args);
  return stdout;
}

/**
 * Points ARMADA_HELM at a small script that runs the real helm with `env` added. Jest gives
 * each test file a copy of process.env that child processes never see, so this is how helm
 * (spawned by runHelm) gets its own cache and config homes and, for OCI, the test's certificate
 * as its trust store, as a worker image would have it.
 */
async function useHelmWith(env: Record<string, string>): Promise<void> {
  const script = path.join(work, 'bin', 'helm');
  const exports = Object.entries(env).map(([key, value]) => `export ${key}='${value}'`);
  await mkdir(path.dirname(script), { recursive: true });
  await writeFile(script, ['#!/bin/sh', ...exports, `exec '${realHelm}' "$@"`, ''].join('\n'), {
    mode: 0o755,
  });
  process.env.ARMADA_HELM = script;
}

/** Replaces a file atomically, so the HTTP server never serves half of it. */
async function replaceFile(target: string, from: string): Promise<void> {
  const temporary = `${target}.new`;
  await cp(from, temporary);
  await rename(temporary, target);
}

/** What `/private/` asks for, as a user writes it in a URL and as HTTP Basic sends it. */
const PRIVATE_USER = {
  inUrl: 'armada:p%40ss',
  header: `Basic ${Buffer.from('armada:p@ss').toString('base64')}`,
};

/**
 * The routes of the chart server besides its files: `/private/<file>` only with PRIVATE_USER's
 * credentials (else 401), `/status/500` answers 500.
 */
function privateAndBroken(pathname: string, req: IncomingMessage, res: ServerResponse): string | undefined {
  if (pathname === '/status/500') {
    res.writeHead(500).end('broken on purpose');
    return undefined;
  }
  if (!pathname.startsWith('/private/')) return pathname;
  if (req.headers.authorization === PRIVATE_USER.header) return pathname.slice('/private'.length);
  res.writeHead(401, { 'www-authenticate': 'Basic realm="charts"' }).end();
  return undefined;
}

/** Copies the example chart to `dir` with another version and replicaCount, and packages it to `out`. */
async function packageChanged(dir: string, out: string): Promise<string> {
  await cp(helloChart, dir, { recursive: true });
  const chartYaml = await readFile(path.join(dir, 'Chart.yaml'), 'utf8');
  await writeFile(path.join(dir, 'Chart.yaml'), chartYaml.replace(/^version: .*$/m, 'version: 0.2.0'));
  const values = await readFile(path.join(dir, 'values.yaml'), 'utf8');
  await writeFile(path.join(dir, 'values.yaml'), values.replace(/^replicaCount: .*$/m, 'replicaCount: 4'));
  await helm('package', dir, '--destination', out);
  return path.join(out, 'hello-0.2.0.tgz');
}

/**
 * The properties every source must have: an absolute ref that `helm template` renders into the
 * Deployment, the same answer for the same request, and another digest (same ref) for other values.
 */
async function expectPreparedWell(source: ChartSource): Promise<PreparedChart & { ref: string }> {
  const first = await prepareChart({ source, values: { replicaCount: 2 } });
  const again = await prepareChart({ source, values: { replicaCount: 2 } });
  const otherValues = await prepareChart({ source, values: { replicaCount: 3 } });

  expect(path.isAbsolute(first.ref)).toBe(true);
  expect(first.digest).toMatch(/^hmac-sha256:[0-9a-f]{64}$/);
  expect(again).toEqual(first);
  expect(otherValues.ref).toBe(first.ref);
  expect(otherValues.digest).not.toBe(first.digest);
  expect(await helm('template', 'x', first.ref, '--set', 'replicaCount=3')).toMatch(
    /^kind: Deployment\n[\s\S]*^ {2}replicas: 3$/m,
  );
  return first;
}

/** prepareChart, and where the chart then is on this worker (what most cases look at). */
async function prepareChart(req: PrepareChartRequest): Promise<PreparedChart & { ref: string }> {
  const prepared = await prepare(req);
  return {
    ...prepared,
    ref: await chartOnThisWorker({ source: req.source, contentDigest: prepared.contentDigest }),
  };
}

/** What prepareChart failed with; fails the test when it succeeded. */
async function failureOf(source: ChartSource): Promise<Error> {
  return prepareChart({ source }).then(
    (prepared) => {
      throw new Error(`prepareChart succeeded: ${JSON.stringify(prepared)}`);
    },
    (err: Error) => err,
  );
}

/** helm's cache, config and data under the test's directory, never the user's. */
function helmHomes(): Record<string, string> {
  return {
    HELM_CACHE_HOME: path.join(work, 'helm', 'cache'),
    HELM_CONFIG_HOME: path.join(work, 'helm', 'config'),
    HELM_DATA_HOME: path.join(work, 'helm', 'data'),
  };
}

beforeAll(async () => {
  work = await mkdtemp(path.join(tmpdir(), 'armada-chart-sources-'));
  process.env.ARMADA_CHART_CACHE = path.join(work, 'cache');
  await useHelmWith(helmHomes());

  localChart = path.join(work, 'local', 'charts', 'hello');
  await cp(helloChart, localChart, { recursive: true });
  process.env.ARMADA_CHARTS_ROOT = path.join(work, 'local');

  await helm('package', helloChart, '--destination', path.join(work, 'pkg'));
  packaged = path.join(work, 'pkg', 'hello-0.1.0.tgz');
  packagedChanged = await packageChanged(path.join(work, 'changed', 'hello'), path.join(work, 'pkg'));

  const www = path.join(work, 'www');
  await mkdir(path.join(www, 'repo'), { recursive: true });
  await cp(packaged, path.join(www, 'hello.tgz'));
  await cp(packaged, path.join(www, 'repo', 'hello-0.1.0.tgz'));
  await helm('repo', 'index', path.join(www, 'repo'));
  ({ server, url: baseUrl } = await serveFiles(www, privateAndBroken));

  // A bare repository with the chart under charts/hello: tag v0.1.0 and branch main on one commit,
  // branch evil with a values.yaml that links to a file of the worker and charts/linked, a link
  // to a chart directory of the worker.
  const bare = path.join(work, 'git', 'charts.git');
  const tree = path.join(work, 'git', 'tree');
  await mkdir(bare, { recursive: true });
  await git(bare, 'init', '-q', '--bare');
  await cp(helloChart, path.join(tree, 'charts', 'hello'), { recursive: true });
  await writeFile(path.join(tree, 'README.md'), 'charts\n');
  await git(tree, 'init', '-q', '-b', 'main');
  await git(tree, 'add', '-A');
  await git(tree, 'commit', '-q', '-m', 'hello 0.1.0');
  await git(tree, 'tag', '-a', 'v0.1.0', '-m', 'hello 0.1.0');
  await git(tree, 'checkout', '-q', '-b', 'evil');
  await rm(path.join(tree, 'charts', 'hello', 'values.yaml'));
  await symlink('/etc/passwd', path.join(tree, 'charts', 'hello', 'values.yaml'));
  await symlink(helloChart, path.join(tree, 'charts', 'linked'));
  await git(tree, 'add', '-A');
  await git(tree, 'commit', '-q', '-am', 'read the worker');
  await git(tree, 'checkout', '-q', 'main');
  await git(tree, 'push', '-q', bare, 'main', 'evil', 'v0.1.0');
  ({ server: gitServer, url: gitBase } = await serveGit(path.dirname(bare)));
  gitUrl = `${gitBase}/charts.git`;

  // A link under the charts root to a chart directory outside it.
  await symlink(helloChart, path.join(work, 'local', 'charts', 'elsewhere'));
});

afterAll(async () => {
  for (const open of [server, gitServer]) {
    if (!open) continue;
    open.closeAllConnections();
    await new Promise((resolve) => open.close(resolve));
  }
  for (const key of ENV_KEYS) {
    if (savedEnv[key] === undefined) delete process.env[key];
    else process.env[key] = savedEnv[key];
  }
  if (work) await rm(work, { recursive: true, force: true });
});

describe('prepareChart on real helm, git, tar and HTTP', () => {
  it.each<[string, () => ChartSource]>([
    [
      'a local directory under ARMADA_CHARTS_ROOT',
      () => ({ type: 'local', location: 'charts', subpath: 'hello' }),
    ],
    ['a .tgz URL', () => ({ type: 'tar', location: `${baseUrl}/hello.tgz` })],
    [
      'a directory inside a .tgz URL',
      () => ({ type: 'tar', location: `${baseUrl}/hello.tgz`, subpath: 'hello' }),
    ],
    [
      'a .tgz URL with a user name and password in it',
      () => ({
        type: 'tar',
        location: `${baseUrl.replace('//', `//${PRIVATE_USER.inUrl}@`)}/private/hello.tgz`,
      }),
    ],
    [
      'the latest chart of a repository',
      () => ({ type: 'repo', location: `${baseUrl}/repo`, chart: 'hello' }),
    ],
    [
      'a pinned version of a repository chart',
      () => ({ type: 'repo', location: `${baseUrl}/repo`, chart: 'hello', version: '0.1.0' }),
    ],
    [
      'a git branch over HTTP',
      () => ({ type: 'git', location: gitUrl, reference: 'main', subpath: 'charts/hello' }),
    ],
    [
      'an annotated git tag over HTTP',
      () => ({ type: 'git', location: gitUrl, reference: 'v0.1.0', subpath: 'charts/hello' }),
    ],
  ])(
    'prepares %s that helm renders, with a digest that is stable and follows the values',
    async (_name, source) => {
      await expectPreparedWell(source());
    },
  );

  it('resolves a local location against the working directory when ARMADA_CHARTS_ROOT is unset', async () => {
    delete process.env.ARMADA_CHARTS_ROOT;
    try {
      const location = path.relative(process.cwd(), helloChart);
      const prepared = await expectPreparedWell({ type: 'local', location });
      expect(prepared.ref).toBe(helloChart);
    } finally {
      process.env.ARMADA_CHARTS_ROOT = path.join(work, 'local');
    }
  });

  it('points a local chart at the directory itself and changes its digest when values.yaml is edited', async () => {
    const source: ChartSource = { type: 'local', location: 'charts', subpath: 'hello' };
    const before = await prepareChart({ source, values: { a: 1 } });
    expect(before.ref).toBe(localChart);

    const valuesFile = path.join(localChart, 'values.yaml');
    await writeFile(valuesFile, `${await readFile(valuesFile, 'utf8')}extra: true\n`);
    const after = await prepareChart({ source, values: { a: 1 } });
    expect(after.ref).toBe(before.ref);
    expect(after.digest).not.toBe(before.digest);
  });

  it('tells a git tag from a branch that moved on: the branch digest changes, the tag keeps its own', async () => {
    const branch: ChartSource = { type: 'git', location: gitUrl, reference: 'main', subpath: 'charts/hello' };
    const tag: ChartSource = { ...branch, reference: 'v0.1.0' };
    const branchBefore = await prepareChart({ source: branch });
    const tagBefore = await prepareChart({ source: tag });
    expect(tagBefore).toEqual(branchBefore); // one commit, one checkout

    const tree = path.join(work, 'git', 'tree');
    await writeFile(path.join(tree, 'charts', 'hello', 'values.yaml'), 'replicaCount: 5\n', { flag: 'a' });
    await git(tree, 'commit', '-q', '-am', 'five replicas');
    await git(tree, 'push', '-q', path.join(work, 'git', 'charts.git'), 'main');

    const branchAfter = await prepareChart({ source: branch });
    expect(branchAfter.digest).not.toBe(branchBefore.digest);
    expect(branchAfter.ref).not.toBe(branchBefore.ref);
    expect(await readFile(path.join(branchAfter.ref, 'values.yaml'), 'utf8')).toMatch(/replicaCount: 5/);
    expect(await prepareChart({ source: tag })).toEqual(tagBefore);
    await expect(readdir(path.dirname(path.dirname(branchAfter.ref)))).resolves.not.toContain('.git');
  });

  it('changes the digest of a .tgz URL, whole or by subpath, when the archive served there changes', async () => {
    const whole: ChartSource = { type: 'tar', location: `${baseUrl}/hello.tgz` };
    const bySubpath: ChartSource = { ...whole, subpath: 'hello' };
    const served = path.join(work, 'www', 'hello.tgz');
    const before = [await prepareChart({ source: whole }), await prepareChart({ source: bySubpath })];
    try {
      await replaceFile(served, packagedChanged);
      const after = [await prepareChart({ source: whole }), await prepareChart({ source: bySubpath })];
      expect(after[0].digest).not.toBe(before[0].digest);
      expect(after[1].digest).not.toBe(before[1].digest);
      expect(await readFile(after[0].ref)).toEqual(await readFile(packagedChanged));
      expect(await readFile(path.join(after[1].ref, 'Chart.yaml'), 'utf8')).toMatch(/^version: 0\.2\.0$/m);
    } finally {
      await replaceFile(served, packaged);
    }
    expect(await prepareChart({ source: whole })).toEqual(before[0]);
  });

  it('follows a new repository version when unpinned and stays on a pinned one', async () => {
    const latest: ChartSource = { type: 'repo', location: `${baseUrl}/repo`, chart: 'hello' };
    const pinned: ChartSource = { ...latest, version: '0.1.0' };
    const latestBefore = await prepareChart({ source: latest });
    const pinnedBefore = await prepareChart({ source: pinned });
    expect(latestBefore).toEqual(pinnedBefore);
    expect(path.basename(latestBefore.ref)).toMatch(/^hello-0\.1\.0-[0-9a-f]{16}\.tgz$/);

    await cp(packagedChanged, path.join(work, 'www', 'repo', 'hello-0.2.0.tgz'));
    await helm('repo', 'index', path.join(work, 'www', 'repo'));

    const latestAfter = await prepareChart({ source: latest });
    expect(latestAfter.digest).not.toBe(latestBefore.digest);
    expect(path.basename(latestAfter.ref)).toMatch(/^hello-0\.2\.0-[0-9a-f]{16}\.tgz$/);
    expect(await prepareChart({ source: pinned })).toEqual(pinnedBefore);
  });

  it.each<[string, () => ChartSource, () => string]>([
    [
      'a local directory that does not exist, naming the resolved path',
      () => ({ type: 'local', location: 'no/such/chart' }),
      () => path.join(work, 'local', 'no', 'such', 'chart'),
    ],
    [
      'a local directory without Chart.yaml',
      () => ({ type: 'local', location: 'charts', subpath: 'hello/templates' }),
      () => `${path.join(localChart, 'templates')} has no Chart.yaml`,
    ],
    [
      'a subpath that leads out of its location',
      () => ({ type: 'local', location: 'charts/hello', subpath: '../../..' }),
      () => `source.subpath "../../.." must not contain a '..' segment`,
    ],
    [
      'an absolute local location',
      () => ({ type: 'local', location: helloChart }),
      () => `source.location "${helloChart}" must be relative to the worker's charts root`,
    ],
    [
      'a local location that climbs out of the charts root',
      () => ({ type: 'local', location: '../../examples/charts/hello' }),
      () => 'source.location "../../examples/charts/hello" must not contain a \'..\' segment',
    ],
    [
      'a local location that is a symbolic link out of the charts root',
      () => ({ type: 'local', location: 'charts/elsewhere' }),
      () => `leads to ${helloChart}, outside the charts root`,
    ],
    [
      'a .tgz URL that answers 404',
      () => ({ type: 'tar', location: `${baseUrl}/missing.tgz` }),
      () => 'HTTP 404',
    ],
    [
      'a tar location that is not an http(s) URL',
      () => ({ type: 'tar', location: 'ftp://127.0.0.1/hello.tgz' }),
      () => 'not an http(s) URL',
    ],
    [
      'a subpath the archive does not hold',
      () => ({ type: 'tar', location: `${baseUrl}/hello.tgz`, subpath: 'nothing' }),
      () => 'not found',
    ],
    [
      'a chart the repository does not list',
      () => ({ type: 'repo', location: `${baseUrl}/repo`, chart: 'absent' }),
      () => 'absent',
    ],
    [
      'a repository version that does not exist',
      () => ({ type: 'repo', location: `${baseUrl}/repo`, chart: 'hello', version: '9.9.9' }),
      () => '9.9.9',
    ],
    [
      'a repository URL without an index',
      () => ({ type: 'repo', location: `${baseUrl}/nothing-here`, chart: 'hello' }),
      () => '404',
    ],
    [
      'a git reference that does not exist, with git’s own words',
      () => ({ type: 'git', location: gitUrl, reference: 'no-such-branch', subpath: 'charts/hello' }),
      () => "couldn't find remote ref no-such-branch",
    ],
    [
      'a git repository that does not exist',
      () => ({ type: 'git', location: `${gitBase}/absent.git` }),
      () => `repository '${gitBase}/absent.git/' not found`,
    ],
    [
      'a git repository on the worker’s disk as a file:// URL',
      () => ({ type: 'git', location: `file://${path.join(work, 'git', 'charts.git')}`, reference: 'main' }),
      () => 'must be an https://, http:// or ssh:// URL or user@host:path',
    ],
    [
      'a git repository on the worker’s disk as a path',
      () => ({ type: 'git', location: path.join(work, 'git', 'charts.git'), reference: 'main' }),
      () => 'must be an https://, http:// or ssh:// URL or user@host:path',
    ],
    [
      'a git subpath without a chart',
      () => ({ type: 'git', location: gitUrl, reference: 'main', subpath: 'charts' }),
      () => 'has no Chart.yaml',
    ],
    [
      'a fetched chart with a symbolic link to a file of the worker',
      () => ({ type: 'git', location: gitUrl, reference: 'evil', subpath: 'charts/hello' }),
      () => 'outside the fetched chart',
    ],
    [
      'a fetched chart whose subpath is a symbolic link to a directory of the worker',
      () => ({ type: 'git', location: gitUrl, reference: 'evil', subpath: 'charts/linked' }),
      () => 'outside the fetched chart',
    ],
    [
      'a git reference that would be read as an option',
      () => ({ type: 'git', location: gitUrl, reference: '--upload-pack=touch /tmp/x' }),
      () => 'must not start with "-"',
    ],
  ])('fails for good (ChartNotFound) on %s', async (_name, source, text) => {
    const err = await failureOf(source());
    expect(err).toBeInstanceOf(ApplicationFailure);
    expect(err).toMatchObject({ type: NonRetryable.ChartNotFound, nonRetryable: true });
    expect(err.message).toContain(text());
  });

  it.each<[string, () => Promise<string>, string]>([
    ['a .tgz URL that answers 500', async () => `${baseUrl}/status/500`, 'HTTP 500'],
    [
      'a .tgz URL where nothing listens',
      async () => `http://127.0.0.1:${await freePort()}/hello.tgz`,
      'fetch failed',
    ],
  ])('fails with a plain, retryable error naming the URL on %s', async (_name, url, text) => {
    const location = await url();
    const err = await failureOf({ type: 'tar', location });
    expect(err).not.toBeInstanceOf(ApplicationFailure);
    expect(err.message).toContain(location);
    expect(err.message).toContain(text);
  });

  it('fails for good on refused credentials, showing the URL without them', async () => {
    const location = `${baseUrl.replace('//', '//armada:wrong-secret@')}/private/hello.tgz`;
    const err = await failureOf({ type: 'tar', location });
    expect(err).toMatchObject({ type: NonRetryable.SourceUnauthorized, nonRetryable: true });
    expect(err.message).toContain(`HTTP 401 from ${baseUrl}/private/hello.tgz`);
    expect(err.message).not.toContain('wrong-secret');
  });
});

describe('prepareChart on a real OCI registry (distribution registry over TLS)', () => {
  let registry: OciRegistry | undefined;
  let ociBase: string;

  beforeAll(async () => {
    registry = await startOciRegistry(path.join(work, 'oci'));
    // helm (Go) trusts the registry's certificate through SSL_CERT_FILE; prepareChart needs no flag.
    await useHelmWith({ ...helmHomes(), SSL_CERT_FILE: registry.cert });
    ociBase = registry.base;
    await helm('push', packaged, ociBase);
  });

  afterAll(async () => {
    await registry?.stop();
  });

  it.each<[string, (base: string) => ChartSource]>([
    ['the latest tag of an OCI chart', (base) => ({ type: 'oci', location: `${base}/hello` })],
    ['a pinned OCI chart version', (base) => ({ type: 'oci', location: `${base}/hello`, version: '0.1.0' })],
  ])(
    'prepares %s that helm renders, with a digest that is stable and follows the values',
    async (_name, source) => {
      await expectPreparedWell(source(ociBase));
    },
  );

  it('follows a newly pushed version when unpinned and stays on a pinned one', async () => {
    const latest: ChartSource = { type: 'oci', location: `${ociBase}/hello` };
    const pinned: ChartSource = { ...latest, version: '0.1.0' };
    const latestBefore = await prepareChart({ source: latest });
    const pinnedBefore = await prepareChart({ source: pinned });
    expect(latestBefore).toEqual(pinnedBefore);

    await helm('push', packagedChanged, ociBase);
    const latestAfter = await prepareChart({ source: latest });
    expect(latestAfter.digest).not.toBe(latestBefore.digest);
    expect(path.basename(latestAfter.ref)).toMatch(/^hello-0\.2\.0-[0-9a-f]{16}\.tgz$/);
    expect(await prepareChart({ source: pinned })).toEqual(pinnedBefore);
  });

  it.each<[string, (base: string) => ChartSource]>([
    ['a tag that does not exist', (base) => ({ type: 'oci', location: `${base}/hello`, version: '9.9.9' })],
    ['a repository that does not exist', (base) => ({ type: 'oci', location: `${base}/absent` })],
  ])('fails for good (ChartNotFound) on %s', async (_name, source) => {
    const err = await failureOf(source(ociBase));
    expect(err).toMatchObject({ type: NonRetryable.ChartNotFound, nonRetryable: true });
  });
});

describe('the chart cache after all of the above', () => {
  it('holds no temporary files or directories', async () => {
    const leftovers = (await readdir(path.join(work, 'cache'))).filter(
      (name) => name.startsWith('.') || name.includes('.tmp'),
    );
    expect(leftovers).toEqual([]);
  });
});
