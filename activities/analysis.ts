import { CancelledFailure } from '@temporalio/common';
import { currentActivity, heartbeating } from './process';
import type { AnalysisRequest, AnalysisResult } from '../core/contracts/analysis';

const DEFAULT_EXPECTED_STATUS = 200;
const DEFAULT_TIMEOUT_SECONDS = 10;
/** Longest excerpt of a response body (or of a JSON value) quoted in a message. */
const MAX_EXCERPT_CHARS = 200;
/** Bytes of a response body read at most; a JSON body larger than this fails the check. */
const MAX_BODY_BYTES = 1024 * 1024;

/**
 * Activity: one canary analysis check, a GET of `req.url` judged by `judgeResponse` (status,
 * then the optional JSON field threshold). Reads only; heartbeats while the request runs.
 * Returns ok:false (never throws) for an unhealthy answer, a network error, a timeout or an
 * unusable request: a failed check is data, the workflow counts failures against failure_limit.
 * Rejects only when the activity is cancelled, with the cancellation.
 */
export async function checkAnalysis(req: AnalysisRequest): Promise<AnalysisResult> {
  const where = `GET ${displayUrl(req.url)}`;
  const timeoutSeconds = req.timeoutSeconds ?? DEFAULT_TIMEOUT_SECONDS;
  if (!Number.isFinite(timeoutSeconds) || timeoutSeconds <= 0) {
    return {
      ok: false,
      message: `${where}: timeoutSeconds must be a positive number, got ${timeoutSeconds}`,
    };
  }
  let url: URL;
  try {
    url = new URL(req.url);
  } catch {
    return { ok: false, message: `${where}: not a valid URL` };
  }
  if (url.protocol !== 'http:' && url.protocol !== 'https:') {
    return { ok: false, message: `${where}: only http and https URLs are checked, not ${url.protocol}` };
  }

  const got = await boundedGet(url, timeoutSeconds, req.json ? 'application/json' : '*/*');
  if (!got.ok) return { ok: false, status: got.status, message: `${where}: ${got.message}` };
  if (got.truncated && req.json && got.status === (req.expectedStatus ?? DEFAULT_EXPECTED_STATUS)) {
    // A cut JSON body cannot be parsed, and "not JSON" would mislead.
    return { ok: false, status: got.status, message: `${where}: body larger than ${MAX_BODY_BYTES} bytes` };
  }
  return judgeResponse(got.status, got.text, req);
}

/** A response read within the time allowed, or why none was: a network error, a timeout. */
export type BoundedResponse =
  | { ok: true; status: number; text: string; truncated: boolean }
  | { ok: false; status?: number; message: string };

/**
 * GET `url` within `timeoutSeconds` (connect, headers and body), reading at most 1 MiB of the
 * body; heartbeats while it waits. Resolves with the response or with why there is none
 * (`status 502, timed out after 10s`, `connect ECONNREFUSED 127.0.0.1:9090`); rejects only
 * when the activity is cancelled, with the cancellation.
 */
export async function boundedGet(url: URL, timeoutSeconds: number, accept: string): Promise<BoundedResponse> {
  const cancelled = currentActivity()?.cancellationSignal;
  const timeout = AbortSignal.timeout(Math.max(1, Math.round(timeoutSeconds * 1000)));
  const signal = cancelled ? AbortSignal.any([cancelled, timeout]) : timeout;
  let status: number | undefined;
  try {
    return await heartbeating(async () => {
      const response = await fetch(url, { signal, headers: { accept } });
      status = response.status;
      return { ok: true as const, status, ...(await readBody(response, MAX_BODY_BYTES)) };
    });
  } catch (err) {
    if (cancelled?.aborted) {
      throw cancelled.reason instanceof Error ? cancelled.reason : new CancelledFailure('activity cancelled');
    }
    const statusPart = status === undefined ? '' : `status ${status}, `;
    if (timeout.aborted)
      return { ok: false, status, message: `${statusPart}timed out after ${timeoutSeconds}s` };
    return { ok: false, status, message: `${statusPart}${networkError(err)}` };
  }
}

/**
 * Judges one response, pure: the status must equal `expectedStatus` (default 200); then, when
 * `req.json` is given, the body must be JSON with a number (or a numeric string, as Prometheus
 * returns) at the dot path `req.json.field`, within `min`..`max` (inclusive, each optional).
 * Messages start with `GET <url>:` and quote at most 200 characters of the body.
 */
