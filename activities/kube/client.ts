import {
  KubeConfig,
  Observable,
  type ApiConstructor,
  type ApiType,
  type ConfigurationOptions,
  type ObservableMiddleware,
} from '@kubernetes/client-node';

let cached: { source: string | undefined; config: KubeConfig } | undefined;

/**
 * The kubeconfig every activity talks to the cluster with: `loadFromDefault()`, so `KUBECONFIG`
 * when set, else `~/.kube/config`, else the in-cluster service account. Loaded once and reused;
 * loaded again only when `KUBECONFIG` itself changes (tests point one process at another user).
 */
export function kubeConfig(): KubeConfig {
  const source = process.env.KUBECONFIG;
  if (!cached || cached.source !== source) {
    const config = new KubeConfig();
    config.loadFromDefault();
    cached = { source, config };
  }
  return cached.config;
}

/** An API client of the given class on `kubeConfig()`, e.g. `kubeApi(AppsV1Api)`. */
export function kubeApi<T extends ApiType>(api: ApiConstructor<T>): T {
  return kubeConfig().makeApiClient(api);
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
