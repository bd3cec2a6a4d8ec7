import { KeyedQueue } from '../../bridge/queue';

/** One handler call, finished by the test with `succeed()` or `fail()`. */
interface Run {
  key: string;
  succeed(): void;
  fail(err?: Error): void;
}

/**
 * A handler the test drives by hand: every call is recorded in `runs` and stays running until
 * the test finishes it. `started(n)` resolves once the handler has been called n times.
 */
function manualHandler() {
  const runs: Run[] = [];
  const waiters: { n: number; resolve: () => void }[] = [];
  let running = 0;
  let mostAtOnce = 0;
  const handler = (key: string) =>
    new Promise<void>((resolve, reject) => {
      running++;
      mostAtOnce = Math.max(mostAtOnce, running);
      const end = () => running--;
      runs.push({
        key,
        succeed: () => (end(), resolve()),
        fail: (err = new Error(`${key} failed`)) => (end(), reject(err)),
      });
      for (const w of waiters.filter((w) => runs.length >= w.n)) w.resolve();
    });
  return {
    handler,
    runs,
    keys: () => runs.map((r) => r.key),
    mostAtOnce: () => mostAtOnce,
    started: (n: number) =>
      runs.length >= n ? Promise.resolve() : new Promise<void>((resolve) => waiters.push({ n, resolve })),
  };
}

/** Lets every promise callback that is ready run: to show that something did not happen. */
const settle = () => new Promise((resolve) => setImmediate(resolve));

let queues: KeyedQueue[] = [];
function queue(...args: ConstructorParameters<typeof KeyedQueue>): KeyedQueue {
  const q = new KeyedQueue(...args);
  queues.push(q);
  return q;
}
afterEach(async () => {
  await Promise.all(queues.map((q) => q.stop()));
  queues = [];
});