export function judgeResponse(status: number, body: string, req: AnalysisRequest): AnalysisResult {
  const where = `GET ${displayUrl(req.url)}`;
  const expected = req.expectedStatus ?? DEFAULT_EXPECTED_STATUS;
  if (status !== expected) {
    return { ok: false, status, message: `${where}: status ${status}, expected ${expected}${quoted(body)}` };
  }
  if (!req.json) return { ok: true, status, message: `${where}: status ${status}` };

  const { field, min, max } = req.json;
  let document: unknown;
  try {
    document = JSON.parse(body);
  } catch {
    return { ok: false, status, message: `${where}: body is not JSON${quoted(body)}` };
  }
  const found = lookup(document, field);
  if (!found.present) return { ok: false, status, message: `${where}: field ${field} missing` };
  const value = asNumber(found.value);
  if (value === undefined) {
    const shown = excerpt(JSON.stringify(found.value) ?? String(found.value));
    return { ok: false, status, message: `${where}: field ${field} is not a number: ${shown}` };
  }
  if (min !== undefined && value < min) {
    return { ok: false, status, value, message: `${where}: ${field} = ${value}, below min ${min}` };
  }
  if (max !== undefined && value > max) {
    return { ok: false, status, value, message: `${where}: ${field} = ${value}, above max ${max}` };
  }
  const bounds = [min !== undefined && `min ${min}`, max !== undefined && `max ${max}`].filter(Boolean);
  const within = bounds.length ? ` (${bounds.join(', ')})` : '';
  return { ok: true, status, value, message: `${where}: status ${status}, ${field} = ${value}${within}` };
}

/**
 * Follows a dot path through parsed JSON: object keys (own properties only, so `constructor` or
 * `__proto__` never reach a prototype) and array indexes written as numbers (`items.0.value`).
 */
function lookup(document: unknown, path: string): { present: true; value: unknown } | { present: false } {
  let current: unknown = document;
  for (const segment of path.split('.')) {
    if (Array.isArray(current)) {
      if (!/^(0|[1-9][0-9]*)$/.test(segment) || Number(segment) >= current.length) return { present: false };
      current = current[Number(segment)];
    } else if (typeof current === 'object' && current !== null && Object.hasOwn(current, segment)) {
      current = (current as Record<string, unknown>)[segment];
    } else {
      return { present: false };
    }
  }
  return { present: true, value: current };
}

/** A finite number, or a string holding exactly one (`"0.05"`); anything else is not a number. */
export function asNumber(value: unknown): number | undefined {
  if (typeof value === 'number') return Number.isFinite(value) ? value : undefined;
  if (typeof value === 'string' && value.trim() !== '') {
    const parsed = Number(value);
    return Number.isFinite(parsed) ? parsed : undefined;
  }
  return undefined;
}

/** `; body: "..."` with a one-line excerpt of the body, or nothing for an empty body. */
function quoted(body: string): string {
  const shown = excerpt(body);
  return shown ? `; body: ${JSON.stringify(shown)}` : '';
}

/** Whitespace collapsed, control characters dropped, at most 200 characters (`…` when cut). */
export function excerpt(text: string): string {
  const line = text.replace(/[\p{Cc}\s]+/gu, ' ').trim();
  return line.length <= MAX_EXCERPT_CHARS ? line : `${line.slice(0, MAX_EXCERPT_CHARS - 1)}…`;
}

/** The URL as shown in messages: any user:password removed. */
export function displayUrl(raw: string): string {
  try {
    const url = new URL(raw);
    if (!url.username && !url.password) return raw;
    url.username = '';
    url.password = '';
    return url.toString();
  } catch {
    return excerpt(raw);
  }
}

/** Reads at most `limit` bytes of the body, cancelling the rest. */
async function readBody(response: Response, limit: number): Promise<{ text: string; truncated: boolean }> {
  if (!response.body) return { text: '', truncated: false };
  const reader = response.body.getReader();
  const chunks: Uint8Array[] = [];
  let size = 0;
  for (;;) {
    const { done, value } = await reader.read();
    if (done) break;
    chunks.push(value);
    size += value.byteLength;
    if (size > limit) {
      await reader.cancel().catch(() => undefined);
      return { text: Buffer.concat(chunks).subarray(0, limit).toString('utf8'), truncated: true };
    }
  }
  return { text: Buffer.concat(chunks).toString('utf8'), truncated: false };
}

/**
 * `connect ECONNREFUSED 127.0.0.1:8080`, `getaddrinfo ENOTFOUND x`: the cause fetch wraps in its
 * bare `fetch failed`, or the first of several (one per address tried). Duck-typed rather than
 * `instanceof Error`: fetch's errors may come from another realm (e.g. under Jest).
 */
function networkError(err: unknown): string {
  let current = err;
  for (let depth = 0; depth < 5 && isErrorLike(current); depth++) {
    const { errors, cause } = current as { errors?: unknown; cause?: unknown };
    const next = Array.isArray(errors) && errors.length ? errors[0] : cause;
    if (!isErrorLike(next)) break;
    current = next;
  }
  if (!isErrorLike(current)) return excerpt(String(current));
  const code = (current as { code?: unknown }).code;
  return excerpt(current.message || (typeof code === 'string' ? code : String(current.name)));
}

function isErrorLike(value: unknown): value is { message: string; name?: unknown } {
  return (
    typeof value === 'object' &&
    value !== null &&
    typeof (value as { message?: unknown }).message === 'string'
  );
}
