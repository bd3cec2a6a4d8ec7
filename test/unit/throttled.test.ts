import { ApiException } from '@kubernetes/client-node';
import {
  retryingThrottled,
  retryingThrottledApi,
  THROTTLED_RETRIES,
  throttledWait,
} from '../../kube/throttled';

const tooMany = (headers: Record<string, string> = {}) =>
  new ApiException(429, 'HTTP 429', { message: 'storage is (re)initializing' }, headers);

describe('throttledWait: how long a 429 asks the client to wait', () => {
  it.each([
    ['Retry-After in seconds', { 'retry-after': '2' }, 2_000],
    ['the header spelled with capitals', { 'Retry-After': '3' }, 3_000],
    ['no Retry-After', {}, 1_000],
    [
      'a Retry-After that is not a number of seconds',
      { 'retry-after': 'Wed, 21 Oct 2026 07:28:00 GMT' },
      1_000,
    ],
    ['a Retry-After longer than 10 s', { 'retry-after': '120' }, 10_000],
  ])('%s', (_case, headers, ms) => {
    expect(throttledWait(tooMany(headers))).toBe(ms);
  });

  it('is undefined for every other answer, so those fail as before', () => {
    expect(throttledWait(new ApiException(503, 'HTTP 503', {}, { 'retry-after': '1' }))).toBeUndefined();
    expect(throttledWait(new ApiException(404, 'HTTP 404', {}, {}))).toBeUndefined();
    expect(throttledWait(new Error('socket hang up'))).toBeUndefined();
  });
});

describe('retryingThrottled', () => {
  it('asks again after each 429, waiting what the server asked, and returns the answer', async () => {
    const waits: number[] = [];
    let calls = 0;
    const answer = await retryingThrottled(
      async () => {
        calls++;
        if (calls < 3) throw tooMany({ 'retry-after': String(calls) });
        return 'items';
      },
      async (ms) => waits.push(ms),
    );
    expect(answer).toBe('items');
    expect(waits).toEqual([1_000, 2_000]);
  });

  it(`gives up after ${THROTTLED_RETRIES} retries with the server's own error`, async () => {
    let calls = 0;
    const last = tooMany();
    const outcome = retryingThrottled(
      async () => {
        calls++;
        throw last;
      },
      async () => undefined,
    );
    await expect(outcome).rejects.toBe(last);
    expect(calls).toBe(THROTTLED_RETRIES + 1);
  });

  it('never asks again after any other error', async () => {
    let calls = 0;
    const forbidden = new ApiException(403, 'HTTP 403', {}, {});
    await expect(
      retryingThrottled(
        async () => {
          calls++;
          throw forbidden;
        },
        async () => undefined,
      ),
    ).rejects.toBe(forbidden);
    expect(calls).toBe(1);
  });
});

describe('retryingThrottledApi: every method of an API client retried on 429', () => {
  class PodsApi {
    calls = 0;
    readonly server = 'https://sandbox:6443';
    async listPods(namespace: string): Promise<string[]> {
      this.calls++;
      if (this.calls === 1) throw tooMany({ 'retry-after': '0' });
      return [`${namespace}/web-0`];
    }
  }

  it('keeps `this`, the arguments and the properties, and still is the client class', async () => {
    const api = retryingThrottledApi(new PodsApi());
    expect(api).toBeInstanceOf(PodsApi);
    expect(api.server).toBe('https://sandbox:6443');
    await expect(api.listPods('team-a')).resolves.toEqual(['team-a/web-0']);
    expect(api.calls).toBe(2);
  });
});
