import { armadaChartSpec, canaryTimeouts } from '../../api/chart';
import { deployerSpec } from '../../api/deployer';
import { canaryTimeoutsOf } from '../../core/plan/canary';

const deployer = (extra: object) => ({
  type: 'canary',
  deployment: { name: 'web', namespace: 'web', image: 'nginx', version: '1.0', replicas: 2 },
  steps: [{ percent: 50, approval: true }],
  ...extra,
});

describe("a Deployer's canary timeouts: the chart canary's, one definition", () => {
  it('are the same schema pieces on both kinds', () => {
    const chartCanary = armadaChartSpec.shape.canary.unwrap().shape;
    for (const field of ['approval_timeout', 'on_timeout', 'step_timeout'] as const) {
      expect(deployerSpec.shape[field]).toBe(canaryTimeouts[field]);
      expect(chartCanary[field]).toBe(canaryTimeouts[field]);
    }
  });

  it('parse on a Deployer, and on_timeout without an approval step is refused naming it', () => {
    const parsed = deployerSpec.parse(
      deployer({ approval_timeout: '5m', on_timeout: 'promote', step_timeout: 30 }),
    );
    expect(canaryTimeoutsOf(parsed)).toEqual({
      stepTimeoutSeconds: 30,
      approvalTimeoutSeconds: 300,
      onTimeout: 'promote',
    });
    const refused = deployerSpec.safeParse(deployer({ steps: [{ percent: 50 }], on_timeout: 'rollback' }));
    expect(refused.success).toBe(false);
    expect(refused.error?.issues).toEqual([
      expect.objectContaining({
        path: ['on_timeout'],
        message: 'on_timeout needs at least one step with approval',
      }),
    ]);
  });

  it('leave the canary its defaults when the spec sets none', () => {
    expect(canaryTimeoutsOf(deployerSpec.parse(deployer({})))).toEqual({
      stepTimeoutSeconds: undefined,
      approvalTimeoutSeconds: undefined,
      onTimeout: undefined,
    });
  });
});
