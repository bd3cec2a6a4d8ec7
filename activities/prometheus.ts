import { CoreV1Api, type V1Pod } from '@kubernetes/client-node';
import { renderQuery, type QuerySide } from '../api/prometheus-query';
import { apiFailure, kubeApi } from '../kube/client';
import type { ActingAs } from '../core/contracts/acting-as';
import { asNumber, boundedGet, displayUrl, excerpt } from './analysis';
import type { AnalysisResult } from '../core/contracts/analysis';

const DEFAULT_TIMEOUT_SECONDS = 10;
/** How Prometheus writes the values JSON has no number for. */
const SPECIAL_VALUES: Record<string, number> = { NaN: NaN, '+Inf': Infinity, '-Inf': -Infinity };

export interface PrometheusRequest extends ActingAs {
  /** Base URL of the Prometheus server; `api/v1/query` is resolved against it. */
  address: string;
  /** The query template (api/prometheus-query.ts). */
  query: string;
  /** The bound: exactly one of min and max. */
  min?: number;
  max?: number;
  namespace: string;
  /** The canary Deployments: the pods judged. */
  canary: string[];
  /**
   * With compare_to_stable: the stable Deployments and the margin. Left out when the step runs
   * no stable pod (at 100 %), where there is nothing to compare with.
   */
  stable?: { deployments: string[]; margin: number };
  /** Per Prometheus request; default 10. */
  timeoutSeconds?: number;
}

/** The values a query returned for one side, or why it returned none usable. */
export type Sample = { query: string; values: number[] } | { query: string; error: string };

/**
 * Activity: one Prometheus analysis check. Lists the pods of the canary (and, with
 * compare_to_stable, of the stable) Deployments, renders the query for each side, asks
 * Prometheus' /api/v1/query, and judges the values (judgePrometheus). Returns ok:false (never
 * throws for an unhealthy or unusable answer): the workflow counts failures against
 * failure_limit. Throws when the API server cannot list the pods (retried as any activity).
 */
export async function checkPrometheus(req: PrometheusRequest): Promise<AnalysisResult> {
  const pods = await listPods(req);
  const sample = (deployments: string[], side: string): Promise<Sample> =>
    sampleSide(req, podsOf(pods, req.namespace, deployments), side);
  const canary = await sample(req.canary, 'canary');
  const stable = req.stable && (await sample(req.stable.deployments, 'stable'));
  return judgePrometheus(req, canary, stable);
}

/**
 * Judges a check, pure: the canary's values against the bound, then, when the stable was
 * sampled, against the stable's plus or minus the margin. A query that returns several series
 * is judged by its worst (the highest for max, the lowest for min); an empty result, NaN, or an
 * error fails the check. Messages name the query as sent, the value and the bound.
 */
export function judgePrometheus(
  req: Pick<PrometheusRequest, 'min' | 'max' | 'stable'>,
  canary: Sample,
  stable?: Sample,
): AnalysisResult {
  const canaryValue = worst(canary, req);
  if (typeof canaryValue === 'string') return { ok: false, message: canaryValue };
  const shown = `${canary.query} = ${canaryValue}`;
  if (req.max !== undefined && canaryValue > req.max)
    return { ok: false, value: canaryValue, message: `${shown}, above max ${req.max}` };
  if (req.min !== undefined && canaryValue < req.min)
    return { ok: false, value: canaryValue, message: `${shown}, below min ${req.min}` };
  const bound = req.max !== undefined ? `max ${req.max}` : `min ${req.min}`;
  if (!stable || !req.stable) return { ok: true, value: canaryValue, message: `${shown} (${bound})` };

  const stableValue = worst(stable, req);
  if (typeof stableValue === 'string')
    return { ok: false, value: canaryValue, message: `stable: ${stableValue}` };
  const { margin } = req.stable;
  const worseBy = req.max !== undefined ? canaryValue - stableValue : stableValue - canaryValue;
  const compared = `canary ${shown}, stable ${stable.query} = ${stableValue}`;
  if (worseBy > margin)
    return {
      ok: false,
      value: canaryValue,
      message: `${compared}: the canary is worse by ${round(worseBy)}, more than margin ${margin}`,
    };
  return { ok: true, value: canaryValue, message: `${compared} (${bound}, margin ${margin})` };
}

