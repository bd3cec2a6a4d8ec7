import { ApplicationFailure } from '@temporalio/common';
import { mkdtemp, readFile, rm } from 'node:fs/promises';
import { createServer as createHttpServer, type Server } from 'node:http';
import { createServer as createHttpsServer } from 'node:https';
import { tmpdir } from 'node:os';
import path from 'node:path';
import type { ChartSource } from '../../api/chart';
import type { SourceCredentials } from '../../activities/charts/credentials';
import {
  REDACTED_PROXY_PASSWORD,
  fetchThroughProxy,
  helmProxyEnv,
  redactProxyCredentials,
} from '../../activities/charts/proxy';
import { gitFetchEnv } from '../../activities/charts/source';
import { NonRetryable } from '../../core/failures';
import { selfSignedCertificate, startProxy, type TestProxy } from '../helpers/chart-servers';

describe('what the one helm or git process of a proxied fetch gets', () => {
  it('gives helm both spellings of HTTPS_PROXY and HTTP_PROXY, and no NO_PROXY exception', () => {
    expect(helmProxyEnv('http://proxy.example.com:3128')).toEqual({
      HTTPS_PROXY: 'http://proxy.example.com:3128',
      https_proxy: 'http://proxy.example.com:3128',
      HTTP_PROXY: 'http://proxy.example.com:3128',
      http_proxy: 'http://proxy.example.com:3128',
      NO_PROXY: '',
      no_proxy: '',
    });
  });

  const git: ChartSource = { type: 'git', location: 'https://git.example.com/charts.git' };
  const login: SourceCredentials = { username: 'u', password: 'p', from: 'Secret a/b' };

  it.each<[string, ChartSource, SourceCredentials | undefined, Record<string, string>]>([
    ['nothing for a fetch without credentials or proxy', git, undefined, {}],
    [
      'http.proxy through the environment, and no NO_PROXY exception, for a proxy',
      { ...git, proxy_server: 'http://u:p@proxy.example.com:3128' },
      undefined,
      {
        GIT_CONFIG_COUNT: '1',
        GIT_CONFIG_KEY_0: 'http.proxy',
        GIT_CONFIG_VALUE_0: 'http://u:p@proxy.example.com:3128',
        NO_PROXY: '',
        no_proxy: '',
      },
    ],
    [
      'the credentials header and the proxy as two entries, for both',
      { ...git, proxy_server: 'http://proxy.example.com:3128' },
      login,
      {
        GIT_CONFIG_COUNT: '2',
        GIT_CONFIG_KEY_0: 'http.https://git.example.com/charts.git.extraHeader',
        GIT_CONFIG_VALUE_0: `Authorization: Basic ${Buffer.from('u:p').toString('base64')}`,
        GIT_CONFIG_KEY_1: 'http.proxy',
        GIT_CONFIG_VALUE_1: 'http://proxy.example.com:3128',
        NO_PROXY: '',
        no_proxy: '',
      },
    ],
  ])('gives git %s', (_name, source, credentials, env) => {
    expect(gitFetchEnv(source, credentials)).toEqual(env);
  });
});

describe('redactProxyCredentials', () => {
  const proxy = 'http://squid:s%40cret@proxy.example.com:3128';

  it('shows the proxy URL without its login and hides the password in every form, keeping the failure type', () => {
    const header = Buffer.from('squid:s@cret').toString('base64');
    const failure = ApplicationFailure.nonRetryable(
      `via ${proxy}: s@cret, s%40cret, Proxy-Authorization: Basic ${header}`,
      NonRetryable.ChartNotFound,
    );
    const redacted = redactProxyCredentials(failure, proxy) as ApplicationFailure;
    expect(redacted).toMatchObject({ type: NonRetryable.ChartNotFound, nonRetryable: true });
    expect(redacted.message).toBe(
      `via http://proxy.example.com:3128/: ${REDACTED_PROXY_PASSWORD}, ${REDACTED_PROXY_PASSWORD}, ` +
        `Proxy-Authorization: Basic ${REDACTED_PROXY_PASSWORD}`,
    );
  });

  it('leaves a failure alone when there is no proxy or the proxy has no login', () => {
    const failure = new Error('through http://proxy.example.com:3128');
    expect(redactProxyCredentials(failure, undefined)).toBe(failure);
    expect(redactProxyCredentials(failure, 'http://proxy.example.com:3128')).toBe(failure);
  });
});

