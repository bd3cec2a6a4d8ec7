import {
  ApiException,
  CustomObjectsApi,
  KubernetesObjectApi,
  Watch,
  type ConfigurationOptions,
  type KubeConfig,
  type V1ObjectMeta,
} from '@kubernetes/client-node';
import { setTimeout as sleep } from 'node:timers/promises';
import { abortWith, apiMessage } from '../kube/client';
import { GROUP, VERSION } from '../api/common';
import { kinds, type KindName } from '../api/kinds';

/** A watched object as the API server returns it: an armada custom resource, or one of Helm's. */
export interface ArmadaObject {
  apiVersion: string;
  kind: string;
  metadata: V1ObjectMeta & { name: string; namespace: string };
  spec?: unknown;
  status?: unknown;
}

export type Change = 'add' | 'update' | 'delete' | 'resync';

/** What one ObjectWatch lists and watches. */
export interface WatchedResource {
  kind: string;
  /** API group; '' for the core group (Services, ConfigMaps). */
  group: string;
  version: string;
  plural: string;
  /** Only objects with these labels, e.g. `app.kubernetes.io/managed-by=Helm`. */
  labelSelector?: string;
}

/** One of the four armada kinds as a watched resource. */
export function armadaResource(kind: KindName): WatchedResource {
  return { kind, group: GROUP, version: VERSION, plural: kinds[kind].plural };
}

export interface WatchOptions<V = ArmadaObject> {
  kubeConfig: KubeConfig;
  resource: WatchedResource;
  /** Namespaces to watch, one list+watch each; 'all' lists and watches cluster-wide. */
  namespaces: string[] | 'all';
  /**
   * Called for every change to the cache, in the order the API server made them, with the view of
   * the object; `previous` is the cached view an update replaced.
   */
  onChange: (view: V, change: Change, previous?: V) => void;
  /**
   * What the cache keeps of each object (`(obj) => obj`: the object itself), built once when the
   * object arrives or changes, and from its last state when it is deleted.
   */
  view: (obj: ArmadaObject) => V;
  /**
   * Which objects the cache keeps (by their view); default all. An object not kept is dropped on
   * arrival and reported to nobody; a cached one that stops being kept leaves without a 'delete'.
   * Objects dropped once come back only with a change of theirs, or a new list (stop, start).
   */
  keep?: (view: V) => boolean;
  /** Every cached object is handed to onChange('resync') this often; default 300. */
  resyncSeconds?: number;
  log?: (level: 'info' | 'warn' | 'error', message: string, fields?: Record<string, unknown>) => void;
  /** Delay before watching again after an error; default 1s, 2s, 4s ... at most 30s. */
  backoffMs?: (attempt: number) => number;
}

/** One cached object: the view of it, and the resourceVersion it was built from. */
interface Cached<V> {
  namespace: string;
  name: string;
  resourceVersion?: string;
  view: V;
}

/** One list+watch: a namespace, or the whole cluster. */
interface Scope {
  namespace?: string;
  /** Where the next watch resumes; empty: list first. */
  resourceVersion: string;
  /** Errors in a row, for the backoff. */
  failures: number;
  /** When the first of those errors came (Date.now()). */
  failingSince: number;
}

interface ObjectList {
  metadata?: { resourceVersion?: string; continue?: string };
  items: ArmadaObject[];
}

/** Objects per page of a list. */
const LIST_PAGE = 500;

/** A watch the API server ended without error is opened again from its resourceVersion at once. */
const WATCH_SECONDS = 300;

const defaultBackoff = (attempt: number): number => Math.min(30_000, 1000 * 2 ** (attempt - 1));

/**
 * How long a list or watch may fail with HTTP 429 before it is an error. A starting API server
 * answers 429 "storage is (re)initializing" while its watch cache fills (npm start's sandbox:
 * a few seconds), and an API server shedding load answers 429 "Too Many Requests": both ask
 * the client to come back later, which the backoff does.
 */
