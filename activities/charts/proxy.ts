import type { ClientRequest, IncomingMessage, OutgoingHttpHeaders } from 'node:http';
import { request as httpRequest } from 'node:http';
import { request as httpsRequest } from 'node:https';
import { isIP, type Socket } from 'node:net';
import { Readable } from 'node:stream';
import { connect as tlsConnect } from 'node:tls';
import { withoutCredentials } from '../../api/source-location';
import { withoutStrings } from '../values/read';
import { basicAuthorization } from './credentials';

/**
 * A chart's `source.proxy_server` reaches the one tool run that fetches that chart, never the
 * worker's own environment: other charts fetched at the same time by the same worker go direct.
 */

/** What stands in a failure message for the proxy's password. */
export const REDACTED_PROXY_PASSWORD = '<proxy password>';

/**
 * The environment in which `helm pull` (Go) fetches through `proxy`: both spellings of each
 * variable, since Go takes the first one set. NO_PROXY is emptied too: the worker's own
 * exceptions were written for the worker's proxy, and this chart asked for its fetch to go
 * through this one. Go never proxies a loopback address (127.0.0.1, localhost) whatever it is told.
 */
export function helmProxyEnv(proxy: string): Record<string, string> {
  return { HTTPS_PROXY: proxy, https_proxy: proxy, HTTP_PROXY: proxy, http_proxy: proxy, ...NO_EXCEPTIONS };
}

/**
 * The git configuration and environment of one `git fetch` through `proxy`: `http.proxy` (as
 * `git -c http.proxy=...` sets it, but given in the environment: see gitConfigEnv) and no
 * NO_PROXY exception, which curl would otherwise honour even for a configured proxy.
 */
export function gitProxy(proxy: string): { config: Record<string, string>; env: Record<string, string> } {
  return { config: { 'http.proxy': proxy }, env: NO_EXCEPTIONS };
}

const NO_EXCEPTIONS = { NO_PROXY: '', no_proxy: '' };

/**
 * `err` with `proxy`'s credentials gone from its message: the proxy URL written out becomes the
 * URL without them, and the password (as written in the URL, decoded, and inside a
 * Proxy-Authorization header) becomes REDACTED_PROXY_PASSWORD, however short.
 */
export function redactProxyCredentials(err: unknown, proxy: string | undefined): unknown {
  const login = proxy === undefined ? undefined : proxyLogin(proxy);
  if (!proxy || !login) return err;
  const shown = withoutStrings(err, [proxy], withoutCredentials(proxy));
  const header = basicAuthorization(login).slice('Basic '.length);
  const encoded = new URL(proxy).password;
  const secrets = [header, ...new Set([login.password, encoded])].filter(Boolean);
  return withoutStrings(shown, secrets, REDACTED_PROXY_PASSWORD);
}

/** The user and password of a proxy URL, decoded; undefined when it names none. */
function proxyLogin(proxy: string): { username: string; password: string } | undefined {
  const url = URL.canParse(proxy) ? new URL(proxy) : undefined;
  if (!url || (!url.username && !url.password)) return undefined;
  return { username: decodeURIComponent(url.username), password: decodeURIComponent(url.password) };
}

/** How many redirects a download follows, as fetch does. */
const MAX_REDIRECTS = 20;
const REDIRECT_STATUSES = new Set([301, 302, 303, 307, 308]);
/** Statuses a Response must have no body for. */
const NULL_BODY_STATUSES = new Set([204, 205, 304]);

/**
 * A GET of `url` through the HTTP proxy `proxy`, answered as fetch answers (Node's fetch takes
 * no proxy before Node 24, and no proxy package is a dependency): an http:// URL is asked of
 * the proxy with its absolute URI as the request target (RFC 9112 §3.2.2); an https:// one
 * through a CONNECT tunnel, TLS to the server inside it, verified against the system's trust as
 * fetch does. The proxy's own credentials, if its URL has some, go in Proxy-Authorization.
 * Redirects are followed (at most 20); as fetch does, an Authorization header is dropped on a
 * redirect to another origin. Fails with the proxy named (without its credentials).
 */
