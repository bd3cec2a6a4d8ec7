import type { KindName } from '../../api/kinds';
import { LeftoverRetries, leftoverRetryDelayMs } from '../../bridge/leftover-retries';
import type { BridgeContext } from '../../bridge/context';
import { clearStandaloneLeftovers } from '../../bridge/standalone';
import { viewOf, type ObjectView } from '../../bridge/view';
import { armadaObject } from '../helpers/kube';

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
  const manifest = 'ArmadaManifest/apps/demo';

  it('counts each failed run once, however often the manifest looks at it', () => {
    const retries = new LeftoverRetries();
    const first = retries.failure(chart, { runId: 'r1', generation: 1, endedAt: 10_000 }, manifest);
    expect(first).toEqual({
      manifest,
      runId: 'r1',
      generation: 1,
      failures: 1,
      retryAt: 11_000,
    });
    first.told = true;
    expect(retries.failure(chart, { runId: 'r1', generation: 1, endedAt: 99_000 }, manifest)).toBe(first);
  });

  it('a further failed run of the same spec waits twice as long, from when it ended; it is told anew', () => {
    const retries = new LeftoverRetries();
    retries.failure(chart, { runId: 'r1', generation: 1, endedAt: 10_000 }, manifest).told = true;
    expect(retries.failure(chart, { runId: 'r2', generation: 1, endedAt: 12_000 }, manifest)).toEqual({
      manifest,
      runId: 'r2',
      generation: 1,
      failures: 2,
      retryAt: 14_000,
    });
    expect(retries.failure(chart, { runId: 'r3', generation: 1, endedAt: 15_000 }, manifest).retryAt).toBe(
      19_000,
    );
  });

  it('a failed run of a new spec starts the count again', () => {
    const retries = new LeftoverRetries();
    retries.failure(chart, { runId: 'r1', generation: 1, endedAt: 10_000 }, manifest);
    retries.failure(chart, { runId: 'r2', generation: 1, endedAt: 12_000 }, manifest);
    expect(retries.failure(chart, { runId: 'r3', generation: 2, endedAt: 13_000 }, manifest)).toMatchObject({
      failures: 1,
      retryAt: 14_000,
    });
  });

  it('forgotten (cleared), a chart counts from one again; each chart counts alone', () => {
    const retries = new LeftoverRetries();
    retries.failure(chart, { runId: 'r1', generation: 1, endedAt: 10_000 }, manifest);
    retries.failure('ArmadaChart/apps/db', { runId: 'd1', generation: 4, endedAt: 10_000 }, manifest);
    retries.forget(chart);
    expect(retries.failure(chart, { runId: 'r2', generation: 1, endedAt: 20_000 }, manifest).failures).toBe(
      1,
    );
    expect(
      retries.failure('ArmadaChart/apps/db', { runId: 'd2', generation: 4, endedAt: 20_000 }, manifest)
        .failures,
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

describe('LeftoverRetries: entries leave with their object', () => {
  const web = 'ArmadaChart/apps/web';
  const db = 'ArmadaChart/apps/db';
  const other = 'ArmadaChart/apps/other';
  const demo = 'ArmadaManifest/apps/demo';
  const failed = (retries: LeftoverRetries, chart: string, manifest: string) =>
    retries.failure(chart, { runId: `${chart}-r1`, generation: 1, endedAt: Date.now() }, manifest);

  it('a deleted chart takes its failures and its timer with it', async () => {
    const retries = new LeftoverRetries();
    const woken: string[] = [];
    failed(retries, web, demo);
    retries.wakeAt(web, Date.now(), () => woken.push(web));
    retries.forgetObject(web);
    await new Promise<void>((resolve) => retries.wakeAt(other, Date.now() + 20, resolve));
    expect(retries.size).toBe(0);
    expect(woken).toEqual([]);
  });

  it('a deleted manifest takes the failures its run waited for, not another manifest’s', () => {
    const retries = new LeftoverRetries();
    failed(retries, web, demo);
    failed(retries, db, demo);
    failed(retries, other, 'ArmadaManifest/apps/site');
    retries.forgetObject(demo);
    expect(retries.size).toBe(1);
    expect(retries.failure(other, { runId: `${other}-r1`, generation: 1, endedAt: 0 }, 'x').failures).toBe(1);
  });

  it('a manifest keeps the failures of the charts it still lists, and only those', () => {
    const retries = new LeftoverRetries();
    failed(retries, web, demo);
    failed(retries, db, demo);
    retries.forgetBut(demo, new Set([db]));
    expect(retries.size).toBe(1);
    // db's count goes on; web's starts again.
    expect(retries.failure(db, { runId: 'd2', generation: 1, endedAt: 0 }, demo).failures).toBe(2);
    expect(retries.failure(web, { runId: 'w2', generation: 1, endedAt: 0 }, demo).failures).toBe(1);
  });
});

describe('clearStandaloneLeftovers forgets a failed chart its manifest lists no more', () => {
  const ns = 'apps';
  const view = <K extends KindName>(kind: K, name: string, spec: object) =>
    viewOf(kind, {
      ...armadaObject(kind, name, spec),
      metadata: { name, namespace: ns, generation: 1, uid: `${kind}-${name}` },
    } as never);

  /** The bridge's context, as far as clearing reads it: a cache of these objects. */
  const contextOf = (objects: ObjectView[], retries: LeftoverRetries) =>
    ({
      objects: (kind: KindName) => ({
        get: (_namespace: string, name: string) => objects.find((o) => o.kind === kind && o.name === name),
        list: () => objects.filter((o) => o.kind === kind),
      }),
      // The chart ran on its own before the manifest listed it.
      maybeRanAlone: new Set(objects.filter((o) => o.kind === 'ArmadaChart').map((o) => o.key)),
      leftoverRetries: retries,
    }) as unknown as BridgeContext;

  it.each([
    ['its group lists the chart no more', ['apps'], []],
    ['it lists the group no more', [], ['web']],
  ])(
    '%s: the failure and its timer go, and the manifest waits for nothing',
    async (_case, groups, charts) => {
      const manifest = view('ArmadaManifest', 'demo', { release_prefix: 'p', chart_groups: groups });
      const cache = [
        manifest,
        view('ArmadaChartGroup', 'apps', { chart_group: charts }),
        view('ArmadaChart', 'web', {
          release: 'web',
          namespace: `${ns}-rel`,
          source: { type: 'local', location: 'c' },
        }),
      ];
      const retries = new LeftoverRetries();
      const chart = `ArmadaChart/${ns}/web`;
      retries.failure(chart, { runId: 'r1', generation: 1, endedAt: Date.now() }, manifest.key);
      const woken: string[] = [];
      retries.wakeAt(chart, Date.now() + 10, () => woken.push('re-queued'));
      expect(await clearStandaloneLeftovers(contextOf(cache, retries), manifest)).toBe(false);
      await new Promise((resolve) => setTimeout(resolve, 30));
      expect(retries.size).toBe(0);
      expect(woken).toEqual([]);
    },
  );
});
