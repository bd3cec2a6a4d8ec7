import { CustomObjectsApi, KubeConfig, PatchStrategy, setHeaderOptions } from '@kubernetes/client-node';
import net from 'node:net';
import { API_VERSION, GROUP, VERSION } from '../../api/common';
import { kinds } from '../../api/kinds';
import {
  ObjectWatch,
  armadaResource,
  type ArmadaObject,
  type Change,
  type WatchOptions,
} from '../../bridge/watch';
import { kubeConfig, uniqueName } from '../helpers/env';
import { installCrds, kubectl } from '../helpers/kube';

const namespace = uniqueName('watch');
const api = kubeConfig().makeApiClient(CustomObjectsApi);
const where = { group: GROUP, version: VERSION, namespace, plural: kinds.ArmadaChart.plural };

const createChart = (name: string) =>
  api.createNamespacedCustomObject({
    ...where,
    body: {
      apiVersion: API_VERSION,
      kind: 'ArmadaChart',
      metadata: { name },
      spec: { release: 'x', namespace: 'apps', source: { type: 'local', location: 'charts/x' } },
    },
  });
const setRelease = (name: string, release: string) =>
  api.patchNamespacedCustomObject(
    { ...where, name, body: { spec: { release } } },
    setHeaderOptions('Content-Type', PatchStrategy.MergePatch),
  );
const deleteChart = (name: string) => api.deleteNamespacedCustomObject({ ...where, name });
const releaseOf = (obj: ArmadaObject | undefined) => (obj?.spec as { release?: string } | undefined)?.release;

/** What a watch delivered and logged, and promises for what is still to come. */
class Recorder {
  readonly changes: string[] = [];
  readonly errors: Record<string, unknown>[] = [];
  private waiters: { done: () => boolean; resolve: () => void }[] = [];

  readonly onChange = (obj: ArmadaObject, change: Change) => {
    this.changes.push(`${change} ${obj.metadata.name}`);
    this.wake();
  };
  readonly log: NonNullable<WatchOptions['log']> = (level, message, fields) => {
    if (level === 'error') this.errors.push({ message, ...fields });
    this.wake();
  };

  /** The changes delivered for one object, in order. */
  of(name: string): string[] {
    return this.changes.filter((c) => c.endsWith(` ${name}`)).map((c) => c.split(' ')[0]);
  }

  /** Resolves once `change` has been delivered for `name` (at once if it already was). */
  arrived(change: Change, name: string): Promise<void> {
    return this.until(() => this.changes.includes(`${change} ${name}`));
  }

  /** Resolves once an error has been logged. */
  failed(): Promise<void> {
    return this.until(() => this.errors.length > 0);
  }

  private until(done: () => boolean): Promise<void> {
    if (done()) return Promise.resolve();
    return new Promise((resolve) => this.waiters.push({ done, resolve }));
  }

  private wake(): void {
    this.waiters = this.waiters.filter((w) => !(w.done() && (w.resolve(), true)));
  }
}

const watches: ObjectWatch[] = [];
/** An ObjectWatch of this file's namespace, stopped in afterAll. */
function watching(recorder: Recorder, opts: Partial<WatchOptions> = {}): ObjectWatch {
  const watch = new ObjectWatch({
    kubeConfig: kubeConfig(),
    resource: armadaResource('ArmadaChart'),
    namespaces: [namespace],
    resyncSeconds: 3600,
    view: (obj) => obj,
    onChange: recorder.onChange,
    log: recorder.log,
    ...opts,
  });
  watches.push(watch);
  return watch;
}

beforeAll(async () => {
  await installCrds();
  await kubectl('create', 'namespace', namespace);
});
afterAll(async () => {
  for (const watch of watches) watch.stop();
  await kubectl('delete', 'namespace', namespace, '--wait=false');
});

