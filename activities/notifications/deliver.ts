import { ApplicationFailure, Context } from '@temporalio/activity';
import type { Notifications } from '../../api/notifications';
import type { ServiceAccountRef } from '../../core/contracts/acting-as';
import { runUrl } from '../../kube/status';
import { NonRetryable } from '../../core/failures';
import type { RunEvent } from '../../core/plan/notifications';
import { readObjectData } from '../values/read';
import { notificationBody } from './payload';

/** Seconds one POST may take. */
const POST_TIMEOUT_MS = 10_000;

export interface NotificationDelivery {
  /** The namespace of the object whose `notifications` name the Secret: the only one it is read in. */
  namespace: string;
  notifications: Notifications;
  /** The ServiceAccount that reads the Secret (the object's run's); none: the worker itself. */
  actAs?: ServiceAccountRef;
  event: RunEvent;
}

/**
 * Activity: POSTs one event to the webhook whose URL the object's Secret holds (read now, as the
 * run's ServiceAccount, so the URL never enters the run's history). Any 2xx answer delivers it.
 * No failure carries the URL, which may hold a token: failures name the Secret, the HTTP status
 * or the network error's code. A missing Secret or key, a URL that is not http(s), or a 4xx
 * other than 408 and 429 are not retried; the rest is, by the notifier's retry policy.
 */
export async function deliverNotification(delivery: NotificationDelivery): Promise<{ status: number }> {
  const { info, cancellationSignal } = Context.current();
  const url = await webhookUrl(delivery);
  const { event, notifications } = delivery;
  const link = runUrl(info.workflowNamespace ?? 'default', event.run.workflow_id, event.run.run_id);
  let response: Response;
  try {
    response = await fetch(url, {
      method: 'POST',
      headers: { 'content-type': 'application/json' },
      body: JSON.stringify(notificationBody(event, notifications.format, link)),
      signal: AbortSignal.any([cancellationSignal, AbortSignal.timeout(POST_TIMEOUT_MS)]),
    });
  } catch (err) {
    if (cancellationSignal.aborted) throw err;
    // No cause: fetch's errors may quote the URL, which must not reach the run's history.
    // eslint-disable-next-line preserve-caught-error
    throw new Error(`webhook not reached: ${errorCode(err)}`);
  }
  await response.body?.cancel();
  if (response.ok) return { status: response.status };
  const message = `webhook answered HTTP ${response.status}`;
  if (response.status >= 400 && response.status < 500 && response.status !== 408 && response.status !== 429)
    throw ApplicationFailure.nonRetryable(message, NonRetryable.WebhookRefused);
  throw new Error(message);
}

/** The webhook URL from the Secret `notifications.secret_ref` names. */
async function webhookUrl({ namespace, notifications, actAs, event }: NotificationDelivery): Promise<URL> {
  const { name, key } = notifications.secret_ref;
  const described = `notifications of ${event.object.kind} ${namespace}/${event.object.name} (Secret ${name}, key ${key})`;
  const data = await readObjectData(
    { chart: event.object.name, namespace, actAs },
    { kind: 'Secret', name },
    described,
    Context.current().cancellationSignal,
  );
  const text = data?.[key]?.trim();
  if (text === undefined)
    throw ApplicationFailure.nonRetryable(
      data
        ? `${described}: the Secret has no key ${key}`
        : `${described}: Secret ${namespace}/${name} not found`,
      NonRetryable.WebhookNotFound,
    );
  let url: URL | undefined;
  try {
    url = new URL(text);
  } catch {
    url = undefined;
  }
  if (url?.protocol !== 'http:' && url?.protocol !== 'https:')
    throw ApplicationFailure.nonRetryable(
      `${described}: the value is not an http or https URL`,
      NonRetryable.WebhookNotFound,
    );
  return url;
}

/**
 * The code of a network error (`ECONNREFUSED`, `ENOTFOUND`, `TimeoutError`), never its message:
 * Node's messages quote the address, and a message could quote the URL.
 */
function errorCode(err: unknown): string {
  for (let current = err, depth = 0; depth < 5 && typeof current === 'object' && current !== null; depth++) {
    const { code, name, cause } = current as { code?: unknown; name?: unknown; cause?: unknown };
    if (typeof code === 'string') return code;
    if (name === 'TimeoutError') return `no answer within ${POST_TIMEOUT_MS / 1000} s`;
    current = cause;
  }
  return 'network error';
}
