import {
  CoordinationV1Api,
  CoreV1Api,
  KubeConfig,
  type V1Lease,
  type V1LeaseSpec,
} from '@kubernetes/client-node';
import { createServer, connect, type Socket } from 'node:net';
import { once } from 'node:events';
import { LeaderElector } from '../../bridge/leader';
import { kubeConfig, uniqueName } from '../helpers/env';
import { recordEvents } from '../helpers/kube';
import { eventually } from '../helpers/processes';

const namespace = uniqueName('leader');
const LEASE_MS = 3000;
const electors: LeaderElector[] = [];
/** Relays and watches to end after the tests, even failed ones. */
const closers: (() => void)[] = [];

beforeAll(async () => {
  await kubeConfig()
    .makeApiClient(CoreV1Api)
    .createNamespace({ body: { metadata: { name: namespace } } });
});

afterAll(async () => {
  await Promise.all(electors.map((e) => e.stop()));
  for (const close of closers) close();
  await kubeConfig().makeApiClient(CoreV1Api).deleteNamespace({ name: namespace });
});

const readLease = (name: string): Promise<V1Lease> =>
  kubeConfig().makeApiClient(CoordinationV1Api).readNamespacedLease({ namespace, name });

function deferred<T>() {
  let resolve!: (value: T) => void;
  const promise = new Promise<T>((r) => (resolve = r));
  return { promise, resolve };
}

/**
 * Candidates on one Lease (lease 3 s, renew 1 s, retry 0.5 s). Each exposes promises of the time
 * it started and stopped leading; `overlaps` records any start while another candidate led.
 */
function election(lease: string) {
  const leading = new Set<string>();
  const overlaps: string[] = [];
  const candidate = (identity: string, kc: KubeConfig = kubeConfig()) => {
    const started = deferred<number>();
    const stopped = deferred<number>();
    const elector = new LeaderElector({
      kubeConfig: kc,
      namespace,
      name: lease,
      identity,
      leaseDurationSeconds: LEASE_MS / 1000,
      renewIntervalSeconds: 1,
      retryIntervalSeconds: 0.5,
      onStartedLeading: () => {
        if (leading.size > 0) overlaps.push(`${identity} started while ${[...leading].join()} led`);
        leading.add(identity);
        started.resolve(Date.now());
      },
      onStoppedLeading: () => {
        leading.delete(identity);
        stopped.resolve(Date.now());
      },
    });
    electors.push(elector);
    return { identity, elector, started: started.promise, stopped: stopped.promise };
  };
  /** A crashed process is gone: it no longer counts as leading, though its claim stands. */
  const crash = async (c: ReturnType<typeof candidate>) => {
    await c.elector.abandon();
    leading.delete(c.identity);
  };
  return { candidate, crash, overlaps };
}

/** Polls the API server until `check` holds for the Lease (observed state, not a sleep). */
async function leaseUntil(name: string, check: (lease: V1Lease) => boolean): Promise<V1Lease> {
  for (;;) {
    const lease = await readLease(name);
    if (check(lease)) return lease;
    await new Promise((resolve) => setTimeout(resolve, 100));
  }
}

const renewTime = (lease: V1Lease) => new Date(lease.spec!.renewTime!).getTime();

/**
 * Watches the Lease `name` from now on. lastRenewal(holder, next) is the renewTime of the last
 * write by `holder` before `next` took the Lease: the watch has every write in order, where a read
 * after a crash or a cut could come before a write that was already on its way.
 */
async function leaseWrites(name: string) {
  const watch = await recordEvents([
    { path: `/apis/coordination.k8s.io/v1/namespaces/${namespace}/leases`, labelSelector: '' },
  ]);
  closers.push(watch.stop);
  return {
    lastRenewal: async (holder: string, next: string): Promise<number> => {
      const specs = await eventually(`${next}'s claim of ${name} in the watch`, async () => {
        const all = watch.events.filter((e) => e.name === name).map((e) => e.object.spec as V1LeaseSpec);
        const taken = all.findIndex((spec) => spec.holderIdentity === next);
        return taken < 0 ? undefined : all.slice(0, taken);
      });
      return renewTime({ spec: specs.filter((spec) => spec.holderIdentity === holder).at(-1) });
    },
  };
}

/**
 * A TCP relay to the API server whose cut() partitions its clients: no new connection, and no
 * byte of a request reaches the server any more, so every later request fails (refused, or timed
 * out). A response already on its way is still delivered: cutting both ways could drop the reply
 * to a renewal the server had written, and the leader, rightly unaware of that renewal, would
 * stop a renew interval before the Lease's renewTime + duration, measuring something else.
 */
