import { z } from 'zod';
import { commonStatus, dns1123Label, duration, quoted, serviceAccountName, targetState } from './common';
import { approvalRules } from './chart';
import { canaryLockstep } from './chart-group';
import { orderedNames } from './names';
import { notifications } from './notifications';
import { deployWindows } from './windows';

export const armadaManifestSpec = z
  .strictObject({
    release_prefix: dns1123Label('release_prefix')
      .max(40, 'release_prefix must be at most 40 characters, to leave room for release names')
      .describe('Prefix of every release of the manifest: releases are named <release_prefix>-<release>.'),
    chart_groups: orderedNames('chart group').describe(
      'ArmadaChartGroup names (same namespace), deployed strictly in this order.',
    ),
    target_state: targetState.default('deployed'),
    service_account_name: serviceAccountName().describe(
      "ServiceAccount of the manifest's namespace its charts act as, unless a chart names its own.",
    ),
    on_failure: z
      .enum(['stop', 'rollback'])
      .default('stop')
      .describe(
        'When a group fails: stop (leave what is deployed) or rollback (every chart this run changed goes back).',
      ),
    canary_lockstep: canaryLockstep.describe(
      'true: every group of the manifest steps its canary charts together, as canary_lockstep on each group does (groups still deploy one after another).',
    ),
    approval: z
      .strictObject({
        before: z
          .array(z.string())
          .min(1)
          .describe('Groups that wait for an approve signal before they start.'),
        timeout: duration('approval.timeout')
          .optional()
          .describe('How long a gate waits (default: until approved).'),
        on_timeout: z
          .enum(['stop', 'rollback', 'continue'])
          .default('stop')
          .describe(
            'When a gate times out: stop the run, roll back its changes, or continue as if approved.',
          ),
        ...approvalRules,
      })
      .optional()
      .describe('Approval gates between groups.'),
    notifications: notifications.optional(),
    windows: deployWindows,
  })
  .superRefine((spec, ctx) => {
    spec.approval?.before.forEach((group, i) => {
      if (!spec.chart_groups.includes(group)) {
        ctx.addIssue({
          code: 'custom',
          path: ['approval', 'before', i],
          message: `${quoted(group)} is not one of chart_groups`,
        });
      }
    });
  })
  .describe('The whole deploy: chart groups in order.');

export const armadaManifestStatus = z
  .strictObject({
    progress: z
      .strictObject({
        group: z.string().optional().describe('The group being deployed.'),
        ready: z.number().int().optional().describe('Groups done.'),
        total: z.number().int().optional().describe('Groups in the manifest.'),
        summary: z.string().optional().describe('Progress for a person, e.g. "1/3 apps".'),
      })
      .optional()
      .describe('How far the manifest got.'),
    ...commonStatus,
  })
  .describe('Observed state, written by armada-temporal.');

export type ArmadaManifestSpec = z.infer<typeof armadaManifestSpec>;
export type ArmadaManifestStatus = z.infer<typeof armadaManifestStatus>;