export const WAIT_REQUESTED_MS = 60_000;

/**
 * The level a failed list or watch is logged at: info while the API server asks to wait
 * (HTTP 429) for less than WAIT_REQUESTED_MS of failures in a row, else error.
 */
export function watchFailureLevel(err: unknown, failingForMs: number): 'info' | 'error' {
  const status =
    err instanceof ApiException ? err.code : (err as { statusCode?: unknown } | null)?.statusCode;
  return status === 429 && failingForMs < WAIT_REQUESTED_MS ? 'info' : 'error';
}

const defaultLog: NonNullable<WatchOptions['log']> = (level, message, fields) =>
  (level === 'info' ? console.log : console.error)(JSON.stringify({ level, message, ...fields }));

/**
 * A cache of one kind's objects (or of a view of each, built once per change), kept current by
 * list+watch, that reports every change.
 *
 * Written on client-node's `Watch` rather than its `makeInformer`: that informer stops for good
 * on an error, reports its own `stop()` as an error (an AbortError), and resolves `start()` even
 * when the list failed. Here each scope loops: list (when it has no resourceVersion) → watch from
 * the last resourceVersion → on 410 Gone list again, on any other error log and watch again after
 * a backoff. A list replaces the scope's part of the cache and reports the difference, so objects
 * deleted while no watch ran arrive as 'delete'.
 */
export class ObjectWatch<V = ArmadaObject> {
  private readonly objects = new Map<string, Map<string, Cached<V>>>();
  private readonly scopes: Scope[];
  private readonly customObjects: CustomObjectsApi;
  private readonly objectApi: KubernetesObjectApi;
  private readonly watcher: Watch;
  private readonly log: NonNullable<WatchOptions<V>['log']>;
  private running?: { abort: AbortController; started: Promise<void> };

  constructor(private readonly opts: WatchOptions<V>) {
    const namespaces = opts.namespaces === 'all' ? [undefined] : [...new Set(opts.namespaces)];
    this.scopes = namespaces.map((namespace) => ({
      namespace,
      resourceVersion: '',
      failures: 0,
      failingSince: 0,
    }));
    this.customObjects = opts.kubeConfig.makeApiClient(CustomObjectsApi);
    this.objectApi = KubernetesObjectApi.makeApiClient(opts.kubeConfig);
    this.watcher = new Watch(opts.kubeConfig);
    this.log = opts.log ?? defaultLog;
  }

  /**
   * Starts watching; resolves once every scope has been listed and each listed object delivered.
   * A failed list is retried (with the backoff) until it succeeds; rejects if stopped before.
   * After `stop()`, `start()` lists again and reports what changed meanwhile.
   */
  start(): Promise<void> {
    if (this.running) return this.running.started;
    const abort = new AbortController();
    const { signal } = abort;
    const listed = this.scopes.map((scope) => {
      scope.resourceVersion = '';
      return new Promise<void>((resolve, reject) => {
        signal.addEventListener('abort', () =>
          reject(new Error(`watch of ${this.opts.resource.plural} stopped`)),
        );
        void this.loop(scope, signal, resolve);
      });
    });
    const resync = setInterval(
      () => this.entries().forEach((cached) => this.deliver(cached, 'resync')),
      (this.opts.resyncSeconds ?? 300) * 1000,
    );
    signal.addEventListener('abort', () => clearInterval(resync));
    this.running = { abort, started: Promise.all(listed).then(() => undefined) };
    return this.running.started;
  }

  /** Ends every watch, list, backoff and the resync timer; the cache stays as it was. */
  stop(): void {
    this.running?.abort.abort();
    this.running = undefined;
  }

  get(namespace: string, name: string): V | undefined {
    return this.objects.get(namespace)?.get(name)?.view;
  }