/** The worst of a sample's values, or why there is none: the message of a failed check. */
function worst(sample: Sample, { max }: Pick<PrometheusRequest, 'max'>): number | string {
  if ('error' in sample) return `${sample.query}: ${sample.error}`;
  if (!sample.values.length) return `${sample.query}: empty result (no series matched)`;
  if (sample.values.some(Number.isNaN)) return `${sample.query}: NaN (e.g. a rate divided by no requests)`;
  return max !== undefined ? Math.max(...sample.values) : Math.min(...sample.values);
}

/** Rounds a difference of floats for display: 0.30000000000000004 → 0.3. */
function round(value: number): number {
  return Number(value.toPrecision(12));
}

/**
 * The values of a /api/v1/query answer, pure: one per series of a vector, the value of a
 * scalar; or why the answer holds none (Prometheus' own error, a matrix, not JSON).
 */
export function queryValues(status: number, body: string): { values: number[] } | { error: string } {
  let answer: {
    status?: string;
    error?: string;
    errorType?: string;
    data?: { resultType?: string; result?: unknown };
  };
  try {
    answer = JSON.parse(body) as typeof answer;
  } catch {
    return { error: `status ${status}, body is not JSON: ${JSON.stringify(excerpt(body))}` };
  }
  if (answer.status !== 'success')
    return {
      error: `status ${status}, Prometheus ${answer.errorType ?? 'error'}: ${excerpt(answer.error ?? body)}`,
    };
  const { resultType, result } = answer.data ?? {};
  const value = (pair: unknown) => {
    const raw: unknown = Array.isArray(pair) ? pair[1] : undefined;
    return typeof raw === 'string' && Object.hasOwn(SPECIAL_VALUES, raw)
      ? SPECIAL_VALUES[raw]
      : (asNumber(raw) ?? NaN);
  };
  if (resultType === 'scalar') return { values: [value(result)] };
  if (resultType === 'vector' && Array.isArray(result))
    return { values: result.map((series: { value?: unknown }) => value(series.value)) };
  return {
    error: `a ${resultType ?? 'missing'} result; the query must return an instant vector or a scalar`,
  };
}

/** Renders the query for one side's pods and asks Prometheus. */
async function sampleSide(req: PrometheusRequest, side: QuerySide, name: string): Promise<Sample> {
  let query: string;
  try {
    query = renderQuery(req.query, side);
  } catch (err) {
    return { query: req.query, error: (err as Error).message };
  }
  if (!side.pods.length) return { query, error: `no running pod of the ${name} Deployments` };
  const url = new URL('api/v1/query', req.address.endsWith('/') ? req.address : `${req.address}/`);
  url.searchParams.set('query', query);
  const got = await boundedGet(url, req.timeoutSeconds ?? DEFAULT_TIMEOUT_SECONDS, 'application/json');
  if (!got.ok) return { query, error: `GET ${displayUrl(req.address)}: ${got.message}` };
  return { query, ...queryValues(got.status, got.text) };
}

async function listPods({ namespace, actAs }: PrometheusRequest): Promise<V1Pod[]> {
  try {
    return (await kubeApi(CoreV1Api, actAs).listNamespacedPod({ namespace })).items;
  } catch (err) {
    throw apiFailure(`list pods in ${namespace}`, err);
  }
}

/**
 * The side made of `deployments`' pods among `pods`, pure: a pod belongs to Deployment `web`
 * when its owner is a ReplicaSet `web-<hash>` (a hash has no `-`, so `web-canary-<hash>` is not
 * `web`'s, though the stable selector matches canary pods too). Pods being deleted are left
 * out. The labels are those every pod carries with one value.
 */
export function podsOf(pods: readonly V1Pod[], namespace: string, deployments: readonly string[]): QuerySide {
  const owned = pods.filter(
    (pod) =>
      !pod.metadata?.deletionTimestamp &&
      pod.metadata?.ownerReferences?.some(
        (owner) =>
          owner.kind === 'ReplicaSet' &&
          deployments.some(
            (d) => owner.name.startsWith(`${d}-`) && !owner.name.slice(d.length + 1).includes('-'),
          ),
      ),
  );
  const [first, ...rest] = owned.map((pod) => pod.metadata?.labels ?? {});
  const labels = Object.fromEntries(
    Object.entries(first ?? {}).filter(([key, value]) => rest.every((l) => l[key] === value)),
  );
  return { namespace, pods: owned.map((pod) => pod.metadata!.name!).sort(), labels };
}
