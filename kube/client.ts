import {
  ApiException,
  KubeConfig,
  Observable,
  type ApiConstructor,
  type ApiType,
  type ConfigurationOptions,
  type ObservableMiddleware,
} from '@kubernetes/client-node';
import { ApplicationFailure } from '@temporalio/common';
import { AsyncLocalStorage } from 'node:async_hooks';
import http from 'node:http';
import https from 'node:https';
import { NonRetryable } from '../core/failures';
import type { ServiceAccountRef } from '../core/contracts/acting-as';
import { retryingThrottledApi } from './throttled';
import { variable } from '../core/environment';

let cached: { source: string | undefined; config: KubeConfig } | undefined;
/** Set inside asCaller: the caller's kubeconfig, loaded once for the scope. */
const callerScope = new AsyncLocalStorage<KubeConfig>();

/**
 * The one place that decides which kubeconfig the product uses: `ARMADA_KUBECONFIG` when set
 * (e.g. a ServiceAccount's, while `KUBECONFIG` stays a person's own), else undefined, meaning
 * the usual resolution: `KUBECONFIG`, else `~/.kube/config`, else the in-cluster ServiceAccount.
 * The Kubernetes client (`kubeConfig()`) and every helm call (`kubeconfigEnv()`) follow it;
 * armadactl's permission check does not (`callerKubeConfig()`), nor does anything inside asCaller.
 */
export function armadaKubeconfig(): string | undefined {
  if (callerScope.getStore()) return undefined;
  return variable(process.env, 'ARMADA_KUBECONFIG');
}

/**
 * Runs `work` as the person running armadactl: every kube client (`kubeConfig()`, `kubeApi`) and
 * helm call (`kubeconfigEnv()`) made in it, however deep, uses `callerKubeConfig()` and never
 * `ARMADA_KUBECONFIG`, so code shared with the worker (chart preparation, values_from, helm reads)
 * sees only what the caller may. Scoped to `work`'s async context: a worker running in the same
 * process (the tests) keeps its own kubeconfig.
 */
export function asCaller<T>(work: () => Promise<T>): Promise<T> {
  return callerScope.run(callerKubeConfig(), work);
}

/**
 * The environment of a helm child process: the worker's own, with `KUBECONFIG` pointing at
 * `ARMADA_KUBECONFIG` when that is set, so helm talks to the cluster as the Kubernetes client does.
 */
export function kubeconfigEnv(): NodeJS.ProcessEnv {
  const file = armadaKubeconfig();
  return file ? { ...process.env, KUBECONFIG: file } : process.env;
}

/**
 * The kubeconfig every activity (and the bridge) talks to the cluster with: the file
 * `ARMADA_KUBECONFIG` names, else `loadFromDefault()` (`KUBECONFIG` when set, else
 * `~/.kube/config`, else the in-cluster ServiceAccount). Loaded once and reused; loaded again
 * only when the variable it came from changes (tests point one process at another user).
 */
export function kubeConfig(): KubeConfig {
  const caller = callerScope.getStore();
  if (caller) return caller;
  const file = armadaKubeconfig();
  const source = file ?? variable(process.env, 'KUBECONFIG');
  if (!cached || cached.source !== source) {
    const config = new KubeConfig();
    if (file) config.loadFromFile(file);
    else config.loadFromDefault();
    cached = { source, config: reusingConnections(config) };
  }
  return cached.config;
}

/**
 * The kubeconfig of the person running armadactl: `KUBECONFIG`, else `~/.kube/config`, else the
 * in-cluster ServiceAccount, never `ARMADA_KUBECONFIG`. armadactl asks the API server who the
 * person is and what they may do with it, so a worker's credentials set in the same shell never
 * stand in for theirs. Loaded afresh on every call (one per command).
 */
export function callerKubeConfig(): KubeConfig {
  const config = new KubeConfig();
  config.loadFromDefault();
  return reusingConnections(config);
}

/**
 * `config`, its requests sharing one keep-alive connection pool. @kubernetes/client-node 1.4
 * gives every request a new https.Agent, so every API call opened a TLS connection of its own:
 * about 10 ms a GET on the sandbox against 2–4 ms on a kept connection, three of them in every
 * status write, and most of the bridge's and the worker's CPU at 1,000 objects. The agent's
 * options come from the config (CA, client certificate); credentials that change (tokens) are
 * headers, set per request as before.
 */
