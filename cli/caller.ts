import {
  ApiException,
  AuthenticationV1Api,
  AuthorizationV1Api,
  type ConfigurationOptions,
  type V1ResourceAttributes,
} from '@kubernetes/client-node';
import { userInfo } from 'node:os';
import { GROUP } from '../api/common';
import { kinds } from '../api/kinds';
import { abortWith, apiMessage, callerKubeConfig } from '../kube/client';
import { CLUSTER_TIMEOUT_MS } from '../runs/places';
import type { CommandOption } from './command';
import type { ObjectRef } from './ownership';
import { variable } from '../core/environment';

/** The option (`--as-temporal-admin`) with which a caller steers as a Temporal administrator, without asking Kubernetes. */
export const TEMPORAL_ADMIN_OPTION = 'as-temporal-admin';

export const TEMPORAL_ADMIN: Record<string, CommandOption> = {
  [TEMPORAL_ADMIN_OPTION]: {
    type: 'boolean',
    description: 'skip the cluster and send the command to Temporal yourself, as temporal-admin:$USER',
  },
};

/**
 * What a person must be allowed on an object: `patch` to steer its runs, as for the action
 * annotation the bridge acts on (docs/explanation/security.md, "Who may steer a run"); `delete` to delete it.
 */
export type ObjectVerb = 'patch' | 'delete';

/** The permission to check before acting on an object (see ObjectVerb). */
export function steeringPermission(object: ObjectRef, verb: ObjectVerb = 'patch'): V1ResourceAttributes {
  return {
    group: GROUP,
    resource: kinds[object.kind].plural,
    verb,
    namespace: object.namespace,
    name: object.name,
  };
}

/** `armadacharts.armada.airshipit.org team-b/web`: the object as RBAC names it. */
export function rbacName(object: ObjectRef): string {
  return `${kinds[object.kind].plural}.${GROUP} ${object.namespace}/${object.name}`;
}

/** What armadactl says when the API server denies `username` the permission. */
export function steeringRefusal(username: string, object: ObjectRef, verb: ObjectVerb = 'patch'): string {
  return `you (${username}) may not ${verb} ${rbacName(object)}`;
}

/**
 * Who a Temporal administrator is in a run's record: `temporal-admin:alice`, the login name
 * being all armadactl knows of them; Temporal's own access control (its namespace, mTLS
 * certificates, API keys) is what vouches for them.
 */
export function temporalAdminName(login: string | undefined): string {
  return `temporal-admin:${login || 'unknown'}`;
}

/** The local login name of the person running armadactl, for the record of a Temporal administrator. */
export function loginName(): string | undefined {
  try {
    return variable(process.env, 'USER') || userInfo().username;
  } catch {
    // no passwd entry (a bare container): the record says unknown
    return undefined;
  }
}

/** No cluster to ask: none configured, or none answering within the timeout. */
class NoCluster extends Error {
  override name = 'NoCluster';
}

/**
 * The caller's own cluster (callerKubeConfig) and a way to ask it one thing within the timeout:
 * an HTTP answer (401, 403, ...) is the API server's word on this caller and throws an Error;
 * no kubeconfig, or no answer in time, throws NoCluster. `asked` says what is being checked.
 */
