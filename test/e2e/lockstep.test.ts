import { createServer, type Server } from 'node:http';
import type { AddressInfo } from 'node:net';
import { isDeepStrictEqual } from 'node:util';
import { armadaChartSpec } from '../../api/chart';
import { armadaChartGroupSpec } from '../../api/chart-group';
import { deployerSpec } from '../../api/deployer';
import type { CanaryOutcome, DeployerOutcome } from '../../core/contracts/workflows';
import { canaryProgressQuery } from '../../workflows/messages';
import type { CanaryProgress } from '../../core/progress';
import { canaryWorkflowId, objectWorkflowId } from '../../core/plan/names';
import { groupRun } from '../../runs/requests';
import { groupOutcomeOf } from '../helpers/plan-of-one';
import { releaseRevisions, sharedWorker, uniqueName } from '../helpers/env';
import {
  deploymentImages,
  deploymentStates,
  deploymentsWatch,
  kubectl,
  recordChanges,
  sawDeleted,
} from '../helpers/kube';
import { eventually } from '../helpers/processes';

/** What a canary waits on at a step once its split is in place: its hold, a check, the others. */
const SPLIT_IN_PLACE = ['hold', 'analysis', 'the lockstep set'];

/**
 * A lockstep set of two chart canaries (front, back) and a Deployer (worker) on the real stack:
 * the worker, helm and the sandbox cluster. Each member's analysis asks a loopback server the
 * test steers.
 */
