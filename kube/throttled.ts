import { ApiException } from '@kubernetes/client-node';
import { setTimeout as delay } from 'node:timers/promises';

/** As client-go: a 429 is retried this many times before the caller sees it. */
export const THROTTLED_RETRIES = 5;
/** The wait when the answer names none, and the longest a Retry-After may ask for. */
const DEFAULT_WAIT_MS = 1_000;
const LONGEST_WAIT_MS = 10_000;

/**
 * How long to wait before asking again, when the API server answered HTTP 429: API Priority and
 * Fairness turned the request away, or the resource's watch cache is still (re)initialising
 * ("storage is (re)initializing", e.g. just after a CRD is created or the server restarts). The
 * server did not act on the request, so asking again is safe for every verb, as client-go does.
 * Undefined for any other error.
 */
export function throttledWait(err: unknown): number | undefined {
  if (!(err instanceof ApiException) || err.code !== 429) return undefined;
  const header = Object.entries(err.headers ?? {}).find(([name]) => name.toLowerCase() === 'retry-after');
  const seconds = Number(header?.[1]);
  if (!header || !Number.isFinite(seconds) || seconds < 0) return DEFAULT_WAIT_MS;
  return Math.min(seconds * 1_000, LONGEST_WAIT_MS);
}

/** `call()`, asked again after each 429 for as long as the server says, up to THROTTLED_RETRIES times. */
export async function retryingThrottled<T>(
  call: () => Promise<T>,
  wait: (ms: number) => Promise<unknown> = delay,
): Promise<T> {
  for (let retries = 0; ; retries++) {
    try {
      return await call();
    } catch (err) {
      const ms = throttledWait(err);
      if (ms === undefined || retries === THROTTLED_RETRIES) throw err;
      await wait(ms);
    }
  }
}

/** `api` with every method call made through retryingThrottled. */
export function retryingThrottledApi<T extends object>(api: T): T {
  return new Proxy(api, {
    get(target, property, receiver) {
      const value: unknown = Reflect.get(target, property, receiver);
      if (typeof value !== 'function') return value;
      return (...args: unknown[]) =>
        retryingThrottled(() => Promise.resolve((value as (...a: unknown[]) => unknown).apply(target, args)));
    },
  });
}
