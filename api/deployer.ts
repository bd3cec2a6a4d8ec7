import { z } from 'zod';
import { commonStatus, dns1123Label, labels, serviceAccountName } from './common';
import { canaryAnalysis } from './analysis';
import { approvalRules, canaryStep, canaryTimeouts, onTimeoutNeedsApproval, percentSteps } from './chart';
import { traffic } from './traffic';
import { notifications } from './notifications';
import { deployWindows } from './windows';

export const deployerSpec = z
  .strictObject({
    type: z.enum(['canary']).describe('Rollout strategy; canary is the only one.'),
    deployment: z
      .strictObject({
        name: dns1123Label('deployment.name')
          .max(40, 'deployment.name must be at most 40 characters, to leave room for -<version>')
          .describe('Base name; each version runs as Deployment <name>-<version>.'),
        namespace: dns1123Label('deployment.namespace').describe(
          "Namespace of the Deployments: the Deployer's own, unless an ArmadaPolicy grants another.",
        ),
        image: z.string().min(1).max(1024).describe('Container image, without the tag.'),
        version: z
          .string()
          .max(20, 'deployment.version must be at most 20 characters')
          .regex(
            /^[a-z0-9]([-a-z0-9.]*[a-z0-9])?$/,
            "deployment.version must be lower case letters, digits, '-' and '.', starting and ending with a letter or digit",
          )
          .describe('Image tag, and suffix of the Deployment name (<name>-<version>).'),
        labels: labels.optional().describe('Labels of the pods (the Services select on these).'),
        replicas: z.number().int().min(1).max(10000).describe('Replicas at 100 %.'),
      })
      .describe('The Deployment to roll out.'),
    steps: percentSteps(canaryStep),
    ...canaryTimeouts,
    ...approvalRules,
    analysis: canaryAnalysis.optional(),
    traffic: traffic.optional(),
    service_account_name: serviceAccountName(),
    notifications: notifications.optional(),
    windows: deployWindows,
  })
  .superRefine(onTimeoutNeedsApproval)
  .describe('A canary rollout of a plain Deployment.');

export const deployerStatus = z
  .strictObject({
    phase: z
      .string()
      .optional()
      .describe(
        'The Deployer operator’s phase (Progressing, Completed, RolledBack, Failed), kept for scripts written for it; actual_state says the same in the words every kind uses (Completed is deployed).',
      ),
    current_version: z.string().optional().describe('Version serving at 100 %.'),
    owned_deployments: z
      .record(z.string(), z.string())
      .optional()
      .describe(
        'The Deployments this Deployer created, by name: their UIDs. Only these are scaled or deleted; another Deployment carrying its label is left alone, with a Warning Event.',
      ),
    progress: z
      .strictObject({
        percentage: z.number().int().optional().describe('Share of replicas on the new version.'),
        step: z.number().int().optional().describe('Current step (1-based).'),
        wait: z.string().optional().describe('When the current hold ends (RFC 3339).'),
      })
      .optional()
      .describe('Where the rollout stands.'),
    ...commonStatus,
  })
  .describe('Observed state, written by armada-temporal.');

export type DeployerSpec = z.infer<typeof deployerSpec>;
export type DeployerStatus = z.infer<typeof deployerStatus>;