  /** Cached objects of one namespace, or of all. */
  list(namespace?: string): V[] {
    return this.entries(namespace).map((cached) => cached.view);
  }

  private entries(namespace?: string): Cached<V>[] {
    const maps = namespace === undefined ? [...this.objects.values()] : [this.objects.get(namespace)];
    return maps.flatMap((byName) => [...(byName?.values() ?? [])]);
  }

  /** List+watch one scope until stopped; never rejects. */
  private async loop(scope: Scope, signal: AbortSignal, listed: () => void): Promise<void> {
    const fields = { kind: this.opts.resource.kind, namespace: scope.namespace ?? 'all' };
    while (!signal.aborted) {
      try {
        if (!scope.resourceVersion) {
          await this.relist(scope, signal);
          listed();
        }
        await this.watch(scope, signal);
      } catch (err) {
        if (signal.aborted) return;
        if ((err as { statusCode?: number }).statusCode === 410) {
          this.log('info', 'watch expired (410 Gone): listing again', fields);
          scope.resourceVersion = '';
          continue;
        }
        const attempt = ++scope.failures;
        if (attempt === 1) scope.failingSince = Date.now();
        const delay = (this.opts.backoffMs ?? defaultBackoff)(attempt);
        const level = watchFailureLevel(err, Date.now() - scope.failingSince);
        this.log(
          level,
          `${level === 'info' ? 'the API server asks to wait' : 'watch failed'}; retrying in ${delay} ms`,
          {
            ...fields,
            attempt,
            error: apiMessage(err),
          },
        );
        await sleep(delay, undefined, { signal }).catch(() => undefined);
      }
    }
  }

  /**
   * Lists the scope, reports the difference to the cache, and sets where the watch starts. The
   * list comes in pages of LIST_PAGE objects, each made into views before the next is asked for,
   * so that a list of many objects the cache keeps little of (or none) never holds them all.
   */
  private async relist(scope: Scope, signal: AbortSignal): Promise<void> {
    const listedKeys = new Set<string>();
    let resourceVersion: string | undefined;
    let next: string | undefined;
    do {
      const page = await this.listScope(scope.namespace, next, abortWith(signal));
      signal.throwIfAborted();
      for (const obj of page.items) {
        listedKeys.add(`${obj.metadata.namespace}/${obj.metadata.name}`);
        this.upsert(obj);
      }
      resourceVersion = page.metadata?.resourceVersion;
      next = page.metadata?.continue || undefined;
    } while (next);
    if (!resourceVersion) throw new Error(`the list of ${this.opts.resource.plural} has no resourceVersion`);
    for (const cached of this.entries(scope.namespace)) {
      if (!listedKeys.has(`${cached.namespace}/${cached.name}`)) this.remove(cached);
    }
    scope.resourceVersion = resourceVersion;
    scope.failures = 0;
  }

  /**
   * One page of a list, from `next` (a continue token) or from the start. Custom and named-group
   * resources come back as the API server wrote them; the core group has no generic path in
   * client-node, so its lists go through KubernetesObjectApi (typed objects, not abortable: a
   * stop waits for the page to return). An expired continue token is a 410: listed again.
   */
  private async listScope(
    namespace: string | undefined,
    next: string | undefined,
    options: ConfigurationOptions,
  ): Promise<ObjectList> {
    const { group, version, plural, kind, labelSelector } = this.opts.resource;
    const page = { labelSelector, limit: LIST_PAGE, _continue: next };
    if (!group) {
      return (await this.objectApi.list(
        version,
        kind,
        namespace,
        undefined,
        undefined,
        undefined,
        undefined,
        labelSelector,
        LIST_PAGE,
        next,
      )) as unknown as ObjectList;
    }
    return (await (namespace === undefined
      ? this.customObjects.listClusterCustomObject({ group, version, plural, ...page }, options)
      : this.customObjects.listNamespacedCustomObject(
          { group, version, namespace, plural, ...page },
          options,
        ))) as ObjectList;
  }

