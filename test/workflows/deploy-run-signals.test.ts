import type { WorkflowHandle } from '@temporalio/client';
import type * as activities from '../../activities';
import { armadaChartSpec } from '../../api/chart';
import { armadaChartGroupSpec } from '../../api/chart-group';
import { armadaManifestSpec } from '../../api/manifest';
import { main } from '../../cli/main';
import { rootMessage } from '../../core/failures';
import { planManifest } from '../../core/plan/manifest';
import { canaryWorkflowId } from '../../core/plan/names';
import type { ObjectRef } from '../../core/plan/run-objects';
import type { CanaryOutcome } from '../../core/contracts/workflows';
import type { CanaryProgress } from '../../core/progress';
import { runsDeploying } from '../../runs/deploying-run';
import { ControlRefused, control } from '../../runs/control';
import { manifestWorkflowId, routeOf, type ObjectPlace } from '../../runs/targets';
import { deployRun, manifestWorkflow } from '../../workflows';
import { ArmadaObjects } from '../../workflows/search-attributes';
import { approveSignal, approveUpdate, canaryProgressQuery, progressQuery } from '../../workflows/messages';
import { sharedWorker, uniqueName } from '../helpers/env';
import { eventually } from '../helpers/processes';
import { chartCanaryStubs, fakeHelm } from './fake-helm';

/**
 * Messages that name a chart inside a deployRun (docs/design/one-workflow.md, decisions 4 and 5),
 * on the real dev server with Helm and Kubernetes stubbed: the run found by its ArmadaObjects, an
 * approval naming one canary chart passed on to that chart's canary alone, and armadactl steering
 * a chart with no run of its own through the run that deploys it.
 */
const helm = fakeHelm();
const stubs: Partial<typeof activities> = {
  ...helm.activities,
  ...chartCanaryStubs,
  async deleteDeployments() {},
};
const harness = sharedWorker({ activities: stubs });

/** Asked every 50 ms: what these tests wait for comes within a few workflow tasks (visibility a little later). */
const quickly = { timeoutMs: 20_000, pauseMs: 50 };

/**
 * Manifest `name` in `namespace` with one parallel group `apps`: canary charts a and b (releases
 * `p-…` at revision 1, so their upgrade steps a canary that waits for approval at 50 %) and c without a
 * canary; `manifest` adds to its spec.
 */
function twoCanaries(namespace: string, name: string, manifest: Record<string, unknown> = {}) {
  const releases = uniqueName('apps');
  const chart = (release: string, canary: boolean) => {
    helm.releases.set(`p-${release}`, {
      revision: 1,
      status: 'deployed',
      digest: 'old',
      lastDeployedRevision: 1,
    });
    return armadaChartSpec.parse({
      release,
      namespace: releases,
      source: { type: 'local', location: 'x' },
      ...(canary && { canary: { steps: [{ percent: 50, approval: true }] } }),
    });
  };
  return planManifest({
    namespace,
    manifest: {
      name,
      spec: armadaManifestSpec.parse({ release_prefix: 'p', chart_groups: ['apps'], ...manifest }),
    },
    groups: { apps: armadaChartGroupSpec.parse({ chart_group: ['a', 'b', 'c'] }) },
    charts: {
      a: chart(uniqueName('a'), true),
      b: chart(uniqueName('b'), true),
      c: chart(uniqueName('c'), false),
    },
  });
}

const chartRef = (namespace: string, name: string): ObjectRef => ({ kind: 'ArmadaChart', namespace, name });

const canaryOf = (namespace: string, chart: string) =>
  harness().client.workflow.getHandle<(run: unknown) => Promise<CanaryOutcome>>(
    canaryWorkflowId(namespace, chart),
  );

/** The progress of a chart's canary, once it answers. */
const canaryProgress = (namespace: string, chart: string): Promise<CanaryProgress | undefined> =>
  canaryOf(namespace, chart)
    .query(canaryProgressQuery)
    .catch(() => undefined);

/** armadactl in-process as a Temporal administrator (no cluster): exit code and stderr. */
async function armadactl(...argv: string[]) {
  const err: string[] = [];
  const code = await main(
    [...argv, '--as-temporal-admin'],
    () => undefined,
    (line) => err.push(line),
  );
  return { code, err };
}