async function relay(kc: KubeConfig) {
  const target = new URL(kc.getCurrentCluster()!.server);
  const pairs = new Set<{ client: Socket; upstream: Socket }>();
  const server = createServer((client) => {
    const upstream = connect(Number(target.port), target.hostname);
    const pair = { client, upstream };
    pairs.add(pair);
    for (const s of [client, upstream]) s.on('error', () => s.destroy());
    // After a cut the pipe no longer ends the upstream connection when the client's ends.
    client.on('close', () => {
      pairs.delete(pair);
      upstream.destroy();
    });
    client.pipe(upstream).pipe(client);
  });
  server.listen(0, target.hostname);
  await once(server, 'listening');
  const { port } = server.address() as { port: number };
  const via = new KubeConfig();
  via.loadFromOptions({
    clusters: kc.clusters.map((c) => ({ ...c, server: `https://${target.hostname}:${port}` })),
    users: kc.users,
    contexts: kc.contexts,
    currentContext: kc.currentContext,
  });
  const link = {
    kubeConfig: via,
    cut: () => {
      server.close();
      for (const { client, upstream } of pairs) client.unpipe(upstream);
    },
    /** Ends every connection (the end of the test). */
    close: () => {
      server.close();
      for (const { client } of pairs) client.destroy();
    },
  };
  closers.push(link.close);
  return link;
}

describe('leader election on a real Lease (lease 3 s, renew 1 s, retry 0.5 s)', () => {
  it('elects exactly one of two candidates; stop() releases, and the other leads at once', async () => {
    const { candidate, overlaps } = election('graceful');
    const a = candidate('a');
    const b = candidate('b');
    a.elector.start();
    b.elector.start();
    const first = await Promise.race([a.started.then(() => a), b.started.then(() => b)]);
    const second = first === a ? b : a;

    // The leader renews twice while the other keeps trying every 0.5 s and stays a follower.
    const acquired = await readLease('graceful');
    const renewed = await leaseUntil('graceful', (l) => renewTime(l) >= renewTime(acquired) + 2000);
    expect([a.elector.isLeader, b.elector.isLeader].filter(Boolean)).toHaveLength(1);
    expect(acquired.spec).toMatchObject({ holderIdentity: first.identity, leaseTransitions: 0 });

    await first.elector.stop();
    expect(first.elector.isLeader).toBe(false);
    const stoppedAt = await first.stopped;
    expect(stoppedAt).toBeLessThanOrEqual(await second.started);
    // Released: the other leads before the claim last seen would have expired, which without the
    // release it cannot do, however loaded the machine.
    expect(await second.started).toBeLessThan(renewTime(renewed) + LEASE_MS);

    const lease = await readLease('graceful');
    expect(lease.spec).toMatchObject({
      holderIdentity: second.identity,
      leaseTransitions: 1,
      leaseDurationSeconds: 3,
    });
    expect(lease.spec!.renewTime).toMatch(/^\d{4}-\d\d-\d\dT\d\d:\d\d:\d\d\.\d{6}Z$/);
    expect(overlaps).toEqual([]);
  });

  it('after a crash (no release), the other leads once the lease has expired', async () => {
    const { candidate, crash, overlaps } = election('crash');
    const writes = await leaseWrites('crash');
    const a = candidate('a');
    const b = candidate('b');
    a.elector.start();
    await a.started;
    b.elector.start();

    await crash(a);
    const lastRenewal = await writes.lastRenewal('a', 'b');
    const takeover = (await b.started) - lastRenewal;
    expect(takeover).toBeGreaterThanOrEqual(LEASE_MS);
    // The other's retry interval (0.5 s), then a read and a write on a loaded API server; waiting
    // a second lease out would still fail.
    expect(takeover).toBeLessThan(LEASE_MS + 2500);

    expect((await readLease('crash')).spec).toMatchObject({ holderIdentity: 'b', leaseTransitions: 1 });
    expect(overlaps).toEqual([]);
  });

  it('a leader cut off from the API server stops leading by its lease expiry, before the other starts', async () => {
    const { candidate, overlaps } = election('partition');
    const link = await relay(kubeConfig());
    const writes = await leaseWrites('partition');
    const a = candidate('a', link.kubeConfig);
    const b = candidate('b');
    a.elector.start();
    await a.started;
    b.elector.start();

    link.cut();
    const stoppedAt = await a.stopped;
    const startedAt = await b.started;
    const lastRenewal = await writes.lastRenewal('a', 'b');
    // Less 1 ms: the expiry timer runs on the monotonic clock, both ends are Date.now() rounded to
    // the millisecond (a fresh-clone run measured 2,999 ms); stopping early is the safe side.
    expect(stoppedAt - lastRenewal).toBeGreaterThanOrEqual(LEASE_MS - 1);
    // Its own clock, not a failed renewal's timing; the margin covers the expiry timer firing late
    // on a loaded event loop.
    expect(stoppedAt - lastRenewal).toBeLessThan(LEASE_MS + 1000);
    expect(startedAt).toBeGreaterThanOrEqual(stoppedAt);
    expect(a.elector.isLeader).toBe(false);

    // Cut off, `a` keeps trying as a follower; it can write nothing, so `b`'s claim stands.
    expect((await readLease('partition')).spec).toMatchObject({ holderIdentity: 'b', leaseTransitions: 1 });
    expect(overlaps).toEqual([]);
  });
});
