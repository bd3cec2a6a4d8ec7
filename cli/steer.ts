import {
  ApiException,
  CoreV1Api,
  CustomObjectsApi,
  PatchStrategy,
  setHeaderOptions,
} from '@kubernetes/client-node';
import { setTimeout as sleep } from 'node:timers/promises';
import { GROUP, VERSION } from '../api/common';
import { kinds } from '../api/kinds';
import { abortWith, apiMessage, asCaller, callerKubeConfig, kubeApi } from '../kube/client';
import {
  ACTION_ANNOTATION,
  ACTION_ANNOTATIONS,
  ACTION_EVENT_REASON,
  BY_ANNOTATION,
  GATE_ANNOTATION,
  REASON_ANNOTATION,
} from '../runs/annotations';
import type { ControlCommand } from '../runs/control';
import type { Target } from '../runs/targets';
import { TEMPORAL_ADMIN_OPTION } from './caller';
import { describeRef, readObject } from './cluster';

/** How often armadactl looks whether the bridge has taken the action. */
const POLL_MS = 250;
/** How long one request to the API server may take. */
const REQUEST_TIMEOUT_MS = 10_000;

/** What the bridge answered to an action armadactl wrote: its Event's type and message. */
export interface Steered {
  /** Who the API server says wrote the action (BY_ANNOTATION). */
  by: string;
  type: 'Normal' | 'Warning';
  /** The Event's message: `<by> asked to <command> (<reason>): <the run's answer, or refused: why>`. */
  message: string;
}

/**
 * Steers `target`'s run through Kubernetes, as the person running armadactl (asCaller: their own
 * kubeconfig): writes the action annotations on the object (the command, reason and gate; `by`
 * removed, so the API server's admission policy fills it in with the authenticated username),
 * then waits for the bridge to take the action and reads its answer from the `Action` Event the
 * bridge records for the object. RBAC (`patch` on the object) and the admission policies decide,
 * as for `kubectl annotate`. Throws when the API server refuses the write (its message names the
 * rule), or when no bridge takes the action within `timeoutMs`: then the annotations are
 * withdrawn, so that no bridge takes it later by surprise.
 */
export function steer(
  target: Target,
  command: ControlCommand,
  request: { reason?: string; gate?: string },
  timeoutMs: number,
): Promise<Steered> {
  const what = describeRef(target);
  const noCluster = (why: string, cause: unknown) =>
    new Error(
      `cannot steer ${what} through the cluster: ${why}; without one, only a Temporal administrator steers runs (--${TEMPORAL_ADMIN_OPTION})`,
      { cause },
    );
  try {
    callerKubeConfig();
  } catch (err) {
    return Promise.reject(noCluster(`no kubeconfig (${(err as Error).message})`, err));
  }
  return asCaller(async () => {
    const object = await readObject(target).catch((err: Error) => {
      // An HTTP answer (403, ...) is the API server's word on this caller, not an outage.
      if (err.cause instanceof ApiException) throw err;
      throw noCluster(`no cluster answered (${err.message})`, err);
    });
    if (!object)
      throw new Error(
        `${what} is not on the cluster: armadactl steers an object's run through it (a run applied from files is steered with --${TEMPORAL_ADMIN_OPTION})`,
      );
    const { uid, resourceVersion, annotations = {} } = object.metadata;
    const waiting = annotations[ACTION_ANNOTATION];
    if (waiting !== undefined)
      throw new Error(
        `${what} has an action no bridge has taken yet: ${waiting}${annotations[BY_ANNOTATION] ? ` by ${annotations[BY_ANNOTATION]}` : ''} (is a bridge running and watching ${target.namespace}?)`,
      );
    const events = actionEvents(target.namespace, uid ?? '');
    const listed = await events();
    const before = new Set(typeof listed === 'string' ? [] : listed.map((e) => e.name));
    const written = await patchAnnotations(target, {
      // The resourceVersion read: an action written meanwhile by someone else fails this write.
      resourceVersion,
      annotations: {
        ...Object.fromEntries(ACTION_ANNOTATIONS.map((a) => [a, null])),
        [ACTION_ANNOTATION]: command,
        [REASON_ANNOTATION]: request.reason ?? null,
        [GATE_ANNOTATION]: request.gate ?? null,
      },
    });
    const by = written[BY_ANNOTATION] ?? `someone (no ${BY_ANNOTATION})`;
    const asked = `${by} asked to ${command}`;
    const deadline = Date.now() + timeoutMs;
    for (;;) {
      const answers = await events();
      if (typeof answers === 'string') {
        // Without the right to list Events, all armadactl can tell is that the bridge took it.
        const now = (await readObject(target))?.metadata.annotations ?? {};
        if (now[ACTION_ANNOTATION] !== command || now[BY_ANNOTATION] !== by)
          return {
            by,
            type: 'Normal',
            message: `${asked}: taken by the bridge; its answer is an Action Event of ${what}, which you may not read (${answers})`,
          };
      } else {
        const answer = answers.find((e) => !before.has(e.name) && e.message.startsWith(asked));
        if (answer)
          return { by, type: answer.type === 'Warning' ? 'Warning' : 'Normal', message: answer.message };
      }
      if (Date.now() > deadline) {
        await withdraw(target, command, by);
        throw new Error(
          `no bridge took ${command} on ${what} within ${timeoutMs / 1000} s (is a bridge running and watching ${target.namespace}?); the action was withdrawn`,
        );
      }
      await sleep(POLL_MS);
    }
  });
}