describe('deployRun: messages that name a chart (stubbed activities, real dev server)', () => {
  it('is found by ArmadaObjects, and passes an approval naming one canary chart on to that canary only', async () => {
    const ns = uniqueName('ns');
    const { client, taskQueue } = harness();
    const workflowId = uniqueName('run');
    const run = await client.workflow.start(deployRun, {
      taskQueue,
      workflowId,
      args: [{ plan: twoCanaries(ns, 'demo') }],
    });
    // Visibility: the run lists every object it deploys.
    const found = await eventually(
      'the run listed under ArmadaChart a',
      async () => {
        const runs = await runsDeploying(client, chartRef(ns, 'a'));
        return runs.length ? runs : undefined;
      },
      quickly,
    );
    expect(found).toEqual([workflowId]);
    const { typedSearchAttributes } = await run.describe();
    expect(typedSearchAttributes.get(ArmadaObjects)).toEqual([
      `ArmadaManifest/${ns}/demo`,
      `ArmadaChartGroup/${ns}/apps`,
      `ArmadaChart/${ns}/a`,
      `ArmadaChart/${ns}/b`,
      `ArmadaChart/${ns}/c`,
    ]);
    await eventually(
      'both canaries wait for approval at 50 %',
      async () => {
        const [a, b] = await Promise.all(['a', 'b'].map((c) => canaryProgress(ns, c)));
        return a?.gate && b?.gate ? true : undefined;
      },
      quickly,
    );

    // An approval naming a: the run passes it on to a's canary, not to b's.
    const answer = await run.executeUpdate(approveUpdate, {
      args: [{ by: 'bob', target: chartRef(ns, 'a') }],
    });
    expect(answer).toBe(
      `approve passed on to the canary of ArmadaChart ${ns}/a (${canaryWorkflowId(ns, 'a')}), which checks it there`,
    );
    expect((await canaryOf(ns, 'a').result()).result).toBe('promoted');
    await eventually(
      'chart a upgraded after its canary',
      async () => {
        const a = (await run.query(progressQuery)).groups[0].charts.find((c) => c.chart === 'a');
        return a?.state === 'deployed' ? true : undefined;
      },
      quickly,
    );
    const b = (await canaryProgress(ns, 'b'))!;
    expect(b.gate?.name).toBeDefined();
    expect(b.approvals).toBeUndefined();
    expect(b.percent).toBe(50);
    expect(helm.calls.filter((c) => c.name === 'upgrade' && c.release?.startsWith('p-b-'))).toEqual([]);

    // The run's own gate is not b's: an untargeted approval is refused by the run, b waits on.
    const untargeted = await run.executeUpdate(approveUpdate, { args: [{ by: 'bob' }] }).catch(rootMessage);
    expect(untargeted).toMatch(/^no approval gate is waiting/);
    // A signal naming a chart the run does not deploy is refused and shown, never taken.
    await run.signal(approveSignal, { by: 'bob', target: chartRef(ns, 'x') });
    const refused = await eventually(
      'the refusal shown',
      async () => (await run.query(progressQuery)).refused,
      quickly,
    );
    expect(refused.map((r) => r.why)).toEqual([`ArmadaChart ${ns}/x is not deployed by this run`]);

    // The approve signal naming b (for tools that only signal) lets b go on; the run completes.
    await run.signal(approveSignal, { by: 'bob', target: chartRef(ns, 'b') });
    const outcome = await run.result();
    expect(outcome.groups[0].outcomes.map((o) => [o.chart, o.action]).sort()).toEqual([
      ['a', 'upgraded'],
      ['b', 'upgraded'],
      ['c', 'upgraded'],
    ]);
    expect((await canaryOf(ns, 'b').result()).result).toBe('promoted');
  });

  it('armadactl steers a chart with no run of its own through the one run that deploys it, and says when none or several do', async () => {
    const ns = uniqueName('ns');
    const { client, taskQueue } = harness();
    const start = (name: string, manifest?: Record<string, unknown>) =>
      client.workflow.start(deployRun, {
        taskQueue,
        workflowId: uniqueName('run'),
        args: [{ plan: twoCanaries(ns, name, manifest) }],
      });
    const deploys = (chart: string, count: number) =>
      eventually(
        `${count} runs listed under ArmadaChart ${chart}`,
        async () => ((await runsDeploying(client, chartRef(ns, chart))).length === count ? true : undefined),
        quickly,
      );
    const run = await start('demo');
    await deploys('c', 1);

    // c has no canary: armadactl finds the run by ArmadaObjects, which refuses (no canary of c runs).
    const approveC = await armadactl('approve', 'act/c', '-n', ns);
    expect(approveC.err).toEqual([
      `armadactl approve: approve refused by ${run.workflowId}: ArmadaChart ${ns}/c has no canary running in this run: nothing to approve there`,
    ]);
    expect(approveC.code).toBe(1);

    const none = await armadactl('pause', 'act/nothing', '-n', ns);
    expect(none.err).toEqual([
      `armadactl pause: nothing to pause: ArmadaChart:${ns}/nothing/canary has never run; ArmadaChart:${ns}/nothing has never run; and no running run deploys ArmadaChart ${ns}/nothing (ArmadaObjects)`,
    ]);
    expect(none.code).toBe(1);

    // pause and resume of c go to the run that drives it, naming c.
    const pause = await armadactl('pause', 'act/c', '-n', ns);
    expect(pause).toEqual({ code: 0, err: [] });
    const paused = await eventually(
      'the run paused',
      async () => (await run.query(progressQuery)).paused,
      quickly,
    );
    expect(paused.target).toEqual(chartRef(ns, 'c'));
    expect(await armadactl('resume', 'act/c', '-n', ns)).toEqual({ code: 0, err: [] });
    expect((await run.query(progressQuery)).paused).toBeUndefined();

    // A second run, held at its gate before apps, deploys c too: armadactl does not pick one.
    const other = await start('other', { approval: { before: ['apps'] } });
    await deploys('c', 2);
    const several = await armadactl('pause', 'act/c', '-n', ns);
    expect(several.err).toHaveLength(1);
    expect(several.err[0]).toMatch(
      new RegExp(
        `^armadactl pause: ArmadaChart ${ns}/c is deployed by 2 running runs \\(.+\\): steer the one you mean`,
      ),
    );
    expect(several.err[0]).toContain(run.workflowId);
    expect(several.err[0]).toContain(other.workflowId);
    await other.terminate('test done');
    await run.terminate('test done');
  });

  it('a manifest’s chart named as the target: its canary takes its pause; without one the manifest’s run, as a whole, and says so; a chart the run’s plan lacks is refused; an old-build manifestWorkflow takes it as its own', async () => {
    const ns = uniqueName('ns');
    const { client, taskQueue } = harness();
    const inManifest = (manifest: string, name: string, canary: boolean): ObjectPlace => ({
      kind: 'ArmadaChart',
      namespace: ns,
      name,
      manifest,
      group: 'apps',
      canary,
    });
    const send = (place: ObjectPlace, verb: 'pause' | 'resume') =>
      control(client, routeOf(place, verb), verb, { by: 'alice' });
    const pausedBy = async (handle: WorkflowHandle) => (await handle.query(progressQuery)).paused;
    const whole = (verb: string, workflowId: string) =>
      `ArmadaChart ${ns}/c has no canary running: ${workflowId} takes the ${verb} as a whole, for every chart it deploys`;

    const demo = manifestWorkflowId(ns, 'demo');
    const run = await client.workflow.start(deployRun, {
      taskQueue,
      workflowId: demo,
      args: [{ plan: twoCanaries(ns, 'demo') }],
    });
    await eventually('a canary waits for approval', () => canaryProgress(ns, 'a'), quickly);

    // c has no canary: the manifest's run takes it, paused as a whole, and the answer says so.
    expect(await send(inManifest('demo', 'c', false), 'pause')).toEqual({
      workflowId: demo,
      answer: `pausing at the next safe point; ${whole('pause', demo)}`,
    });
    expect(await eventually('the run paused', () => pausedBy(run), quickly)).toMatchObject({
      target: chartRef(ns, 'c'),
    });
    // As a whole: the run passes its pause on to the canaries it runs (a's), and its resume.
    await eventually(
      'a’s canary paused with the run',
      async () => (await canaryProgress(ns, 'a'))?.paused,
      quickly,
    );
    expect((await send(inManifest('demo', 'c', false), 'resume')).answer).toBe(
      `resumed; ${whole('resume', demo)}`,
    );
    expect(await pausedBy(run)).toBeUndefined();
    await eventually(
      'a’s canary resumed with the run',
      async () => ((await canaryProgress(ns, 'a'))?.paused === undefined ? true : undefined),
      quickly,
    );

    // a's canary runs: it takes a's pause itself, and the run goes on unpaused.
    expect(await send(inManifest('demo', 'a', true), 'pause')).toEqual({
      workflowId: canaryWorkflowId(ns, 'a'),
      answer: 'pausing at the next safe point',
    });
    await eventually('a’s canary paused', async () => (await canaryProgress(ns, 'a'))?.paused, quickly);
    expect(await pausedBy(run)).toBeUndefined();
    await send(inManifest('demo', 'a', true), 'resume');

    // The listings name a chart the running run's plan does not hold: refused before it is sent.
    await expect(send(inManifest('demo', 'ghost', false), 'pause')).rejects.toThrow(
      new ControlRefused(
        `pause refused: ArmadaChart ${ns}/ghost is not in the plan of the run ${demo} (its charts: a, b, c): that run started before the chart was listed; steer it by the object it runs, or wait for the run that deploys the chart`,
      ),
    );
    expect(await pausedBy(run)).toBeUndefined();
    await run.terminate('test done');

    // A manifest run of the old build (manifestWorkflow, held at its gate) reads no target: the
    // message is its own, as before targets, and it pauses as a whole.
    const oldId = manifestWorkflowId(ns, 'old');
    const old = await client.workflow.start(manifestWorkflow, {
      taskQueue,
      workflowId: oldId,
      args: [{ plan: twoCanaries(ns, 'old', { approval: { before: ['apps'] } }) }],
    });
    await eventually(
      'the old run waits at its gate',
      async () => (await old.query(progressQuery)).gate,
      quickly,
    );
    expect((await send(inManifest('old', 'c', false), 'pause')).answer).toBe(
      `pausing at the next safe point; ${whole('pause', oldId)}`,
    );
    expect(await eventually('the old run paused', () => pausedBy(old), quickly)).toMatchObject({
      by: 'alice',
      target: chartRef(ns, 'c'),
    });
    await send(inManifest('old', 'c', false), 'resume');
    expect(await pausedBy(old)).toBeUndefined();
    await old.terminate('test done');
  });
});
