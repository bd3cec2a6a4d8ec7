import bcrypt from 'bcryptjs';
import { execFile, spawn } from 'node:child_process';
import { cp, mkdir, mkdtemp, readFile, writeFile } from 'node:fs/promises';
import {
  createServer,
  request as httpRequest,
  type IncomingMessage,
  type Server,
  type ServerResponse,
} from 'node:http';
import { connect, createServer as createTcpServer, type Socket } from 'node:net';
import path from 'node:path';
import { promisify } from 'node:util';
import type { ChartSource } from '../../api/chart';
import { toolPath } from '../../activities/tools';

const run = promisify(execFile);
const examples = path.resolve(__dirname, '../../examples/charts');

/** git as a user runs it: fixed identity, no personal or system configuration. */
export async function git(cwd: string, ...args: string[]): Promise<string> {
  const { stdout } = await run('git', args, {
    cwd,
    env: {
      ...process.env,
      GIT_CONFIG_GLOBAL: '/dev/null',
      GIT_CONFIG_NOSYSTEM: '1',
      GIT_AUTHOR_NAME: 'Test',
      GIT_AUTHOR_EMAIL: 'test@example.invalid',
      GIT_COMMITTER_NAME: 'Test',
      GIT_COMMITTER_EMAIL: 'test@example.invalid',
    },
  });
  return stdout;
}

/** A TCP port nothing listens on at the moment. */
export async function freePort(): Promise<number> {
  const probe = createTcpServer();
  await new Promise<void>((resolve) => probe.listen(0, '127.0.0.1', resolve));
  const address = probe.address();
  await new Promise((resolve) => probe.close(resolve));
  if (!address || typeof address === 'string') throw new Error('no port');
  return address.port;
}

/** Waits until something accepts connections on the port (up to 10 s, a try every 100 ms). */
async function listening(port: number, what: () => string): Promise<void> {
  for (let attempt = 0; attempt < 100; attempt++) {
    const open = await new Promise<boolean>((resolve) => {
      const socket = connect(port, '127.0.0.1');
      socket.once('connect', () => {
        socket.destroy();
        resolve(true);
      });
      socket.once('error', () => resolve(false));
    });
    if (open) return;
    await new Promise((resolve) => setTimeout(resolve, 100));
  }
  throw new Error(`${what()} is not listening on ${port}`);
}

/** HTTP Basic credentials a server asks for. */
export interface BasicAuth {
  username: string;
  password: string;
}

/**
 * Whether `req` carries `auth` (or nothing is asked); otherwise answers 401 with a Basic
 * challenge, as the servers helm and git meet do.
 */
function authorized(auth: BasicAuth | undefined, req: IncomingMessage, res: ServerResponse): boolean {
  const expected = auth && `Basic ${Buffer.from(`${auth.username}:${auth.password}`).toString('base64')}`;
  if (!expected || req.headers.authorization === expected) return true;
  res.writeHead(401, { 'www-authenticate': 'Basic realm="charts"' }).end('authentication required');
  return false;
}

/**
 * A certificate of its own (1 day, P-256) for `subjectAltName` (`IP:127.0.0.1`, `DNS:<name>`, or
 * several, comma-separated; the first is also its common name),
 * written with its key as `<dir>/cert.pem` and `<dir>/key.pem`; returns both paths.
 */
export async function selfSignedCertificate(
  dir: string,
  subjectAltName: string,
): Promise<{ cert: string; key: string }> {
  await mkdir(dir, { recursive: true });
  const cert = path.join(dir, 'cert.pem');
  const key = path.join(dir, 'key.pem');
  const name = subjectAltName.split(',')[0].slice(subjectAltName.indexOf(':') + 1);
  await run('openssl', [
    ...['req', '-x509', '-newkey', 'ec', '-pkeyopt', 'ec_paramgen_curve:prime256v1', '-nodes'],
    ...['-keyout', key, '-out', cert, '-days', '1'],
    ...['-subj', `/CN=${name}`, '-addext', `subjectAltName=${subjectAltName}`],
  ]);
  return { cert, key };
}

export interface OciRegistry {
  /** `oci://127.0.0.1:<port>/charts`, where `helm push` puts charts. */
  base: string;
  /** The registry's self-signed certificate: helm (Go) trusts it through SSL_CERT_FILE. */
  cert: string;
  stop(): Promise<void>;
}

