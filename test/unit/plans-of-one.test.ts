import { armadaChartSpec } from '../../api/chart';
import { armadaChartGroupSpec } from '../../api/chart-group';
import { deployerSpec } from '../../api/deployer';
import { chartPlanOfOne, deployerPlanOfOne, groupPlanOfOne } from '../../core/plan/plans-of-one';
import { chartOfOne, chartRun, deployerRun, groupRun } from '../../runs/requests';

/** Standalone objects as runs/ plans them today, each made into a plan of one for the one-workflow run. */
const chartSpec = (more: Record<string, unknown> = {}) =>
  armadaChartSpec.parse({
    release: 'web',
    namespace: 'apps',
    source: { type: 'local', location: 'x' },
    ...more,
  });
const dplSpec = deployerSpec.parse({
  type: 'canary',
  deployment: { name: 'api', namespace: 'apps', image: 'registry.test/api', version: 'v2', replicas: 2 },
  steps: [{ percent: 50 }],
});

describe('plans of one (core/plan/plans-of-one.ts)', () => {
  it('makes a standalone chart one group of the chart alone, under its release lock', () => {
    const spec = chartSpec({ dependencies: ['toolkit'] });
    const toolkit = chartSpec({ release: 'toolkit' });
    const doc = { kind: 'ArmadaChart' as const, name: 'web', namespace: 'team-a', spec };
    const input = chartOfOne(doc, 'deploy', { toolkit });
    const plan = chartPlanOfOne(input);
    expect(plan).toEqual({
      kind: 'ArmadaChart',
      manifest: 'web',
      namespace: 'team-a',
      onFailure: 'stop',
      targetState: 'deployed',
      groups: [
        {
          name: 'web',
          sequenced: true,
          charts: [
            {
              chart: 'web',
              release: 'web',
              namespace: 'apps',
              workflowId: 'helm:apps/web',
              spec,
              dependencies: input.dependencies,
            },
          ],
        },
      ],
    });
    expect(input.dependencies).toHaveLength(1);
    // The run armadactl and the bridge start: deployRun with that plan, under the chart's own ID.
    expect(chartRun(doc, 'deploy', 'ArmadaChart/web@1', { toolkit })).toMatchObject({
      workflowType: 'deployRun',
      workflowId: 'ArmadaChart:team-a/web',
      input: { plan, mode: 'deploy' },
      memo: { specs: 'ArmadaChart/web@1', mode: 'deploy' },
    });
  });

  it("takes a chart's windows and notifications as the run's; an uninstall notifies nobody", () => {
    const windows = [{ kind: 'deny', schedule: '0 0 * * *', duration: '1h' }];
    const spec = chartSpec({ windows, notifications: { secret_ref: { name: 'hooks' } } });
    const doc = { kind: 'ArmadaChart' as const, name: 'web', namespace: 'team-a', spec };
    const deploy = chartRun(doc).input.plan;
    expect(deploy.windows).toEqual(spec.windows);
    expect(deploy.notify).toMatchObject({ kind: 'ArmadaChart', namespace: 'team-a', name: 'web' });
    const uninstall = chartRun(doc, 'uninstall').input.plan;
    expect(uninstall).toMatchObject({ targetState: 'uninstalled', windows: spec.windows });
    expect(uninstall.notify).toBeUndefined();
  });

  it('places a chart run from before resourceNamespace was carried in `default`', () => {
    const input = chartOfOne(
      { kind: 'ArmadaChart', name: 'web', namespace: 'x', spec: chartSpec() },
      'deploy',
    );
    expect(chartPlanOfOne({ ...input, resourceNamespace: undefined }).namespace).toBe('default');
  });

  it('makes a group no manifest lists the one group of its plan, Deployers and lockstep kept', () => {
    const { input } = groupRun({
      namespace: 'team-a',
      name: 'shop',
      spec: armadaChartGroupSpec.parse({ chart_group: ['web'], deployers: ['api'], canary_lockstep: true }),
      charts: { web: chartSpec({ canary: { steps: [{ percent: 50 }] } }) },
      deployers: { api: dplSpec },
    });
    expect(groupPlanOfOne(input)).toEqual({
      kind: 'ArmadaChartGroup',
      manifest: 'shop',
      namespace: 'team-a',
      onFailure: 'stop',
      targetState: 'deployed',
      groups: [input.group],
    });
    expect(input.group).toMatchObject({ lockstep: true, deployers: [{ name: 'api' }] });
  });

  it("makes a Deployer one group that rolls it out as a child named apart from the run's own ID", () => {
    const request = deployerRun({ kind: 'Deployer', name: 'api', namespace: 'team-a', spec: dplSpec });
    const plan = deployerPlanOfOne(request.input);
    expect(plan).toEqual({
      kind: 'Deployer',
      manifest: 'api',
      namespace: 'team-a',
      onFailure: 'stop',
      targetState: 'deployed',
      groups: [
        {
          name: 'api',
          sequenced: true,
          charts: [],
          deployers: [{ name: 'api', workflowId: 'Deployer:team-a/api/rollout', spec: dplSpec }],
        },
      ],
    });
    // The run takes the Deployer's own workflow ID (its lock); its child could not take it too.
    expect(plan.groups[0].deployers![0].workflowId).not.toBe(request.workflowId);
    expect(deployerPlanOfOne({ ...request.input, mode: 'uninstall' }).targetState).toBe('uninstalled');
  });
});