describe('fetchThroughProxy against a real proxy and real servers on the loopback', () => {
  /** A name that resolves nowhere: only the proxy, told where it is, can reach it. */
  const HIDDEN = 'charts.proxy-test.invalid';
  const login = { username: 'squid', password: 'p@ss' };
  let proxy: TestProxy;
  let plain: Server;
  let plainPort: number;
  let tls: Server;
  let tlsPort: number;
  let work: string;
  /** What the plain server saw, as `<authorization header or "none"> <path>`. */
  const seen: string[] = [];

  const listen = async (server: Server) => {
    await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
    return (server.address() as { port: number }).port;
  };

  beforeAll(async () => {
    work = await mkdtemp(path.join(tmpdir(), 'armada-proxy-unit-'));
    plain = createHttpServer((req, res) => {
      seen.push(`${req.headers.authorization ?? 'none'} ${req.url}`);
      if (req.url === '/moved') return void res.writeHead(302, { location: '/chart.tgz' }).end();
      if (req.url === '/elsewhere')
        return void res.writeHead(302, { location: `http://127.0.0.1:${plainPort}/chart.tgz` }).end();
      res.writeHead(200, { 'content-type': 'application/gzip' }).end('chart bytes');
    });
    plainPort = await listen(plain);
    const { cert, key } = await selfSignedCertificate(work, `DNS:${HIDDEN}`);
    tls = createHttpsServer({ key: await readFile(key), cert: await readFile(cert) }, (_req, res) =>
      res.end('secret chart'),
    );
    tlsPort = await listen(tls);
    proxy = await startProxy({ hosts: { [HIDDEN]: '127.0.0.1' }, auth: login });
  });

  afterAll(async () => {
    await proxy?.close();
    for (const server of [plain, tls]) {
      server?.closeAllConnections();
      await new Promise((resolve) => server?.close(resolve));
    }
    if (work) await rm(work, { recursive: true, force: true });
  });

  beforeEach(() => {
    proxy.requests.length = 0;
    seen.length = 0;
  });

  it('asks the proxy for an http:// URL by its absolute URI, with the proxy login, and streams the body', async () => {
    const response = await fetchThroughProxy(`http://${HIDDEN}:${plainPort}/chart.tgz#x`, proxy.url, {
      headers: { authorization: 'Basic c2VydmVy' },
    });
    expect(response.status).toBe(200);
    expect(response.headers.get('content-type')).toBe('application/gzip');
    expect(await response.text()).toBe('chart bytes');
    expect(proxy.requests).toEqual([`GET http://${HIDDEN}:${plainPort}/chart.tgz`]);
    expect(seen).toEqual(['Basic c2VydmVy /chart.tgz']);
  });

  it('follows a redirect through the proxy, dropping Authorization only when the origin changes', async () => {
    const base = `http://${HIDDEN}:${plainPort}`;
    const headers = { authorization: 'Basic c2VydmVy' };
    expect(await (await fetchThroughProxy(`${base}/moved`, proxy.url, { headers })).text()).toBe(
      'chart bytes',
    );
    expect(await (await fetchThroughProxy(`${base}/elsewhere`, proxy.url, { headers })).text()).toBe(
      'chart bytes',
    );
    expect(seen).toEqual([
      'Basic c2VydmVy /moved',
      'Basic c2VydmVy /chart.tgz',
      'Basic c2VydmVy /elsewhere',
      'none /chart.tgz',
    ]);
    expect(proxy.requests).toEqual([
      `GET ${base}/moved`,
      `GET ${base}/chart.tgz`,
      `GET ${base}/elsewhere`,
      `GET http://127.0.0.1:${plainPort}/chart.tgz`,
    ]);
  });

  it('tunnels an https:// URL with CONNECT and verifies the server’s certificate inside it', async () => {
    const failure = await fetchThroughProxy(`https://${HIDDEN}:${tlsPort}/chart.tgz`, proxy.url, {
      headers: {},
    }).catch((err: Error) => err);
    // The tunnel reached the server (its certificate is the one it was refused for), and the
    // certificate, which nothing here trusts, was checked as fetch checks it.
    expect(proxy.requests).toEqual([`CONNECT ${HIDDEN}:${tlsPort}`]);
    expect(failure).toBeInstanceOf(Error);
    expect((failure as Error).message).toMatch(
      /^through proxy http:\/\/127\.0\.0\.1:\d+\/: self[- ]signed certificate/,
    );
  });

  it('names the proxy, without its login, when it refuses the tunnel', async () => {
    const wrong = proxy.url.replace('p%40ss', 'wrong');
    const failure = await fetchThroughProxy(`https://${HIDDEN}:${tlsPort}/chart.tgz`, wrong, {
      headers: {},
    }).catch((err: Error) => err);
    expect((failure as Error).message).toBe(
      `through proxy ${wrong.replace('squid:wrong@', '')}/: the proxy answered CONNECT ${HIDDEN}:${tlsPort} ` +
        'with HTTP 407 Proxy Authentication Required',
    );
  });

  it('answers a refused plain request as the proxy did: 407', async () => {
    const wrong = proxy.url.replace('p%40ss', 'wrong');
    const response = await fetchThroughProxy(`http://${HIDDEN}:${plainPort}/chart.tgz`, wrong, {
      headers: {},
    });
    expect(response.status).toBe(407);
    expect(seen).toEqual([]);
  });
});
