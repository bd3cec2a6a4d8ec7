import { z } from 'zod';
import { objectName } from './common';

/** The key of the Secret that holds the webhook URL when `secret_ref.key` names none. */
export const DEFAULT_WEBHOOK_KEY = 'url';

/**
 * Webhook notifications of a run's events, on ArmadaManifest, ArmadaChart and Deployer alike
 * (one definition, so the three kinds never drift apart). The URL lives in a Secret of the
 * object's own namespace, read by the worker as the object's ServiceAccount when it delivers,
 * never carried in the run: a webhook URL often is its credential.
 */
export const notifications = z
  .strictObject({
    secret_ref: z
      .strictObject({
        name: objectName('notifications.secret_ref.name').describe(
          "Name of the Secret holding the webhook URL, in the object's own namespace.",
        ),
        key: z
          .string()
          .max(253)
          .regex(/^[-._a-zA-Z0-9]+$/, "key must be a Secret key: letters, digits, '-', '_' and '.'")
          .default(DEFAULT_WEBHOOK_KEY)
          .describe('Key of the Secret whose value is the webhook URL (http or https).'),
      })
      .describe('The Secret holding the webhook URL.'),
    format: z
      .enum(['json', 'slack'])
      .default('json')
      .describe(
        'json: the event as a JSON object; slack: a Slack-compatible message (text and blocks) with the run link and the armadactl commands.',
      ),
  })
  .describe(
    'Webhook notifications of run events: started, waiting for approval, step reached, failed, rolled back, completed (armada-temporal extension).',
  );

export type Notifications = z.infer<typeof notifications>;