function callersCluster(asked: string) {
  let config;
  try {
    config = callerKubeConfig();
  } catch (err) {
    throw new NoCluster(`${asked}: no kubeconfig (${(err as Error).message})`, { cause: err });
  }
  const server = config.getCurrentCluster()?.server;
  if (!server) throw new NoCluster(`${asked}: your kubeconfig names no current cluster`);
  const ask = async <T>(call: (options: ConfigurationOptions) => Promise<T>): Promise<T> => {
    try {
      return await call(abortWith(AbortSignal.timeout(CLUSTER_TIMEOUT_MS)));
    } catch (err) {
      if (err instanceof ApiException)
        throw new Error(`${asked}: the API server at ${server} answered ${apiMessage(err)}`, { cause: err });
      throw new NoCluster(
        `${asked}: no cluster answered at ${server} within ${CLUSTER_TIMEOUT_MS / 1000} s (${(err as Error).message})`,
        { cause: err },
      );
    }
  };
  /** Who the API server says the caller is (a SelfSubjectReview), and whether it allows them `permission`. */
  const review = async (
    permission: V1ResourceAttributes,
  ): Promise<{ username: string; allowed: boolean }> => {
    const authentication = config.makeApiClient(AuthenticationV1Api);
    const self = await ask((options) =>
      authentication.createSelfSubjectReview(
        { body: { apiVersion: 'authentication.k8s.io/v1', kind: 'SelfSubjectReview' } },
        options,
      ),
    );
    const username = self.status?.userInfo?.username;
    if (!username) throw new Error(`${asked}: the API server at ${server} did not say who you are`);
    const authorization = config.makeApiClient(AuthorizationV1Api);
    const access = await ask((options) =>
      authorization.createSelfSubjectAccessReview(
        {
          body: {
            apiVersion: 'authorization.k8s.io/v1',
            kind: 'SelfSubjectAccessReview',
            spec: { resourceAttributes: permission },
          },
        },
        options,
      ),
    );
    return { username, allowed: access.status?.allowed === true };
  };
  return { review };
}

/**
 * Who deletes `object` (or undoes or retries its runs: `verb` patch), as the run records it
 * (`by`), once the API server has said they may: their authenticated username (a
 * SelfSubjectReview) after a SelfSubjectAccessReview of `verb` on the object, both with the
 * caller's own kubeconfig (callerKubeConfig). Throws, and nothing is to be sent, when the review
 * denies it, the API server answers with an error, or no cluster answers within the timeout:
 * without a cluster only a Temporal administrator steers (`--as-temporal-admin`), and the
 * message says so.
 */
export async function authorizedSteerer(object: ObjectRef, verb: ObjectVerb = 'patch'): Promise<string> {
  const withoutCluster = `without one, only a Temporal administrator steers runs (--${TEMPORAL_ADMIN_OPTION})`;
  try {
    const { username, allowed } = await callersCluster(
      `cannot check that you may ${verb} ${rbacName(object)}`,
    ).review(steeringPermission(object, verb));
    if (!allowed) throw new Error(steeringRefusal(username, object, verb));
    return username;
  } catch (err) {
    if (err instanceof NoCluster) throw new Error(`${err.message}; ${withoutCluster}`, { cause: err });
    throw err;
  }
}

/**
 * The right a Temporal administrator shows a cluster that answers: `update` of ArmadaPolicies,
 * which only a platform administrator holds (they decide every tenant's boundaries anyway).
 */
export const TEMPORAL_ADMIN_PERMISSION: V1ResourceAttributes = {
  group: GROUP,
  resource: 'armadapolicies',
  verb: 'update',
};

/**
 * Who steers as a Temporal administrator (`--as-temporal-admin`), straight to Temporal: recorded
 * as `temporal-admin:$USER`. When the caller's cluster answers, they must hold
 * TEMPORAL_ADMIN_PERMISSION there, else it throws naming the right: talking to Temporal directly
 * skips the API server's authentication of the action, so it is an administrator's path. Without
 * a cluster (runs applied from files, no kubeconfig) Temporal's own access control is all there is.
 */
export async function temporalAdmin(): Promise<string> {
  const permission = `${TEMPORAL_ADMIN_PERMISSION.verb} ${TEMPORAL_ADMIN_PERMISSION.resource}.${GROUP}`;
  try {
    const { username, allowed } = await callersCluster(
      `cannot check that you may ${permission} (--${TEMPORAL_ADMIN_OPTION})`,
    ).review(TEMPORAL_ADMIN_PERMISSION);
    if (!allowed)
      throw new Error(
        `you (${username}) may not ${permission}: --${TEMPORAL_ADMIN_OPTION} is a platform administrator's path where a cluster answers; steer without it, through the cluster`,
      );
  } catch (err) {
    if (!(err instanceof NoCluster)) throw err;
  }
  return temporalAdminName(loginName());
}
