import {
  ApiException,
  CoreV1Api,
  CustomObjectsApi,
  PatchStrategy,
  setHeaderOptions,
} from '@kubernetes/client-node';
import { GROUP, VERSION } from '../api/common';
import { kinds, type KindName } from '../api/kinds';
import { kubeApi } from './client';
import type { Condition } from '../core/contracts/kube';
import { variable } from '../core/environment';
import { pendingGeneration } from '../core/plan/status';

/** Base URL of the Temporal UI for the links written into status. */
const UI_URL = variable(process.env, 'ARMADA_TEMPORAL_UI') ?? 'http://localhost:8233';

/** A link to a run in the Temporal UI. */
export function runUrl(namespace: string, workflowId: string, runId: string): string {
  return `${UI_URL}/namespaces/${encodeURIComponent(namespace)}/workflows/${encodeURIComponent(workflowId)}/${runId}/history`;
}

export interface StatusReport {
  kind: KindName;
  /** Namespace and name of the custom resource (not of the release it drives). */
  namespace: string;
  name: string;
  /** The generation the writer acts on; the object's current generation when not given. */
  observedGeneration?: number;
  /** Fields of `.status` to set; `conditions` are merged by type. */
  status: Record<string, unknown> & { conditions?: Condition[] };
  /** A Kubernetes Event on the object for this transition. */
  event?: { type: 'Normal' | 'Warning'; reason: string; message: string };
}

/** Where a failure that must not fail the write (an Event refused) is told. */
export type Warn = (message: string, fields: Record<string, unknown>) => void;

const logWarning: Warn = (message, fields) =>
  console.warn(JSON.stringify({ level: 'warn', message, ...fields }));

/**
 * Writes status into a custom resource (merge patch of the status subresource, with
 * observedGeneration — the writer's, else the object's generation — and conditions keyed by type, keeping lastTransitionTime when a condition
 * did not change) and records an Event. Returns false, writing nothing, when the object is not
 * on the cluster (a run applied from a file alone).
 */
export async function writeStatus(
  report: StatusReport,
  { temporalNamespace = 'default', warn = logWarning }: { temporalNamespace?: string; warn?: Warn } = {},
): Promise<boolean> {
  const api = kubeApi(CustomObjectsApi);
  const target = {
    group: GROUP,
    version: VERSION,
    namespace: report.namespace,
    plural: kinds[report.kind].plural,
    name: report.name,
  };
  const workflow = report.status.workflow as { id: string; run_id: string; url?: string } | undefined;
  if (workflow) workflow.url = runUrl(temporalNamespace, workflow.id, workflow.run_id);
  // Conditions are merged here, read-modify-write: the patch names the resourceVersion read, so
  // two writers at once (a phase and a pause) never undo each other's conditions; the loser
  // reads again.
  let courtesy: Promise<void> | undefined;
  for (let attempt = 1; ; attempt++) {
    let current: {
      metadata: { generation?: number; uid?: string; resourceVersion?: string };
      status?: { conditions?: (Condition & { lastTransitionTime: string })[] };
    };
    try {
      current = (await api.getNamespacedCustomObjectStatus(target)) as typeof current;
    } catch (err) {
      if (err instanceof ApiException && err.code === 404) return false;
      throw err;
    }
    const generation = report.observedGeneration ?? current.metadata.generation;
    const conditions =
      report.status.conditions &&
      mergeConditions(current.status?.conditions ?? [], report.status.conditions, generation);
    // The Event goes out beside the patch, once (never rejects): one API round trip less on
    // every status write, which sit between one chart or group and the next.
    courtesy ??= report.event && recordCourtesyEvent(report, current.metadata.uid, warn);
    try {
      await api.patchNamespacedCustomObjectStatus(
        {
          ...target,
          body: {
            metadata: { resourceVersion: current.metadata.resourceVersion },
            status: {
              ...report.status,
              ...(conditions && { conditions }),
              // A run that deployed an older generation than the object has now did not satisfy it.
              ...(report.status.satisfied === true &&
                pendingGeneration(current.metadata.generation, generation) !== null && { satisfied: false }),
              observedGeneration: generation,
            },
          },
        },
        setHeaderOptions('Content-Type', PatchStrategy.MergePatch),
      );
    } catch (err) {
      if (err instanceof ApiException && err.code === 409 && attempt < WRITE_ATTEMPTS) continue;
      await courtesy;
      throw err;
    }
    await courtesy;
    return true;
  }
}

/** Writes retried at once when another writer changed the object in between. */
const WRITE_ATTEMPTS = 5;

/**
 * `previous` conditions with `next` merged in by type; a condition keeps its lastTransitionTime
 * while its status stays the same.
 */
function mergeConditions(
  previous: (Condition & { lastTransitionTime: string })[],
  next: Condition[],
  generation: number | undefined,
) {
  const now = new Date().toISOString();
  return [
    ...previous.filter((p) => !next.some((c) => c.type === p.type)),
    ...next.map((c) => {
      const before = previous.find((p) => p.type === c.type);
      const lastTransitionTime = before && before.status === c.status ? before.lastTransitionTime : now;
      return { ...c, lastTransitionTime, observedGeneration: generation };
    }),
  ];
}

/**
 * Events are a courtesy: one refused (e.g. in a namespace being deleted) must not fail the
 * status write, nor the run that reports it.
 */
async function recordCourtesyEvent(report: StatusReport, uid: string | undefined, warn: Warn): Promise<void> {
  await recordEvent(report, uid, report.event!).catch((err: unknown) =>
    warn('event not recorded', {
      object: `${report.kind} ${report.namespace}/${report.name}`,
      error: String(err),
    }),
  );
}

/** A Kubernetes Event on one custom resource (what `kubectl describe` lists). */
export async function recordEvent(
  object: { kind: KindName; namespace: string; name: string },
  uid: string | undefined,
  event: NonNullable<StatusReport['event']>,
): Promise<void> {
  const now = new Date().toISOString() as unknown as Date;
  await kubeApi(CoreV1Api).createNamespacedEvent({
    namespace: object.namespace,
    body: {
      metadata: { generateName: `${object.name}.` },
      involvedObject: {
        apiVersion: `${GROUP}/${VERSION}`,
        kind: object.kind,
        name: object.name,
        namespace: object.namespace,
        uid,
      },
      type: event.type,
      reason: event.reason,
      message: event.message,
      source: { component: 'armada-temporal' },
      firstTimestamp: now,
      lastTimestamp: now,
      count: 1,
    },
  });
}