/**
 * distribution's registry (built by npm run tools) on a free port of the loopback, over TLS with
 * a certificate of its own, its data under `dir`. With `auth`, it asks for that user (its
 * htpasswd authentication, which takes bcrypt hashes only) for every push and pull.
 */
export async function startOciRegistry(
  dir: string,
  { auth }: { auth?: BasicAuth } = {},
): Promise<OciRegistry> {
  await mkdir(path.join(dir, 'data'), { recursive: true });
  const { cert, key } = await selfSignedCertificate(dir, 'IP:127.0.0.1');
  const port = await freePort();
  const htpasswd = path.join(dir, 'htpasswd');
  if (auth) await writeFile(htpasswd, `${auth.username}:${await bcrypt.hash(auth.password, 10)}\n`);
  const config = path.join(dir, 'config.yml');
  await writeFile(
    config,
    [
      'version: 0.1',
      'log:',
      '  level: error',
      '  accesslog:',
      '    disabled: true',
      'storage:',
      '  filesystem:',
      `    rootdirectory: ${path.join(dir, 'data')}`,
      ...(auth ? ['auth:', '  htpasswd:', '    realm: charts', `    path: ${htpasswd}`] : []),
      'http:',
      `  addr: 127.0.0.1:${port}`,
      '  tls:',
      `    certificate: ${cert}`,
      `    key: ${key}`,
      '',
    ].join('\n'),
  );
  const child = spawn(toolPath('registry'), ['serve', config], { stdio: ['ignore', 'pipe', 'pipe'] });
  let output = '';
  child.stdout.on('data', (chunk: Buffer) => (output += chunk.toString()));
  child.stderr.on('data', (chunk: Buffer) => (output += chunk.toString()));
  const exited = new Promise<never>((_resolve, reject) => {
    child.on('error', (err) =>
      reject(new Error(`cannot run the OCI registry (npm run tools builds it): ${err.message}`)),
    );
    child.on('exit', (code) => reject(new Error(`registry exited (${code}): ${output}`)));
  });
  exited.catch(() => undefined);
  await Promise.race([exited, listening(port, () => `the registry (${output})`)]);
  return {
    base: `oci://127.0.0.1:${port}/charts`,
    cert,
    async stop() {
      if (child.exitCode !== null || child.signalCode !== null) return;
      const exit = new Promise((resolve) => child.once('exit', resolve));
      child.kill('SIGTERM');
      await exit;
    },
  };
}

/**
 * Serves the files under `root` on a free port of the loopback; anything missing is a 404.
 * `route` may answer a request itself (returning undefined) or name the path to serve instead.
 * With `auth`, every request must carry that user (else 401).
 */
export async function serveFiles(
  root: string,
  route: (pathname: string, req: IncomingMessage, res: ServerResponse) => string | undefined = (p) => p,
  { auth }: { auth?: BasicAuth } = {},
): Promise<{ server: Server; url: string }> {
  const server = createServer((req, res) => {
    if (!authorized(auth, req, res)) return;
    const pathname = route(new URL(req.url ?? '/', 'http://127.0.0.1').pathname, req, res);
    if (pathname === undefined) return;
    const file = path.join(root, path.normalize(decodeURIComponent(pathname)));
    if (!file.startsWith(root + path.sep)) {
      res.writeHead(404).end();
      return;
    }
    void readFile(file).then(
      (body) => res.writeHead(200, { 'content-type': 'application/octet-stream' }).end(body),
      () => res.writeHead(404).end('not found'),
    );
  });
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  const address = server.address();
  if (!address || typeof address === 'string') throw new Error('the HTTP server has no port');
  return { server, url: `http://127.0.0.1:${address.port}` };
}

/**
 * Serves the bare repositories under `root` over git's smart HTTP protocol on a free port of the
 * loopback, with git's own `git http-backend` run as CGI for each request (a worker may fetch
 * git only over the network: api/source-location.ts). `<url>/<name>.git` is `<root>/<name>.git`.
 * With `auth`, every request must carry that user (else 401, as a git host asks).
 */
