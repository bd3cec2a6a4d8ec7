import { z } from 'zod';
import { commonStatus, targetState } from './common';
import { orderedNames } from './names';

/** One definition for groups and manifests: the semantics are in docs/how-to/progressive-delivery.md, "Lockstep canaries". */
export const canaryLockstep = z
  .boolean()
  .optional()
  .describe(
    "true: the group's canary charts and Deployers step together: step k starts for each only when every one has passed step k-1, one failing rolls back all, and pause, approve, promote and rollback sent to the group act on all. They must run in parallel (sequenced: false) and have the same step percentages.",
  );

export const armadaChartGroupSpec = z
  .strictObject({
    chart_group: orderedNames('chart').describe('ArmadaChart names (same namespace), in deploy order.'),
    sequenced: z
      .boolean()
      .default(false)
      .describe(
        'true: deploy the charts one at a time and stop at the first failure; false: all in parallel.',
      ),
    description: z.string().max(1024).optional().describe('What this group is for.'),
    target_state: targetState.default('deployed'),
    deployers: orderedNames('Deployer')
      .optional()
      .describe(
        'Deployer names (same namespace) the group rolls out with its charts: at once with them (sequenced: false), or after its charts, in order (sequenced: true). The group drives them: they get no run of their own while it lists them.',
      ),
    canary_lockstep: canaryLockstep,
  })
  .describe('An ordered group of ArmadaCharts.');

export const armadaChartGroupStatus = z
  .strictObject({
    progress: z
      .strictObject({
        ready: z.number().int().optional().describe('Charts that reached the target state.'),
        total: z.number().int().optional().describe('Charts in the group.'),
        summary: z.string().optional().describe('Progress for a person, e.g. "2/3".'),
      })
      .optional()
      .describe('How far the group got.'),
    ...commonStatus,
  })
  .describe('Observed state, written by armada-temporal.');

export type ArmadaChartGroupSpec = z.infer<typeof armadaChartGroupSpec>;
export type ArmadaChartGroupStatus = z.infer<typeof armadaChartGroupStatus>;