describe('ObjectWatch on a real API server', () => {
  it('delivers add, update and delete in order, and the cache follows', async () => {
    await createChart('listed');
    const r = new Recorder();
    const watch = watching(r);
    await watch.start();
    // Listed before start() resolved: cached and delivered already.
    expect(r.of('listed')).toEqual(['add']);
    expect(watch.get(namespace, 'listed')).toMatchObject({
      apiVersion: API_VERSION,
      kind: 'ArmadaChart',
      metadata: { name: 'listed', namespace },
    });

    await createChart('web');
    await r.arrived('add', 'web');
    expect(releaseOf(watch.get(namespace, 'web'))).toBe('x');

    await setRelease('web', 'y');
    await r.arrived('update', 'web');
    expect(releaseOf(watch.get(namespace, 'web'))).toBe('y');

    await deleteChart('web');
    await r.arrived('delete', 'web');
    expect(watch.get(namespace, 'web')).toBeUndefined();
    expect(watch.list(namespace).map((o) => o.metadata.name)).toContain('listed');
    expect(watch.list().map((o) => o.metadata.name)).not.toContain('web');

    expect(r.of('web')).toEqual(['add', 'update', 'delete']);
    expect(r.errors).toEqual([]);
  });

  it('hands every cached object to onChange as resync every resyncSeconds', async () => {
    await createChart('resync-a');
    await createChart('resync-b');
    const r = new Recorder();
    const watch = watching(r, { resyncSeconds: 1 });
    await watch.start();
    await Promise.all([r.arrived('resync', 'resync-a'), r.arrived('resync', 'resync-b')]);
    expect(r.of('resync-a').slice(0, 2)).toEqual(['add', 'resync']);
    expect(r.of('resync-b').slice(0, 2)).toEqual(['add', 'resync']);
  });

  it('misses nothing that changed while it was stopped: start() lists again and reports the difference', async () => {
    for (const name of ['gap-kept', 'gap-changed', 'gap-deleted']) await createChart(name);
    const r = new Recorder();
    const watch = watching(r);
    await watch.start();
    watch.stop();

    await setRelease('gap-changed', 'z');
    await deleteChart('gap-deleted');
    await createChart('gap-new');
    await watch.start();
    expect(r.of('gap-kept')).toEqual(['add']);
    expect(r.of('gap-changed')).toEqual(['add', 'update']);
    expect(r.of('gap-deleted')).toEqual(['add', 'delete']);
    expect(r.of('gap-new')).toEqual(['add']);
    expect(releaseOf(watch.get(namespace, 'gap-changed'))).toBe('z');
    expect(watch.get(namespace, 'gap-deleted')).toBeUndefined();

    // And it watches again.
    await setRelease('gap-kept', 'w');
    await r.arrived('update', 'gap-kept');
    expect(r.errors).toEqual([]);
  });

  it('survives a broken connection: logs the error, watches again from the last resourceVersion', async () => {
    const relay = await startRelay(new URL(kubeConfig().getCurrentCluster()!.server));
    try {
      await createChart('cut-changed');
      await createChart('cut-deleted');
      const r = new Recorder();
      const watch = watching(r, { kubeConfig: relayed(relay.port), backoffMs: () => 100 });
      await watch.start();
      const listed = r.changes.length;

      relay.cut();
      await r.failed();
      expect(r.errors[0]).toMatchObject({ kind: 'ArmadaChart', namespace, attempt: 1 });
      await setRelease('cut-changed', 'v');
      await deleteChart('cut-deleted');
      await createChart('cut-new');

      relay.mend();
      await r.arrived('add', 'cut-new');
      // Watched on from the resourceVersion: the server's order (a fresh list would report the
      // delete first, and nothing for objects unchanged since).
      expect(r.changes.slice(listed)).toEqual(['update cut-changed', 'delete cut-deleted', 'add cut-new']);
      expect(releaseOf(watch.get(namespace, 'cut-changed'))).toBe('v');
      expect(watch.get(namespace, 'cut-deleted')).toBeUndefined();
      watch.stop();
    } finally {
      await relay.close();
    }
  });
});

/** A TCP relay to the API server that the test can cut: a real broken connection, TLS and all. */
async function startRelay(to: URL) {
  const sockets = new Set<net.Socket>();
  let open = true;
  const server = net.createServer((client) => {
    if (!open) return client.destroy();
    const upstream = net.connect(Number(to.port), to.hostname);
    for (const socket of [client, upstream]) {
      sockets.add(socket);
      socket.on('close', () => sockets.delete(socket));
      socket.on('error', () => [client, upstream].forEach((s) => s.destroy()));
    }
    client.pipe(upstream).pipe(client);
  });
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  const cut = () => {
    open = false;
    for (const socket of sockets) socket.destroy();
  };
  return {
    port: (server.address() as net.AddressInfo).port,
    /** Breaks every connection and refuses new ones. */
    cut,
    mend: () => (open = true),
    close: () => {
      cut();
      return new Promise<void>((resolve) => server.close(() => resolve()));
    },
  };
}

/** The sandbox's kubeconfig with the API server reached through the relay on `port`. */
function relayed(port: number): KubeConfig {
  const direct = kubeConfig();
  const cluster = direct.getCurrentCluster()!;
  const kc = new KubeConfig();
  kc.loadFromOptions({
    clusters: [{ ...cluster, server: `https://127.0.0.1:${port}` }],
    users: direct.users,
    contexts: direct.contexts,
    currentContext: direct.currentContext,
  });
  return kc;
}
