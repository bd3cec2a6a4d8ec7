import { LeftoverRetries, leftoverRetryDelayMs } from '../../bridge/leftover-retries';

describe('leftoverRetryDelayMs', () => {
  it.each([
    [1, 1_000],
    [2, 2_000],
    [3, 4_000],
    [5, 16_000],
    [9, 256_000],
    // 512 s would pass the cap: from the 10th failure on, every 5 minutes.
    [10, 300_000],
    [40, 300_000],
  ])('after failure %i in a row, the uninstall runs again %i ms after it ended', (failures, ms) => {
    expect(leftoverRetryDelayMs(failures)).toBe(ms);
  });
});

describe('LeftoverRetries', () => {
  const chart = 'ArmadaChart/apps/web';

  it('counts each failed run once, however often the manifest looks at it', () => {
    const retries = new LeftoverRetries();
    const first = retries.failure(chart, { runId: 'r1', generation: 1, endedAt: 10_000 });
    expect(first).toEqual({ runId: 'r1', generation: 1, failures: 1, retryAt: 11_000 });
    first.told = true;
    expect(retries.failure(chart, { runId: 'r1', generation: 1, endedAt: 99_000 })).toBe(first);
  });

  it('a further failed run of the same spec waits twice as long, from when it ended; it is told anew', () => {
    const retries = new LeftoverRetries();
    retries.failure(chart, { runId: 'r1', generation: 1, endedAt: 10_000 }).told = true;
    expect(retries.failure(chart, { runId: 'r2', generation: 1, endedAt: 12_000 })).toEqual({
      runId: 'r2',
      generation: 1,
      failures: 2,
      retryAt: 14_000,
    });
    expect(retries.failure(chart, { runId: 'r3', generation: 1, endedAt: 15_000 }).retryAt).toBe(19_000);
  });

  it('a failed run of a new spec starts the count again', () => {
    const retries = new LeftoverRetries();
    retries.failure(chart, { runId: 'r1', generation: 1, endedAt: 10_000 });
    retries.failure(chart, { runId: 'r2', generation: 1, endedAt: 12_000 });
    expect(retries.failure(chart, { runId: 'r3', generation: 2, endedAt: 13_000 })).toMatchObject({
      failures: 1,
      retryAt: 14_000,
    });
  });

  it('forgotten (cleared), a chart counts from one again; each chart counts alone', () => {
    const retries = new LeftoverRetries();
    retries.failure(chart, { runId: 'r1', generation: 1, endedAt: 10_000 });
    retries.failure('ArmadaChart/apps/db', { runId: 'd1', generation: 4, endedAt: 10_000 });
    retries.forget(chart);
    expect(retries.failure(chart, { runId: 'r2', generation: 1, endedAt: 20_000 }).failures).toBe(1);
    expect(
      retries.failure('ArmadaChart/apps/db', { runId: 'd2', generation: 4, endedAt: 20_000 }).failures,
    ).toBe(2);
  });

  it('wakes once, with the latest wish for a chart, and not after it is forgotten', async () => {
    const retries = new LeftoverRetries();
    const woken: string[] = [];
    const now = Date.now();
    retries.wakeAt(chart, now + 10_000, () => woken.push('replaced'));
    retries.wakeAt(chart, now, () => woken.push('due'));
    retries.wakeAt('ArmadaChart/apps/db', now, () => woken.push('forgotten'));
    retries.forget('ArmadaChart/apps/db');
    await new Promise<void>((resolve) => retries.wakeAt('ArmadaChart/apps/x', now + 20, resolve));
    expect(woken).toEqual(['due']);
  });
});