export function reusingConnections(config: KubeConfig): KubeConfig {
  const authenticate = config.applySecurityAuthentication.bind(config);
  let pool: https.Agent | http.Agent | undefined;
  config.applySecurityAuthentication = async (context) => {
    await authenticate(context);
    const fresh = context.getAgent();
    if (!fresh) return;
    // Only the plain agents: a proxy's (socks, http(s) proxy) is kept as the client made it.
    if (fresh.constructor !== https.Agent && fresh.constructor !== http.Agent) return;
    const options = (fresh as http.Agent & { options: http.AgentOptions }).options;
    pool ??=
      fresh instanceof https.Agent
        ? new https.Agent({ ...options, keepAlive: true })
        : new http.Agent({ ...options, keepAlive: true });
    context.setAgent(pool);
  };
  return config;
}

/** The user name Kubernetes gives a ServiceAccount, which impersonation names. */
export function serviceAccountUser(sa: ServiceAccountRef): string {
  return `system:serviceaccount:${sa.namespace}:${sa.name}`;
}

/** `kubeConfig()` acting as a ServiceAccount (Impersonate-User), one per ServiceAccount and source config. */
const impersonating = new WeakMap<KubeConfig, Map<string, KubeConfig>>();

function actingAs(base: KubeConfig, user: string): KubeConfig {
  let byUser = impersonating.get(base);
  if (!byUser) impersonating.set(base, (byUser = new Map()));
  let config = byUser.get(user);
  if (!config) {
    const current = base.getCurrentUser()?.name;
    config = new KubeConfig();
    config.loadFromOptions({
      clusters: base.clusters,
      contexts: base.contexts,
      currentContext: base.currentContext,
      // The API server adds the ServiceAccount's groups itself (system:serviceaccounts, …:<namespace>).
      users: base.users.map((u) => (u.name === current ? { ...u, impersonateUser: user } : u)),
    });
    byUser.set(user, reusingConnections(config));
  }
  return config;
}

/**
 * An API client of the given class on `kubeConfig()`, e.g. `kubeApi(AppsV1Api)`; with `actAs`,
 * every request impersonates that ServiceAccount, so the run can do only what it may. A request
 * the server turns away with HTTP 429 is asked again after its Retry-After (kube/throttled.ts).
 */
export function kubeApi<T extends ApiType>(api: ApiConstructor<T>, actAs?: ServiceAccountRef): T {
  const base = kubeConfig();
  return retryingThrottledApi((actAs ? actingAs(base, serviceAccountUser(actAs)) : base).makeApiClient(api));
}

/** helm's flag for the same impersonation (`--kube-as-user`), or none. */
export function helmActingAs(actAs: ServiceAccountRef | undefined): string[] {
  return actAs ? ['--kube-as-user', serviceAccountUser(actAs)] : [];
}

/**
 * Per-call options that abort the HTTP request when `signal` aborts (activity cancellation, a
 * request deadline): `api.listNamespacedPod({ namespace }, abortWith(signal))`. The client's
 * own middleware (authentication) still runs; this one is appended after it.
 */
export function abortWith(signal: AbortSignal): ConfigurationOptions {
  const middleware: ObservableMiddleware = {
    pre: (context) => {
      context.setSignal(signal);
      return new Observable(Promise.resolve(context));
    },
    post: (response) => new Observable(Promise.resolve(response)),
  };
  return { middleware: [middleware], middlewareMergeStrategy: 'append' };
}

/** `HTTP 404: deployments.apps "web" not found`: the API server's own message, not the client's dump. */
export function apiMessage(err: unknown): string {
  if (!(err instanceof ApiException)) return err instanceof Error ? err.message : String(err);
  let body: unknown = err.body;
  if (typeof body === 'string') {
    try {
      body = JSON.parse(body);
    } catch {
      // not JSON: shown as it is
    }
  }
  const message = (body as { message?: unknown } | null)?.message;
  return `HTTP ${err.code}: ${typeof message === 'string' ? message : String(err.body).slice(0, 500)}`;
}

/** An API error with what was being done to which object; a 403 is final (Forbidden), the rest retried. */
export function apiFailure(action: string, err: unknown): Error {
  const message = `${action}: ${apiMessage(err)}`;
  if (err instanceof ApiException && err.code === 403) {
    return ApplicationFailure.nonRetryable(message, NonRetryable.Forbidden);
  }
  return new Error(message, { cause: err });
}

/** Whether the API server answered `err` with HTTP `code`. */
export const isStatus = (err: unknown, code: number): boolean =>
  err instanceof ApiException && err.code === code;