const where = (target: Target) => ({
  group: GROUP,
  version: VERSION,
  plural: kinds[target.kind].plural,
  namespace: target.namespace,
  name: target.name,
});
const options = () => abortWith(AbortSignal.timeout(REQUEST_TIMEOUT_MS));

/**
 * The bridge's `Action` Events of the object `uid`, as a function that lists them afresh; the
 * API server's refusal instead, when the caller may not list Events there.
 */
function actionEvents(namespace: string, uid: string) {
  return async (): Promise<{ name: string; type?: string; message: string }[] | string> => {
    try {
      const list = await kubeApi(CoreV1Api).listNamespacedEvent(
        { namespace, fieldSelector: `involvedObject.uid=${uid},reason=${ACTION_EVENT_REASON}` },
        options(),
      );
      return list.items.map((e) => ({
        name: e.metadata?.name ?? '',
        type: e.type,
        message: e.message ?? '',
      }));
    } catch (err) {
      if (err instanceof ApiException && err.code === 403) return apiMessage(err);
      throw new Error(
        `cannot read the bridge's answer (the Action Events in ${namespace}): ${apiMessage(err)}`,
        {
          cause: err,
        },
      );
    }
  };
}

/** A merge patch of the object's metadata; the annotations the API server stored. */
async function patchAnnotations(
  target: Target,
  metadata: { resourceVersion?: string; annotations: Record<string, string | null> },
): Promise<Record<string, string>> {
  try {
    const stored = (await kubeApi(CustomObjectsApi).patchNamespacedCustomObject(
      { ...where(target), body: { metadata } },
      setHeaderOptions('Content-Type', PatchStrategy.MergePatch, options()),
    )) as { metadata?: { annotations?: Record<string, string> } };
    return stored.metadata?.annotations ?? {};
  } catch (err) {
    const why =
      err instanceof ApiException && err.code === 409 ? 'it changed meanwhile; try again' : apiMessage(err);
    throw new Error(`cannot write the action on ${describeRef(target)}: ${why}`, { cause: err });
  }
}

/** Removes an action no bridge took, while it is still the one written (a JSON patch that tests it first). */
async function withdraw(target: Target, command: string, by: string): Promise<void> {
  const pointer = (annotation: string) =>
    `/metadata/annotations/${annotation.replaceAll('~', '~0').replaceAll('/', '~1')}`;
  const object = await readObject(target);
  const annotations = object?.metadata.annotations ?? {};
  await kubeApi(CustomObjectsApi)
    .patchNamespacedCustomObject(
      {
        ...where(target),
        body: [
          { op: 'test', path: pointer(ACTION_ANNOTATION), value: command },
          { op: 'test', path: pointer(BY_ANNOTATION), value: by },
          ...ACTION_ANNOTATIONS.filter((a) => annotations[a] !== undefined).map((a) => ({
            op: 'remove',
            path: pointer(a),
          })),
        ],
      },
      setHeaderOptions('Content-Type', PatchStrategy.JsonPatch, options()),
    )
    // Taken or replaced meanwhile: nothing of ours is left to withdraw.
    .catch(() => undefined);
}