export async function serveGit(
  root: string,
  { auth }: { auth?: BasicAuth } = {},
): Promise<{ server: Server; url: string }> {
  const server = createServer((req, res) => {
    if (!authorized(auth, req, res)) return;
    const url = new URL(req.url ?? '/', 'http://127.0.0.1');
    const cgi = spawn('git', ['http-backend'], {
      env: {
        ...process.env,
        GIT_PROJECT_ROOT: root,
        GIT_HTTP_EXPORT_ALL: '1',
        GIT_CONFIG_GLOBAL: '/dev/null',
        GIT_CONFIG_NOSYSTEM: '1',
        REQUEST_METHOD: req.method ?? 'GET',
        PATH_INFO: decodeURIComponent(url.pathname),
        QUERY_STRING: url.search.slice(1),
        CONTENT_TYPE: req.headers['content-type'] ?? '',
        REMOTE_ADDR: '127.0.0.1',
        // git sends its request bodies gzipped and asks for protocol v2 in headers.
        HTTP_CONTENT_ENCODING: req.headers['content-encoding'] ?? '',
        HTTP_GIT_PROTOCOL: String(req.headers['git-protocol'] ?? ''),
      },
      stdio: ['pipe', 'pipe', 'pipe'],
    });
    let errors = '';
    cgi.stderr.on('data', (chunk: Buffer) => (errors += chunk.toString()));
    req.pipe(cgi.stdin);
    let head = Buffer.alloc(0);
    let headersSent = false;
    cgi.stdout.on('data', (chunk: Buffer) => {
      if (headersSent) return void res.write(chunk);
      head = Buffer.concat([head, chunk]);
      const end = head.indexOf('\r\n\r\n');
      if (end < 0) return;
      const headers = head
        .subarray(0, end)
        .toString('latin1')
        .split('\r\n')
        .map((line) => [line.slice(0, line.indexOf(':')), line.slice(line.indexOf(':') + 1).trim()]);
      const status = Number(
        headers.find(([name]) => name.toLowerCase() === 'status')?.[1].split(' ')[0] ?? 200,
      );
      res.writeHead(status, Object.fromEntries(headers.filter(([name]) => name.toLowerCase() !== 'status')));
      headersSent = true;
      res.write(head.subarray(end + 4));
    });
    cgi.on('close', (code) => {
      if (!headersSent)
        res.writeHead(500).write(`git http-backend exited ${code} without a response: ${errors}`);
      res.end();
    });
  });
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  const address = server.address();
  if (!address || typeof address === 'string') throw new Error('the git HTTP server has no port');
  return { server, url: `http://127.0.0.1:${address.port}` };
}

/** An HTTP proxy of the test's own: what it was asked, and where it listens. */
export interface TestProxy {
  /** `http://127.0.0.1:<port>`, or with `user:password@` when it asks for a login. */
  url: string;
  /**
   * Every request it was asked, in order, as `GET <absolute URI>` (a plain HTTP request) or
   * `CONNECT <host>:<port>` (a tunnel), refused ones included.
   */
  requests: string[];
  close(): Promise<void>;
}

/**
 * An HTTP proxy on a free port of the loopback, as a proxy of a site would be: a request with an
 * absolute URI is forwarded, CONNECT opens a TCP tunnel. `hosts` maps names that resolve nowhere
 * to the address the proxy reaches them at, so a chart named by such a host can only have come
 * through the proxy. With `auth`, every request must carry that login in Proxy-Authorization
 * (else 407).
 */
