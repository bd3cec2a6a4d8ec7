import { armadaChartSpec } from '../../api/chart';
import { armadaChartGroupSpec } from '../../api/chart-group';
import { deployerSpec } from '../../api/deployer';
import {
  chartPlanOfOne,
  deployerPlanOfOne,
  deployerReplan,
  groupPlanOfOne,
} from '../../core/plan/plans-of-one';
import { planGroup } from '../../core/plan/manifest';
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

  it("takes a chart's notifications as the run's, not its windows (they hold its write); an uninstall notifies nobody", () => {
    const windows = [{ kind: 'deny', schedule: '0 0 * * *', duration: '1h' }];
    const spec = chartSpec({ windows, notifications: { secret_ref: { name: 'hooks' } } });
    const doc = { kind: 'ArmadaChart' as const, name: 'web', namespace: 'team-a', spec };
    const deploy = chartRun(doc).input.plan;
    expect(deploy.windows).toBeUndefined();
    expect(deploy.groups[0].charts[0].spec.windows).toEqual(spec.windows);
    expect(deploy.notify).toMatchObject({ kind: 'ArmadaChart', namespace: 'team-a', name: 'web' });
    const uninstall = chartRun(doc, 'uninstall').input.plan;
    expect(uninstall).toMatchObject({ targetState: 'uninstalled' });
    expect(uninstall.windows).toBeUndefined();
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
    const docs = {
      namespace: 'team-a',
      name: 'shop',
      spec: armadaChartGroupSpec.parse({ chart_group: ['web'], deployers: ['api'], canary_lockstep: true }),
      charts: { web: chartSpec({ canary: { steps: [{ percent: 50 }] } }) },
      deployers: { api: dplSpec },
    };
    const group = planGroup(docs);
    const request = groupRun(docs);
    expect(request).toMatchObject({ workflowType: 'deployRun', workflowId: 'ArmadaChartGroup:team-a/shop' });
    expect(request.input).toEqual({ plan: groupPlanOfOne({ group, namespace: 'team-a' }), mode: 'deploy' });
    expect(request.input.plan).toEqual({
      kind: 'ArmadaChartGroup',
      manifest: 'shop',
      namespace: 'team-a',
      onFailure: 'stop',
      targetState: 'deployed',
      groups: [group],
    });
    expect(group).toMatchObject({ lockstep: true, deployers: [{ name: 'api' }] });
    expect(groupRun(docs, 'uninstall').input.plan.targetState).toBe('uninstalled');
  });

  it("makes a Deployer one group that rolls it out as a child named apart from the run's own ID", () => {
    const doc = { kind: 'Deployer' as const, name: 'api', namespace: 'team-a', spec: dplSpec };
    const request = deployerRun(doc);
    const { plan } = request.input;
    expect(request).toMatchObject({ workflowType: 'deployRun', workflowId: 'Deployer:team-a/api' });
    expect(request.input).toEqual({
      plan: deployerPlanOfOne({ name: 'api', namespace: 'team-a', spec: dplSpec }),
      mode: 'deploy',
    });
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
          deployers: [
            { name: 'api', workflowId: 'Deployer:team-a/api/rollout', spec: dplSpec, standalone: true },
          ],
        },
      ],
    });
    // The run takes the Deployer's own workflow ID (its lock); its child could not take it too.
    expect(plan.groups[0].deployers![0].workflowId).not.toBe(request.workflowId);
    expect(deployerRun(doc, 'uninstall').input.plan.targetState).toBe('uninstalled');
  });

  it("passes a re-plan on to a Deployer's rollout as its own input, and none when the new plan drops it", () => {
    const spec = { ...dplSpec, deployment: { ...dplSpec.deployment, version: 'v9' } };
    const newer = deployerRun(
      { kind: 'Deployer', name: 'api', namespace: 'team-a', spec },
      'deploy',
      'Deployer/api@2',
    );
    const replan = { input: newer.input, memo: newer.memo };
    expect(deployerReplan(replan, 'api')).toEqual({
      input: { name: 'api', namespace: 'team-a', spec, mode: 'deploy' },
      memo: { specs: 'Deployer/api@2', mode: 'deploy' },
    });
    expect(deployerReplan(replan, 'web')).toBeUndefined();
  });
});