export async function fetchThroughProxy(
  url: string,
  proxy: string,
  init: { headers: Record<string, string>; signal?: AbortSignal },
): Promise<Response> {
  const via = new URL(proxy);
  let target = new URL(url);
  let headers = init.headers;
  for (let redirects = 0; ; redirects++) {
    const message = await requestThroughProxy(target, via, headers, init.signal).catch((err: unknown) => {
      throw new Error(`through proxy ${withoutCredentials(proxy)}: ${(err as Error).message}`, {
        cause: err,
      });
    });
    const location = message.headers.location;
    if (!REDIRECT_STATUSES.has(message.statusCode ?? 0) || location === undefined) return asResponse(message);
    message.destroy();
    if (redirects === MAX_REDIRECTS)
      throw new Error(`${withoutCredentials(url)}: more than ${MAX_REDIRECTS} redirects`);
    const next = new URL(location, target);
    if (next.protocol !== 'http:' && next.protocol !== 'https:')
      throw new Error(
        `${withoutCredentials(target.href)} redirects to ${withoutCredentials(next.href)}, not an http(s) URL`,
      );
    if (next.origin !== target.origin) headers = withoutAuthorization(headers);
    target = next;
  }
}

function withoutAuthorization(headers: Record<string, string>): Record<string, string> {
  return Object.fromEntries(
    Object.entries(headers).filter(([name]) => name.toLowerCase() !== 'authorization'),
  );
}

/** One request of `target` through `proxy`, no redirect followed; resolves with the response head. */
async function requestThroughProxy(
  target: URL,
  proxy: URL,
  headers: Record<string, string>,
  signal: AbortSignal | undefined,
): Promise<IncomingMessage> {
  const login = proxyLogin(proxy.href);
  const proxyAuthorization: Record<string, string> = login
    ? { 'proxy-authorization': basicAuthorization(login) }
    : {};
  const requestTarget = new URL(target);
  requestTarget.hash = '';
  if (target.protocol === 'http:') {
    const headersToProxy = { ...headers, host: target.host, ...proxyAuthorization };
    return responseTo(
      toProxy(proxy, { method: 'GET', path: requestTarget.href, headers: headersToProxy, signal }),
    );
  }
  const socket = await tunnel(proxy, target, proxyAuthorization, signal);
  const host = bare(target.hostname);
  const secured = tlsConnect({
    socket,
    host,
    servername: isIP(host) ? undefined : host,
    ALPNProtocols: ['http/1.1'],
  });
  return responseTo(httpsRequest(requestTarget, { headers, signal, createConnection: () => secured }));
}

/** A CONNECT tunnel through `proxy` to `target`'s host and port: the socket, once the proxy answers 200. */
function tunnel(
  proxy: URL,
  target: URL,
  proxyAuthorization: Record<string, string>,
  signal: AbortSignal | undefined,
): Promise<Socket> {
  const authority = `${target.hostname}:${target.port || 443}`;
  return new Promise((resolve, reject) => {
    const req = toProxy(proxy, {
      method: 'CONNECT',
      path: authority,
      headers: { host: authority, ...proxyAuthorization },
      signal,
    });
    req.once('connect', (res: IncomingMessage, socket: Socket, head: Buffer) => {
      if (res.statusCode !== 200) {
        socket.destroy();
        reject(
          new Error(
            `the proxy answered CONNECT ${authority} with HTTP ${res.statusCode} ${res.statusMessage ?? ''}`.trimEnd(),
          ),
        );
        return;
      }
      if (head.length) socket.unshift(head);
      resolve(socket);
    });
    req.once('error', reject);
    req.end();
  });
}

/** A request to the proxy itself (TLS to it for an https:// proxy), on a connection of its own. */
function toProxy(
  proxy: URL,
  opts: { method: string; path: string; headers: OutgoingHttpHeaders; signal?: AbortSignal },
): ClientRequest {
  const secure = proxy.protocol === 'https:';
  const host = bare(proxy.hostname);
  return (secure ? httpsRequest : httpRequest)({
    ...opts,
    host,
    port: proxy.port || (secure ? 443 : 80),
    ...(secure && !isIP(host) && { servername: host }),
    agent: false,
  });
}

function responseTo(req: ClientRequest): Promise<IncomingMessage> {
  return new Promise((resolve, reject) => {
    req.once('response', resolve);
    req.once('error', reject);
    req.end();
  });
}

/** An IPv6 host without the brackets a URL writes it in. */
function bare(hostname: string): string {
  return hostname.replace(/^\[(.*)\]$/, '$1');
}

/** `message` as the Response fetch would have given: status, headers, and its body as a stream. */
function asResponse(message: IncomingMessage): Response {
  const status = message.statusCode ?? 502;
  const headers = new Headers();
  for (const [name, value] of Object.entries(message.headers)) {
    for (const one of [value ?? []].flat()) headers.append(name, one);
  }
  const body = NULL_BODY_STATUSES.has(status)
    ? null
    : (Readable.toWeb(message) as ReadableStream<Uint8Array>);
  if (!body) message.destroy();
  return new Response(body, { status, statusText: message.statusMessage, headers });
}