describe('lockstep canaries across two charts and a Deployer (real worker, helm, sandbox cluster)', () => {
  const namespace = uniqueName('lockstep');
  const members = ['front', 'back'];
  const steps = [
    { percent: 25, sleep: 2 },
    { percent: 50, sleep: 3 },
  ];
  const harness = sharedWorker();
  /** Per chart, the step its analysis fails at; every other check is healthy. */
  const failingAt = new Map<string, number>();
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
            steps,
            step_timeout: 60,
            analysis: { url: `${analysisBase}/${name}`, interval: 1 },
          },
        }),
      ]),
    );
    // Deployment worker-<tag> in the releases' namespace, 4 replicas, the charts' steps.
    const worker = deployerSpec.parse({
      type: 'canary',
      deployment: { name: 'worker', namespace, image: 'registry.local/worker', version: tag, replicas: 4 },
      steps,
      step_timeout: 60,
      analysis: { url: `${analysisBase}/worker`, interval: 1 },
    });
    const spec = armadaChartGroupSpec.parse({
      chart_group: members,
      deployers: ['worker'],
      canary_lockstep: true,
    });
    return { namespace: 'default', name: 'shop', spec, charts, deployers: { worker } };
  };
  /** The group's run as the bridge and armadactl start it (groupRun: deployRun over its plan of one). */
  const deploy = (tag: string) => {
    const request = groupRun(group(tag));
    expect(request.workflowType).toBe('deployRun');
    return harness().client.workflow.start(request.workflowType, {
      taskQueue: harness().taskQueue,
      workflowId: uniqueName('lockstep-group'),
      args: [request.input],
    });
  };
  const canaryOf = (member: string) =>
    harness().client.workflow.getHandle<(run: unknown) => Promise<CanaryOutcome>>(
      canaryWorkflowId('default', member),
    );
  /** The Deployer's rollout: the group's run's child, under the Deployer's own workflow ID; it steps its canary itself. */
  const workerRun = () =>
    harness().client.workflow.getHandle<(run: unknown) => Promise<DeployerOutcome>>(
      objectWorkflowId('Deployer', 'default', 'worker'),
    );
  const revisions = (release: string) => releaseRevisions(release, namespace);
  const deployments = () => deploymentImages(namespace);
  /** Each member's canary progress (front, back, worker), or undefined while one does not answer yet. */
  const progressOfAll = async (): Promise<CanaryProgress[] | undefined> => {
    const all = await Promise.all(
      [...members.map(canaryOf), workerRun()].map((handle) =>
        handle.query(canaryProgressQuery).catch(() => undefined),
      ),
    );
    return all.every((p) => p?.kind === 'canary') ? (all as CanaryProgress[]) : undefined;
  };

  /**
   * What the analysis server answers a chart's check: 503 while its canary runs the step it fails
   * at. The canary waits on the check, so its progress shows the step the check is for.
   */
  const analysisStatus = async (path: string): Promise<number> => {
    const chart = path.slice(1);
    const step = failingAt.get(chart);
    if (step === undefined) return 200;
    const progress = await canaryOf(chart)
      .query(canaryProgressQuery)
      .catch(() => undefined);
    return progress?.step === step ? 503 : 200;
  };

  beforeAll(async () => {
    server = createServer((req, res) => {
      void analysisStatus(req.url ?? '').then((status) => res.writeHead(status).end());
    });
    await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
    analysisBase = `http://127.0.0.1:${(server.address() as AddressInfo).port}`;
  });
  afterAll(async () => {
    await new Promise((resolve) => server.close(resolve));
    await kubectl('delete', 'namespace', namespace, '--wait=false').catch(() => undefined);
  });

  it('installs both releases and the Deployer directly the first time: nothing to step from', async () => {
    await kubectl('create', 'namespace', namespace);
    const result = await groupOutcomeOf(await deploy('1.0.0'));
    expect(result.outcomes.map((o) => `${o.release} ${o.action}`).sort()).toEqual([
      'back installed',
      'front installed',
    ]);
    expect(result.deployers).toEqual([expect.objectContaining({ name: 'worker', result: 'deployed' })]);
    expect((await deployments())['worker-1.0.0']).toBe('4 registry.local/worker:1.0.0');
  });

  it('steps both canaries and the Deployer together, observed at every step, then upgrades all three', async () => {
    const watched = await recordChanges([deploymentsWatch(namespace)], 3);
    const run = await deploy('2.0.0');
    /** The widest gap between the members' steps at any poll: lockstep keeps it below 2. */
    let widestGap = 0;
    for (const [step, percent] of [
      [1, 25],
      [2, 50],
    ] as const) {
      // Each member once seen at the step with its split in place (holding, checking, or done and
      // waiting for the set), with the percent it shows. Seen one at a time: after its hold a
      // member waits for the set, so all three need not hold at once.
      const shown = new Map<number, number>();
      await eventually(
        `every member at step ${step} with its split in place`,
        async () => {
          const all = await progressOfAll();
          if (!all) return undefined;
          widestGap = Math.max(widestGap, ...all.map((p) => p.step - Math.min(...all.map((q) => q.step))));
          all.forEach((p, member) => {
            if (p.step === step && SPLIT_IN_PLACE.includes(p.waitingOn ?? '')) shown.set(member, p.percent);
          });
          return shown.size === all.length ? true : undefined;
        },
        { timeoutMs: 60_000, pauseMs: 100 },
      );
      expect([0, 1, 2].map((member) => shown.get(member))).toEqual([percent, percent, percent]);
    }
    expect(widestGap).toBeLessThan(2);
    const result = await groupOutcomeOf(run);
    expect(result.failed).toEqual([]);
    const records = await Promise.all([...members.map((m) => canaryOf(m).result()), workerRun().result()]);
    expect(records[2]).toMatchObject({ result: 'promoted', version: '2.0.0', previous: '1.0.0' });
    for (let k = 1; k < 3; k++) {
      const lastPassed = Math.max(...records.map((o) => Date.parse(o.steps[k - 1].endedAt!)));
      for (const o of records) expect(Date.parse(o.steps[k].startedAt!)).toBeGreaterThanOrEqual(lastPassed);
    }
    for (const m of members) expect(await revisions(m)).toEqual([1, 2]);
    expect(await deployments()).toEqual({
      front: '4 ghcr.io/stefanprodan/podinfo:2.0.0',
      back: '4 ghcr.io/stefanprodan/podinfo:2.0.0',
      'worker-2.0.0': '4 registry.local/worker:2.0.0',
    });
    // What the API server held at each step once every member's split was in place, all three at
    // once (lockstep: none scales on before the others reach it), in the steps' order.
    const states = deploymentStates(
      await watched.until(
        'the canaries and the old Deployer version deleted',
        sawDeleted('front-canary', 'back-canary', 'worker-1.0.0'),
      ),
    );
    const splits = (
      [
        [3, 1],
        [2, 2],
      ] as const
    ).map(([stable, canary]) => ({
      front: `${stable} ghcr.io/stefanprodan/podinfo:1.0.0`,
      'front-canary': `${canary} ghcr.io/stefanprodan/podinfo:2.0.0`,
      back: `${stable} ghcr.io/stefanprodan/podinfo:1.0.0`,
      'back-canary': `${canary} ghcr.io/stefanprodan/podinfo:2.0.0`,
      'worker-1.0.0': `${stable} registry.local/worker:1.0.0`,
      'worker-2.0.0': `${canary} registry.local/worker:2.0.0`,
    }));
    expect(states.filter((state) => splits.some((split) => isDeepStrictEqual(state, split)))).toEqual(splits);
  });

  it("rolls back all three when one chart's analysis fails; the releases stay at their old revision, the Deployer's old version serves", async () => {
    // Back's first check at step 2 fails, whatever the others are doing then.
    failingAt.set('back', 2);
    const run = await deploy('3.0.0');
    const result = await groupOutcomeOf(run);
    expect(result.failed.map((f) => f.chart).sort()).toEqual(['Deployer/worker', 'back', 'front']);
    const [front, back] = await Promise.all(members.map((m) => canaryOf(m).result()));
    expect(back.result).toBe('rolled-back');
    expect(back.reason).toMatch(/back canary 50 %: analysis failed 1 time\(s\).*503/);
    for (const other of [front, await workerRun().result()]) {
      expect(other.result).toBe('rolled-back');
      expect(other.reason).toMatch(/^rollback requested by lockstep set shop: back: .*analysis failed/);
    }
    for (const m of members) expect(await revisions(m)).toEqual([1, 2]);
    // The Deployer's new version is gone and its old one serves at full size.
    expect(await deployments()).toEqual({
      front: '4 ghcr.io/stefanprodan/podinfo:2.0.0',
      back: '4 ghcr.io/stefanprodan/podinfo:2.0.0',
      'worker-2.0.0': '4 registry.local/worker:2.0.0',
    });
  });
});
