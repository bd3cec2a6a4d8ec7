import { createServer, type Server } from 'node:http';
import type { AddressInfo } from 'node:net';
import { armadaChartSpec } from '../../api/chart';
import { armadaChartGroupSpec } from '../../api/chart-group';
import { groupWorkflow } from '../../workflows';
import type { CanaryOutcome } from '../../workflows/canary';
import { canaryProgressQuery, type CanaryProgress } from '../../workflows/messages';
import { planGroup } from '../../workflows/plan/manifest';
import { canaryWorkflowId } from '../../workflows/plan/names';
import { releaseRevisions, sharedWorker, uniqueName } from '../helpers/env';
import { deploymentImages, kubectl } from '../helpers/kube';
import { eventually } from '../helpers/processes';

/**
 * A lockstep set of two chart canaries (front, back) on the real stack: the worker, helm and the
 * sandbox cluster. Each canary's analysis asks a loopback server the test steers. A group holds
 * ArmadaCharts only, so the set has no Deployer (see README, "Lockstep canaries").
 */
describe('lockstep canaries across two charts (real worker, helm, sandbox cluster)', () => {
  const namespace = uniqueName('lockstep');
  const members = ['front', 'back'];
  const harness = sharedWorker();
  /** Paths the analysis server answers 503 on; every other path is healthy. */
  const failing = new Set<string>();
  let server: Server;
  let analysisBase = '';

  const group = (tag: string) => {
    const charts = Object.fromEntries(
      members.map((name) => [
        name,
        armadaChartSpec.parse({
          release: name,
          namespace,
          source: { type: 'local', location: 'examples/charts/hello' },
          values: { replicaCount: 4, image: { tag } },
          wait: { timeout: 60 },
          canary: {
            steps: [
              { percent: 25, sleep: 2 },
              { percent: 50, sleep: 3 },
            ],
            step_timeout: 60,
            analysis: { url: `${analysisBase}/${name}`, interval: 1 },
          },
        }),
      ]),
    );
    const spec = armadaChartGroupSpec.parse({ chart_group: members, canary_lockstep: true });
    return planGroup({ namespace: 'default', name: 'shop', spec, charts });
  };
  const deploy = (tag: string) =>
    harness().client.workflow.start(groupWorkflow, {
      taskQueue: harness().taskQueue,
      workflowId: uniqueName('lockstep-group'),
      args: [{ namespace: 'default', group: group(tag) }],
    });
  const canaryOf = (member: string) =>
    harness().client.workflow.getHandle<(run: unknown) => Promise<CanaryOutcome>>(
      canaryWorkflowId('default', member),
    );
  const revisions = (release: string) => releaseRevisions(release, namespace);
  const deployments = () => deploymentImages(namespace);
  /** Each member's canary progress, or undefined while one does not answer yet. */
  const progressOfAll = async (): Promise<CanaryProgress[] | undefined> => {
    const all = await Promise.all(
      members.map((m) =>
        canaryOf(m)
          .query(canaryProgressQuery)
          .catch(() => undefined),
      ),
    );
    return all.every((p) => p !== undefined) ? (all as CanaryProgress[]) : undefined;
  };

  beforeAll(async () => {
    server = createServer((req, res) => {
      res.writeHead(failing.has(req.url ?? '') ? 503 : 200).end();
    });
    await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
    analysisBase = `http://127.0.0.1:${(server.address() as AddressInfo).port}`;
  });
  afterAll(async () => {
    await new Promise((resolve) => server.close(resolve));
    await kubectl('delete', 'namespace', namespace, '--wait=false').catch(() => undefined);
  });

  it('installs both releases directly the first time: nothing to step from', async () => {
    await kubectl('create', 'namespace', namespace);
    const result = await (await deploy('1.0.0')).result();
    expect(result.outcomes.map((o) => `${o.release} ${o.action}`).sort()).toEqual([
      'back installed',
      'front installed',
    ]);
  });

  it('steps both canaries together, observed at every step, then upgrades both', async () => {
    const run = await deploy('2.0.0');
    // Each step, once both members hold it: the split on the cluster, for both releases.
    const seen: Record<string, string>[] = [];
    /** The widest gap between the members' steps at any poll: lockstep keeps it below 2. */
    let widestGap = 0;
    for (const [step, split] of [
      [1, ['3 registry.local/hello:1.0.0', '1 registry.local/hello:2.0.0']],
      [2, ['2 registry.local/hello:1.0.0', '2 registry.local/hello:2.0.0']],
    ] as const) {
      const atHold = await eventually(
        `both members holding step ${step}`,
        async () => {
          const all = await progressOfAll();
          if (all)
            widestGap = Math.max(widestGap, ...all.map((p) => p.step - Math.min(...all.map((q) => q.step))));
          return all?.every((p) => p.step === step && p.waitingOn === 'hold') ? deployments() : undefined;
        },
        { timeoutMs: 60_000, pauseMs: 100 },
      );
      expect(atHold).toEqual({
        front: split[0],
        'front-canary': split[1],
        back: split[0],
        'back-canary': split[1],
      });
      seen.push(atHold);
    }
    expect(seen).toHaveLength(2);
    expect(widestGap).toBeLessThan(2);
    const result = await run.result();
    expect(result.failed).toEqual([]);
    const records = await Promise.all(members.map((m) => canaryOf(m).result()));
    for (let k = 1; k < 3; k++) {
      const lastPassed = Math.max(...records.map((o) => Date.parse(o.steps[k - 1].endedAt!)));
      for (const o of records) expect(Date.parse(o.steps[k].startedAt!)).toBeGreaterThanOrEqual(lastPassed);
    }
    for (const m of members) expect(await revisions(m)).toEqual([1, 2]);
    expect(await deployments()).toEqual({
      front: '4 registry.local/hello:2.0.0',
      back: '4 registry.local/hello:2.0.0',
    });
  });

  it("rolls back both when one member's analysis fails; both releases stay at their old revision", async () => {
    const run = await deploy('3.0.0');
    await eventually(
      'both members holding step 2',
      async () =>
        (await progressOfAll())?.every((p) => p.step === 2 && p.waitingOn === 'hold') ? true : undefined,
      { timeoutMs: 60_000, pauseMs: 100 },
    );
    failing.add('/back');
    const result = await run.result();
    expect(result.failed.map((f) => f.chart).sort()).toEqual(['back', 'front']);
    const [front, back] = await Promise.all(members.map((m) => canaryOf(m).result()));
    expect(back.result).toBe('rolled-back');
    expect(back.reason).toMatch(/back canary 50 %: analysis failed 1 time\(s\).*503/);
    expect(front.result).toBe('rolled-back');
    expect(front.reason).toMatch(/^rollback requested by lockstep set shop: back: .*analysis failed/);
    for (const m of members) expect(await revisions(m)).toEqual([1, 2]);
    expect(await deployments()).toEqual({
      front: '4 registry.local/hello:2.0.0',
      back: '4 registry.local/hello:2.0.0',
    });
  });
});
