import { CoreV1Api } from '@kubernetes/client-node';
import { ApplicationFailure } from '@temporalio/common';
import { abortWith, apiFailure, isStatus, kubeApi } from '../../kube/client';
import { NonRetryable } from '../../core/failures';
import { currentActivity } from '../process';
import { mergeValues, redactText, valuesStrings, type Values, type ValuesDocument } from './merge';
import type { ChartObjectRef, ValuesFrom } from '../../core/contracts/charts';

/** The values an activity hands helm, and how its failures are kept free of them. */
export interface ChartValues {
  values: Values;
  /**
   * `err` as it may leave the activity: a failure whose message holds a string from
   * `values_from` (helm quotes values it or the API server refused) becomes the same failure
   * with that string replaced; any other error is returned as it is.
   */
  redact(err: unknown): unknown;
}

/**
 * The values of a chart: `values_from` read now (readValuesFrom) and merged under the inline
 * `values` (mergeValues). Without `values_from`, the inline values and nothing to redact.
 */
export async function chartValues(inline: Values | undefined, valuesFrom?: ValuesFrom): Promise<ChartValues> {
  if (!valuesFrom?.references.length) return { values: inline ?? {}, redact: (err) => err };
  const documents = await readValuesFrom(valuesFrom, currentActivity()?.cancellationSignal);
  const values = mergeValues(documents, inline);
  const strings = valuesStrings(documents);
  return { values, redact: (err) => withoutStrings(err, strings) };
}

/**
 * Reads the keys `valuesFrom`'s references name, in order, from Secrets and ConfigMaps of the
 * ArmadaChart's namespace (readObjectData). An optional reference whose object or key is missing
 * is left out. A missing one otherwise fails non-retryably (ValuesNotFound), naming the chart,
 * the reference and the namespace. No failure carries a value.
 */
export async function readValuesFrom(
  valuesFrom: ValuesFrom,
  signal?: AbortSignal,
): Promise<ValuesDocument[]> {
  const { chart, namespace, references } = valuesFrom;
  const documents: ValuesDocument[] = [];
  for (const [index, reference] of references.entries()) {
    const { kind, name, key } = reference;
    const described = `ArmadaChart ${namespace}/${chart} values_from[${index}] (${kind} ${name}, key ${key})`;
    const data = await readObjectData(valuesFrom, { kind, name }, described, signal);
    const text = data?.[key];
    if (text === undefined) {
      if (reference.optional) continue;
      throw valuesNotFound(
        data
          ? `${described}: ${kind} ${namespace}/${name} has no key ${key}`
          : `${described}: ${kind} ${name} not found in namespace ${namespace}`,
      );
    }
    documents.push({ reference, name: described, text });
  }
  return documents;
}

/**
 * Every key of a Secret or ConfigMap of `owner`'s namespace, as text; undefined when there is no
 * such object. The one place an ArmadaChart's references (`values_from`, `source.secret_ref`,
 * `source.verify.keyring_secret`) reach the cluster: as the chart's ServiceAccount when it has one (`owner.actAs`), so a chart
 * reads only what that ServiceAccount may. A Secret's values are decoded from base64; a
 * ConfigMap's come from `data`, else `binaryData`. API errors fail as apiFailure classifies
 * them, naming the object and `purpose`; no failure carries a value.
 */
export async function readObjectData(
  owner: ChartObjectRef,
  object: { kind: 'Secret' | 'ConfigMap'; name: string },
  purpose: string,
  signal?: AbortSignal,
  /** How a Secret's values are returned: text (UTF-8), or their bytes still in base64. */
  encoding: 'utf8' | 'base64' = 'utf8',
): Promise<Record<string, string> | undefined> {
  const { namespace } = owner;
  const { kind, name } = object;
  const core = kubeApi(CoreV1Api, owner.actAs);
  const options = signal && abortWith(signal);
  const decoded = (data: Record<string, string> | undefined) =>
    Object.fromEntries(
      Object.entries(data ?? {}).map(([key, value]) => [
        key,
        Buffer.from(value, 'base64').toString(encoding),
      ]),
    );
  try {
    if (kind === 'Secret')
      return decoded((await core.readNamespacedSecret({ namespace, name }, options)).data);
    const configMap = await core.readNamespacedConfigMap({ namespace, name }, options);
    return { ...decoded(configMap.binaryData), ...configMap.data };
  } catch (err) {
    if (isStatus(err, 404)) return undefined;
    throw apiFailure(`read ${kind} ${namespace}/${name} for ${purpose}`, err);
  }
}

function valuesNotFound(message: string): ApplicationFailure {
  return ApplicationFailure.nonRetryable(
    `${message}; create it, or set optional: true to deploy without it`,
    NonRetryable.ValuesNotFound,
  );
}

/**
 * `err` with `strings` replaced by `marker` in its message (see redactText): a new failure, so no
 * stack or cause keeps them.
 */
export function withoutStrings(err: unknown, strings: readonly string[], marker?: string): unknown {
  if (!(err instanceof Error)) return err;
  const message = redactText(err.message, strings, marker);
  if (message === err.message) return err;
  if (!(err instanceof ApplicationFailure)) return new Error(message);
  return ApplicationFailure.create({
    message,
    type: err.type ?? undefined,
    nonRetryable: err.nonRetryable ?? undefined,
    details: err.details ?? undefined,
  });
}