describe('KeyedQueue', () => {
  it('runs a key added several times before it starts only once', async () => {
    const calls: string[] = [];
    const q = queue(async (key) => void calls.push(key), { concurrency: 1 });
    q.add('a');
    q.add('a');
    q.add('b');
    q.add('a');
    expect(q.depth).toBe(2);
    await q.idle();
    expect(calls).toEqual(['a', 'b']);
  });

  it('runs a key added while it runs once more afterwards, never alongside itself', async () => {
    const h = manualHandler();
    const q = queue(h.handler, { concurrency: 4 });
    q.add('a');
    await h.started(1);
    q.add('a');
    q.add('a');
    await settle();
    expect(h.keys()).toEqual(['a']);

    h.runs[0].succeed();
    await h.started(2);
    expect(h.mostAtOnce()).toBe(1);
    h.runs[1].succeed();
    await q.idle();
    expect(h.keys()).toEqual(['a', 'a']);
  });

  it('runs at most `concurrency` different keys at once, starting them in the order added', async () => {
    const h = manualHandler();
    const q = queue(h.handler, { concurrency: 2 });
    for (const key of ['a', 'b', 'c', 'd']) q.add(key);
    await h.started(2);
    await settle();
    expect(h.keys()).toEqual(['a', 'b']);
    expect(q.depth).toBe(2);

    h.runs[1].succeed();
    await h.started(3);
    expect(h.keys()).toEqual(['a', 'b', 'c']);
    h.runs[0].succeed();
    await h.started(4);
    expect(h.keys()).toEqual(['a', 'b', 'c', 'd']);
    expect(h.mostAtOnce()).toBe(2);
    h.runs[2].succeed();
    h.runs[3].succeed();
    await q.idle();
  });

  it('retries a failed key after retryDelayMs(attempt) and counts attempts again after a success', async () => {
    const outcomes = [false, false, true, false, true];
    const calls: string[] = [];
    const errors: [string, string, number][] = [];
    const retryDelayMs = jest.fn((_attempt: number) => 1);
    const q = queue(
      async (key) => {
        calls.push(key);
        if (!outcomes.shift()) throw new Error(`${key} failed`);
      },
      {
        concurrency: 1,
        retryDelayMs,
        onError: (key, err, attempt) => errors.push([key, (err as Error).message, attempt]),
      },
    );
    q.add('a');
    await q.idle();
    expect(calls).toEqual(['a', 'a', 'a']);
    expect(errors).toEqual([
      ['a', 'a failed', 1],
      ['a', 'a failed', 2],
    ]);
    expect(retryDelayMs.mock.calls).toEqual([[1], [2]]);

    q.add('a');
    await q.idle();
    expect(errors.at(-1)).toEqual(['a', 'a failed', 1]);
  });

  it('runs a failed key added again at once instead of after its retry delay', async () => {
    const h = manualHandler();
    const attempts: number[] = [];
    const q = queue(h.handler, {
      concurrency: 1,
      retryDelayMs: () => 3_600_000,
      onError: (_key, _err, attempt) => attempts.push(attempt),
    });
    q.add('a');
    await h.started(1);
    h.runs[0].fail();
    await settle();
    expect(attempts).toEqual([1]);

    q.add('a');
    await h.started(2);
    h.runs[1].succeed();
    await q.idle();
    expect(h.keys()).toEqual(['a', 'a']);
  });

  it('runs a key that fails while added again once more soon, not after the retry delay', async () => {
    const h = manualHandler();
    const q = queue(h.handler, { concurrency: 1, retryDelayMs: () => 3_600_000 });
    q.add('a');
    await h.started(1);
    q.add('a');
    h.runs[0].fail();
    await h.started(2);
    h.runs[1].succeed();
    await q.idle();
    expect(h.keys()).toEqual(['a', 'a']);
  });

  it('resolves idle() at once when empty, and only after running and waiting keys are done', async () => {
    const h = manualHandler();
    const q = queue(h.handler, { concurrency: 1 });
    await q.idle();

    q.add('a');
    q.add('b');
    let idle = false;
    const done = q.idle().then(() => (idle = true));
    await h.started(1);
    h.runs[0].succeed();
    await h.started(2);
    expect(idle).toBe(false);
    h.runs[1].succeed();
    await done;
    expect(q.depth).toBe(0);
  });

  it('stop() waits for running handlers, drops waiting keys and pending retries, and takes no new work', async () => {
    const h = manualHandler();
    const q = queue(h.handler, { concurrency: 2, retryDelayMs: () => 3_600_000 });
    for (const key of ['a', 'b', 'c', 'd']) q.add(key);
    await h.started(2);
    h.runs[1].fail(); // b waits an hour for its retry, which stop() cancels; c starts
    await h.started(3);

    let stopped = false;
    const stopping = q.stop().then(() => (stopped = true));
    q.add('e');
    h.runs[0].succeed();
    await settle();
    expect(stopped).toBe(false);

    h.runs[2].succeed();
    await stopping;
    await q.idle();
    expect(h.keys()).toEqual(['a', 'b', 'c']);
    expect(q.depth).toBe(0);
  });

  it('retries a handler that throws before returning a promise like any other failure', async () => {
    let calls = 0;
    const q = queue(
      ((key: string) => {
        if (++calls === 1) throw new Error(`${key} failed`);
        return Promise.resolve();
      }) as (key: string) => Promise<void>,
      { concurrency: 1, retryDelayMs: () => 1 },
    );
    q.add('a');
    await q.idle();
    expect(calls).toBe(2);
  });

  it('tells the handler when its key was first added since it last ran, and keeps that time through a retry', async () => {
    const h = manualHandler();
    const queuedAt = new Map<number, number>();
    const q = queue(
      (key, at) => {
        queuedAt.set(h.runs.length, at);
        return h.handler(key);
      },
      { concurrency: 1, retryDelayMs: () => 1 },
    );
    const pause = () => new Promise((resolve) => setTimeout(resolve, 20));
    q.add('x'); // holds the only slot, so 'a' waits
    const before = Date.now();
    q.add('a');
    const after = Date.now();
    await pause();
    q.add('a'); // still waiting: the first add's time stands
    await h.started(1);
    h.runs[0].succeed();
    await h.started(2);
    expect(h.keys()).toEqual(['x', 'a']);
    expect(queuedAt.get(1)).toBeGreaterThanOrEqual(before);
    expect(queuedAt.get(1)).toBeLessThanOrEqual(after);

    h.runs[1].fail(); // its retry still answers the first add
    await h.started(3);
    expect(queuedAt.get(2)).toBe(queuedAt.get(1));

    await pause();
    const readded = Date.now();
    q.add('a'); // added while it runs: the next run counts from now
    h.runs[2].succeed();
    await h.started(4);
    expect(queuedAt.get(3)).toBeGreaterThanOrEqual(readded);
    h.runs[3].succeed();
    await q.idle();
  });

  it('counts running keys apart from waiting ones', async () => {
    const h = manualHandler();
    const q = queue(h.handler, { concurrency: 1 });
    q.add('a');
    q.add('b');
    await h.started(1);
    expect([q.active, q.depth]).toEqual([1, 1]);
    h.runs[0].succeed();
    await h.started(2);
    h.runs[1].succeed();
    await q.idle();
    expect([q.active, q.depth]).toEqual([0, 0]);
  });

  it('refuses a concurrency below one', () => {
    expect(() => new KeyedQueue(async () => {}, { concurrency: 0 })).toThrow(
      /concurrency must be at least 1/,
    );
  });
});