  /**
   * Watches the scope from its resourceVersion, applying each event to the cache. Resolves when
   * the API server ends the watch (after WATCH_SECONDS); rejects on a failed request, an ERROR
   * event (410 Gone among them) or a broken connection, with the HTTP status as `statusCode`.
   */
  private watch(scope: Scope, signal: AbortSignal): Promise<void> {
    const { group, version, plural, labelSelector } = this.opts.resource;
    const api = group ? `/apis/${group}/${version}` : `/api/${version}`;
    const path =
      scope.namespace === undefined ? `${api}/${plural}` : `${api}/namespaces/${scope.namespace}/${plural}`;
    const query = {
      resourceVersion: scope.resourceVersion,
      allowWatchBookmarks: true,
      timeoutSeconds: WATCH_SECONDS,
      ...(labelSelector && { labelSelector }),
    };
    return new Promise((resolve, reject) => {
      let failure: Error | undefined;
      const onEvent = (type: string, obj: ArmadaObject & { code?: number; message?: string }) => {
        if (signal.aborted) return;
        if (type === 'ERROR') {
          // A Status; the API server ends the watch after it.
          failure = Object.assign(new Error(obj.message ?? 'watch error'), { statusCode: obj.code });
          return;
        }
        if (type === 'ADDED' || type === 'MODIFIED') this.upsert(obj);
        else if (type === 'DELETED') this.remove(this.cached(obj));
        scope.resourceVersion = obj.metadata.resourceVersion ?? scope.resourceVersion;
        scope.failures = 0;
      };
      let request: AbortController | undefined;
      const cancel = () => request?.abort();
      const done = (err: unknown) => {
        signal.removeEventListener('abort', cancel);
        if (err || failure) reject(err ?? failure);
        else resolve();
      };
      signal.addEventListener('abort', cancel);
      // client-node hands the request's AbortController back only once the response has begun.
      this.watcher.watch(path, query, onEvent, done).then((controller) => {
        request = controller;
        if (signal.aborted) controller.abort();
      }, done);
    });
  }

  private upsert(obj: ArmadaObject): void {
    const { namespace, name, resourceVersion } = obj.metadata;
    const previous = this.objects.get(namespace)?.get(name);
    if (previous && previous.resourceVersion === resourceVersion) return;
    const cached = this.cached(obj);
    if (this.opts.keep && !this.opts.keep(cached.view)) {
      if (previous) this.drop(previous);
      return;
    }
    let byName = this.objects.get(namespace);
    if (!byName) this.objects.set(namespace, (byName = new Map()));
    byName.set(name, cached);
    this.deliver(cached, previous ? 'update' : 'add', previous);
  }

  private cached(obj: ArmadaObject): Cached<V> {
    const { namespace, name, resourceVersion } = obj.metadata;
    return { namespace, name, resourceVersion, view: this.opts.view(obj) };
  }

  /** Drops an object from the cache, handing `last` (its last state) to onChange. */
  private remove(last: Cached<V>): void {
    if (this.drop(last)) this.deliver(last, 'delete');
  }

  /** Drops an object from the cache without a word; false if it was not there. */
  private drop(last: Cached<V>): boolean {
    const byName = this.objects.get(last.namespace);
    if (!byName?.delete(last.name)) return false;
    if (byName.size === 0) this.objects.delete(last.namespace);
    return true;
  }

  /** onChange must not break the cache: client-node would swallow its error and drop the event. */
  private deliver(cached: Cached<V>, change: Change, previous?: Cached<V>): void {
    try {
      this.opts.onChange(cached.view, change, previous?.view);
    } catch (err) {
      this.log('error', 'onChange failed', {
        kind: this.opts.resource.kind,
        namespace: cached.namespace,
        name: cached.name,
        change,
        error: err instanceof Error ? err.message : String(err),
      });
    }
  }
}