export async function startProxy({
  hosts = {},
  auth,
}: { hosts?: Record<string, string>; auth?: BasicAuth } = {}): Promise<TestProxy> {
  const requests: string[] = [];
  /** Tunnels, which closeAllConnections no longer sees once CONNECT took their sockets. */
  const tunnels = new Set<Socket>();
  const expected = auth && `Basic ${Buffer.from(`${auth.username}:${auth.password}`).toString('base64')}`;
  const allowed = (req: IncomingMessage) => !expected || req.headers['proxy-authorization'] === expected;
  const server = createServer((req, res) => {
    requests.push(`${req.method} ${req.url}`);
    if (!allowed(req)) return void res.writeHead(407, { 'proxy-authenticate': 'Basic realm="proxy"' }).end();
    const target = URL.canParse(req.url ?? '') ? new URL(req.url!) : undefined;
    if (target?.protocol !== 'http:')
      return void res.writeHead(400).end('an absolute http:// URI is expected');
    const headers = { ...req.headers };
    delete headers['proxy-authorization'];
    const upstream = httpRequest(
      {
        host: hosts[target.hostname] ?? target.hostname,
        port: target.port || 80,
        method: req.method,
        path: `${target.pathname}${target.search}`,
        headers,
      },
      (answer) => {
        res.writeHead(answer.statusCode ?? 502, answer.headers);
        answer.pipe(res);
      },
    );
    upstream.once('error', (err) => res.writeHead(502).end(err.message));
    req.pipe(upstream);
  });
  server.on('connect', (req: IncomingMessage, client: Socket, head: Buffer) => {
    requests.push(`CONNECT ${req.url}`);
    tunnels.add(client);
    client.once('close', () => tunnels.delete(client));
    if (!allowed(req)) {
      client.end(
        'HTTP/1.1 407 Proxy Authentication Required\r\nProxy-Authenticate: Basic realm="proxy"\r\n\r\n',
      );
      return;
    }
    const [host, port] = [
      req.url!.slice(0, req.url!.lastIndexOf(':')),
      req.url!.slice(req.url!.lastIndexOf(':') + 1),
    ];
    const upstream = connect(Number(port), hosts[host] ?? host, () => {
      client.write('HTTP/1.1 200 Connection Established\r\n\r\n');
      upstream.write(head);
      upstream.pipe(client);
      client.pipe(upstream);
    });
    upstream.once('error', () => client.destroy());
    client.once('error', () => upstream.destroy());
  });
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  const address = server.address();
  if (!address || typeof address === 'string') throw new Error('the proxy has no port');
  const login = auth ? `${encodeURIComponent(auth.username)}:${encodeURIComponent(auth.password)}@` : '';
  return {
    url: `http://${login}127.0.0.1:${address.port}`,
    requests,
    async close() {
      server.closeAllConnections();
      for (const socket of tunnels) socket.destroy();
      await new Promise((resolve) => server.close(resolve));
    },
  };
}

/** A PGP key of the test's own that `helm package --sign` signs with. */
export interface SigningKey {
  /** The key's user ID, as `helm package --key` names it. */
  name: string;
  /** The secret keyring helm signs with (`gpg --export-secret-keys`: helm reads no gpg-agent). */
  secring: string;
  /** The public keyring (`gpg --export`, binary), as a `source.verify.keyring_secret` Secret holds it. */
  pubring: string;
}

/**
 * A fresh ed25519 signing key named `name`, without a passphrase, made by gpg in a GNUPGHOME of
 * its own under `dir`, exported as the keyrings helm reads.
 */
export async function signingKey(dir: string, name: string): Promise<SigningKey> {
  await mkdir(dir, { recursive: true });
  const home = await mkdtemp(path.join(dir, 'gnupg-'));
  const gpg = (...args: string[]) =>
    run('gpg', ['--batch', '--quiet', '--homedir', home, ...args], { encoding: 'buffer' }).then(
      (r) => r.stdout,
    );
  const userId = `${name} <${name}@example.invalid>`;
  await gpg('--passphrase', '', '--quick-gen-key', userId, 'ed25519', 'sign', 'never');
  const secring = path.join(home, 'secring.gpg');
  const pubring = path.join(home, 'pubring-export.gpg');
  await writeFile(secring, await gpg('--export-secret-keys'));
  await writeFile(pubring, await gpg('--export'));
  return { name, secring, pubring };
}

/** A Secret `name` holding `key`'s public keyring, as `source.verify.keyring_secret` names it. */
export async function keyringSecret(name: string, key: SigningKey) {
  const keyring = (await readFile(key.pubring)).toString('base64');
  return { apiVersion: 'v1', kind: 'Secret', metadata: { name }, data: { keyring } };
}

/** The arguments that make `helm package` sign the chart with `key`. */
export const signArgs = (key: SigningKey) => ['--sign', '--key', key.name, '--keyring', key.secring];

export type RemoteSourceType = Exclude<ChartSource['type'], 'local'>;

export interface ExampleChartSources {
  /** Where example chart `chart` (examples/charts/<chart>) is served as a source of `type`. */
  source(type: RemoteSourceType, chart: string): ChartSource;
  /** What a worker's helm needs for them: the OCI registry's certificate (SSL_CERT_FILE). */
  helmEnv: { SSL_CERT_FILE: string };
  /** Runs the helm that served them (its own homes, trusting the registry): to push more. */
  helm(...args: string[]): Promise<string>;
  /** Where the .tgz and the repository's files are served from, as `<url>/<file>`. */
  www: { dir: string; url: string };
  close(): Promise<void>;
}

/**
 * The example charts, each served as every remote source type at once, from real servers on the
 * loopback: a .tgz and a Helm repository over HTTP, an OCI registry over TLS, and a bare git
 * repository over smart HTTP (charts/<chart> on branch main). With `auth`, every server asks for
 * that user. With `sign`, each archive is signed with that key: its .prov is served beside it
 * and pushed with it.
 */
export async function serveExampleCharts(
  work: string,
  charts: string[],
  { auth, sign }: { auth?: BasicAuth; sign?: SigningKey } = {},
): Promise<ExampleChartSources> {
  const helm = async (...args: string[]) =>
    (await run(toolPath('helm'), args, { env: { ...process.env, ...ownHelm } })).stdout;
  const registry = await startOciRegistry(path.join(work, 'oci'), { auth });
  const ownHelm = {
    SSL_CERT_FILE: registry.cert,
    HELM_CACHE_HOME: path.join(work, 'helm', 'cache'),
    HELM_CONFIG_HOME: path.join(work, 'helm', 'config'),
    HELM_DATA_HOME: path.join(work, 'helm', 'data'),
  };
  if (auth) await login(registry, auth, ownHelm);
  const www = path.join(work, 'www');
  const files = await serveFiles(www, undefined, { auth });
  const archives = new Map<string, string>();
  for (const chart of charts) {
    const packaged = /Successfully packaged chart and saved it to: (.+\.tgz)/.exec(
      await helm(
        'package',
        path.join(examples, chart),
        '--destination',
        www,
        ...(sign ? signArgs(sign) : []),
      ),
    )?.[1];
    if (!packaged) throw new Error(`helm package of examples/charts/${chart} named no archive`);
    archives.set(chart, path.basename(packaged));
    await helm('push', packaged, registry.base);
  }
  await helm('repo', 'index', www, '--url', files.url);

  const bare = path.join(work, 'git', 'charts.git');
  const tree = path.join(work, 'git', 'tree');
  await mkdir(bare, { recursive: true });
  await git(bare, 'init', '-q', '--bare');
  const gitServer = await serveGit(path.dirname(bare), { auth });
  for (const chart of charts)
    await cp(path.join(examples, chart), path.join(tree, 'charts', chart), { recursive: true });
  await git(tree, 'init', '-q', '-b', 'main');
  await git(tree, 'add', '-A');
  await git(tree, 'commit', '-q', '-m', 'the example charts');
  await git(tree, 'push', '-q', bare, 'main');

  return {
    source(type, chart) {
      const archive = archives.get(chart);
      if (!archive) throw new Error(`examples/charts/${chart} is not served`);
      switch (type) {
        case 'tar':
          return { type, location: `${files.url}/${archive}` };
        case 'repo':
          return { type, location: files.url, chart };
        case 'oci':
          return { type, location: `${registry.base}/${chart}` };
        case 'git':
          return {
            type,
            location: `${gitServer.url}/charts.git`,
            reference: 'main',
            subpath: `charts/${chart}`,
          };
      }
    },
    helmEnv: { SSL_CERT_FILE: registry.cert },
    helm,
    www: { dir: www, url: files.url },
    async close() {
      for (const { server } of [files, gitServer]) {
        server.closeAllConnections();
        await new Promise((resolve) => server.close(resolve));
      }
      await registry.stop();
    },
  };
}

/** `helm registry login` to `registry` as `auth` for the helm of `env`, the password on stdin. */
async function login(registry: OciRegistry, auth: BasicAuth, env: Record<string, string>): Promise<void> {
  const host = new URL(registry.base).host;
  const args = ['registry', 'login', host, '--username', auth.username, '--password-stdin'];
  const pending = run(toolPath('helm'), args, { env: { ...process.env, ...env } });
  pending.child.stdin!.end(auth.password);
  await pending;
}
