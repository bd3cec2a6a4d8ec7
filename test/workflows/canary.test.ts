import { Context } from '@temporalio/activity';
import type { WorkflowHandle } from '@temporalio/client';
import { ApplicationFailure } from '@temporalio/common';
import type { temporal } from '@temporalio/proto';
import type * as activities from '../../activities';
import { canaryWorkflow, deployerWorkflow } from '../../workflows';
import type { CanaryRun } from '../../core/contracts/workflows';
import { mkdtempSync } from 'node:fs';
import { tmpdir } from 'node:os';
import path from 'node:path';
import { loadSteeringKey } from '../../runs/steering-key';
import {
  approveSignal,
  approveUpdate,
  canaryProgressQuery,
  pauseSignal,
  promoteSignal,
  replanSignal,
  resumeSignal,
  rollbackSignal,
} from '../../workflows/messages';
import type { CanaryProgress } from '../../core/progress';
import { sharedWorker, uniqueName } from '../helpers/env';
import {
  SHOWN_DEADLINE_TOLERANCE_MS,
  TIMER_FIRING_TOLERANCE_MS,
  historyTimers,
  saveHistory,
  savingHistories,
  summaryOf,
} from '../helpers/histories';
import { eventually } from '../helpers/processes';
import { refusal } from '../helpers/runs';

/** One scale call as the stub saw it: which Deployment, to how many, in which namespace. */
interface ScaleCall {
  namespace: string;
  name: string;
  replicas: number;
}

/**
 * Stub Kubernetes activities for canary workflows, keyed by namespace (each test uses its own):
 * scaling and deleting are recorded (a scale call can be held until the test releases it),
 * readiness of the new side can be made to fail from a replica count on, analysis answers with a
 * queue of results.
 */
function fakeKube() {
  const scales: ScaleCall[] = [];
  const deleted: { namespace: string; names: string[] }[] = [];
  const notReadyAt = new Map<string, number>();
  const analysis = new Map<string, boolean[]>();
  /** checkPrometheus requests, as the stub saw them; every check passes. */
  const prometheus: Parameters<typeof activities.checkPrometheus>[0][] = [];
  const deployments = new Map<string, { deployment: string; version: string; replicas: number }[]>();
  /** Deployer activities called, as `observe namespace` and `create namespace/name-version`. */
  const deployerCalls: string[] = [];
  /** Scale calls (`namespace/name=replicas`) that wait for their promise before they return. */
  const scaleGates = new Map<string, Promise<void>>();
  /** Called with each status write of a custom resource (`namespace/name`) before it returns. */
  const statusHooks = new Map<string, (status: Record<string, unknown>) => Promise<void>>();
  const stubs: Partial<typeof activities> = {
    async scaleDeployment(req) {
      scales.push(req);
      await scaleGates.get(`${req.namespace}/${req.name}=${req.replicas}`);
      return req.replicas;
    },
    async waitForResources(req) {
      const percentOf = (name: string) =>
        scales.filter((s) => s.namespace === req.namespace && s.name === name).at(-1);
      const names = (req.targets ?? []).map((t) => t.fieldSelector!.replace('metadata.name=', ''));
      const limit = notReadyAt.get(req.namespace);
      const canaryReplicas = names.filter((n) => n.endsWith('-new')).map((n) => percentOf(n)?.replicas ?? 0);
      if (limit !== undefined && canaryReplicas.some((r) => r >= limit))
        throw ApplicationFailure.nonRetryable(`wait for ${req.subject} timed out`, 'WaitTimeout');
      return { resources: [], summary: 'ready' };
    },
    async deleteDeployments(req) {
      deleted.push(req);
    },
    async checkAnalysis(req) {
      const ok = analysis.get(req.url)?.shift() ?? true;
      return { ok, message: ok ? 'ok' : `GET ${req.url}: status 503, expected 200` };
    },
    async checkPrometheus(req) {
      prometheus.push(req);
      return { ok: true, message: 'ok' };
    },
    async reportStatus(req) {
      await statusHooks.get(`${req.namespace}/${req.name}`)?.(req.status);
      // Measured as the real activity measures it.
      return { onCluster: false, tookMs: Date.now() - Context.current().info.scheduledTimestampMs };
    },
    async observeOwnedDeployments(ref) {
      deployerCalls.push(`observe ${ref.namespace}`);
      return deployments.get(ref.namespace) ?? [];
    },
    async createDeployerDeployment(req) {
      deployerCalls.push(`create ${req.namespace}/${req.name}-${req.version}`);
      return `${req.name}-${req.version}`;
    },
  };
  return {
    scales,
    deleted,
    notReadyAt,
    analysis,
    prometheus,
    deployments,
    deployerCalls,
    scaleGates,
    statusHooks,
    stubs,
  };
}

const kube = fakeKube();
const harness = sharedWorker({ activities: kube.stubs });

/** A canary of Deployment web (10 replicas) against web-old, with the given steps. */
function canaryRun(namespace: string, steps: CanaryRun['steps'], extra: Partial<CanaryRun> = {}): CanaryRun {
  return {
    title: 'web',
    namespace,
    pairs: [{ canary: 'web-new', stable: 'web-old', replicas: 10, stableReplicas: 10 }],
    steps,
    ...extra,
  };
}

async function start(run: CanaryRun): Promise<WorkflowHandle<typeof canaryWorkflow>> {
  return harness().client.workflow.start(canaryWorkflow, {
    taskQueue: harness().taskQueue,
    workflowId: uniqueName('canary'),
    args: [run],
  });
}

/** Polls the progress query until `ready` holds (the workflow's own readiness, not a sleep). */
async function until(
  handle: Pick<WorkflowHandle, 'query'>,
  ready: (p: CanaryProgress) => boolean,
): Promise<CanaryProgress> {
  for (;;) {
    const progress = await handle.query(canaryProgressQuery);
    if (ready(progress)) return progress;
    await new Promise((resolve) => setTimeout(resolve, 50));
  }
}

/** One run of a chain of runs (continue-as-new) under one workflow ID. */
interface ChainRun {
  runId: string;
  status: string;
  startTime: Date;
  /** Events in its history, but those of workflow-task attempts that timed out or failed. */
  events: number;
}

/** Events a test history is allowed past its historyLimit: the last wait's and the continue-as-new's. */
const HISTORY_OVERSHOOT = 20;

/**
 * A history's length without its workflow-task attempts that timed out or failed. On a loaded
 * machine the worker's 500 ms sticky-queue timeout adds two or three events at a time (runs of
 * 83–93 events against 80, in test runs beside four others), which say nothing of how far the
 * run lets its history grow.
 */
function ownEvents(events: temporal.api.history.v1.IHistoryEvent[]): number {
  const retried = new Set<string>();
  for (const e of events) {
    const attempt = e.workflowTaskTimedOutEventAttributes ?? e.workflowTaskFailedEventAttributes;
    if (!attempt) continue;
    retried.add(String(e.eventId)).add(String(attempt.scheduledEventId));
    if (Number(attempt.startedEventId ?? 0) > 0) retried.add(String(attempt.startedEventId));
  }
  return events.length - retried.size;
}
/** The longest history the bounded-history tests saw, for the log. */
let longestHistory = 0;

/** Every run of `workflowId`, oldest first, as the server lists them (`WorkflowId = '…'`). */
async function runsOf(workflowId: string): Promise<ChainRun[]> {
  const { client } = harness();
  const runs: ChainRun[] = [];
  for await (const r of client.workflow.list({ query: `WorkflowId = '${workflowId}'` })) {
    const history = await client.workflow.getHandle(workflowId, r.runId).fetchHistory();
    runs.push({
      runId: r.runId,
      status: r.status.name,
      startTime: r.startTime,
      events: ownEvents(history.events ?? []),
    });
  }
  return runs.sort((a, b) => a.startTime.getTime() - b.startTime.getTime());
}

/**
 * The finished chain of `workflowId`: every run continued as new but the last, which completed.
 * Saves each run's history as `<name>-<i>.json` when saving histories.
 */
async function finishedChain(workflowId: string, name: string): Promise<ChainRun[]> {
  const runs = await eventually(
    `${workflowId}'s runs listed, the last completed`,
    async () => {
      const runs = await runsOf(workflowId);
      const statuses = runs.map((r) => r.status);
      return statuses.at(-1) === 'COMPLETED' && statuses.slice(0, -1).every((s) => s === 'CONTINUED_AS_NEW')
        ? runs
        : undefined;
    },
    { timeoutMs: 30_000 },
  );
  longestHistory = Math.max(longestHistory, ...runs.map((r) => r.events));
  if (savingHistories)
    for (const [i, run] of runs.entries()) await saveHistory(workflowId, run.runId, `${name}-${i}`);
  return runs;
}

/**
 * Sends `pause by bob` again and again until the workflow has had `runs` runs: to one run until
 * its history reaches `limit` events, then waits for it to continue as new. Sent unthrottled,
 * they piled up on a loaded worker's run until the server refused more (INVALID_ARGUMENT:
 * exceeded workflow execution limit for signal events); sent up to `limit` signals a run, those
 * still arriving while a loaded worker continued as new overshot the bound (95 events against
 * 60 + 20, in a suite beside image builds), which measured the sender, not the run.
 */
async function pauseThroughRuns(handle: WorkflowHandle, runs: number, limit: number): Promise<void> {
  const runIds = new Set([(await handle.describe()).runId]);
  let fullSince: number | undefined;
  while (runIds.size < runs) {
    const { runId, historyLength } = await handle.describe();
    if (!runIds.has(runId)) {
      runIds.add(runId);
      fullSince = undefined;
    } else if (historyLength < limit) {
      await handle.signal(pauseSignal, { by: 'bob' });
    } else {
      // Full: the run continues as new at its next activation. The one that filled it may have
      // seen a length just under the limit (the task's own closing events came after), so a
      // run still there a second later gets one more signal to wake it.
      fullSince ??= Date.now();
      if (Date.now() - fullSince > 1000) {
        await handle.signal(pauseSignal, { by: 'bob' });
        fullSince = Date.now();
      }
      await new Promise((resolve) => setTimeout(resolve, 50));
    }
  }
}

afterAll(() => {
  if (longestHistory) console.log(`bounded histories: the longest run had ${longestHistory} events`);
});

const splits = (namespace: string) =>
  kube.scales.filter((s) => s.namespace === namespace).map((s) => `${s.name}=${s.replicas}`);
const ms = (iso?: string) => Date.parse(iso!);

describe('canary workflow (stubbed Kubernetes, real dev server)', () => {
  it('steps 10/30/60/100 in order: new up, wait Ready, old down, then hold each step', async () => {
    const ns = uniqueName('order');
    const handle = await start(
      canaryRun(ns, [
        { percent: 10, holdSeconds: 1 },
        { percent: 30, holdSeconds: 1 },
        { percent: 60, holdSeconds: 1 },
        { percent: 100 },
      ]),
    );
    const outcome = await handle.result();
    expect(outcome.result).toBe('promoted');
    expect(splits(ns)).toEqual([
      'web-new=1',
      'web-old=9',
      'web-new=3',
      'web-old=7',
      'web-new=6',
      'web-old=4',
      'web-new=10',
      'web-old=0',
    ]);
    for (const step of outcome.steps.slice(0, 3)) {
      expect(step.ended).toBe('held');
      expect(ms(step.endedAt) - ms(step.readyAt)).toBeGreaterThanOrEqual(1000);
    }
    expect(outcome.steps.map((s) => `${s.canary}/${s.stable}`)).toEqual(['1/9', '3/7', '6/4', '10/0']);
    expect(kube.deleted.filter((d) => d.namespace === ns)).toEqual([]); // the caller deletes the old side
  });

  it("an ArmadaChart's canary never reports the chart Ready: its release is upgraded after the canary", async () => {
    const ns = uniqueName('chartstatus');
    const reported: string[] = [];
    kube.statusHooks.set(`${ns}/shop`, async (status) => {
      reported.push(`${status.actual_state} ${status.satisfied}`);
    });
    const run = canaryRun(ns, [{ percent: 50, holdSeconds: 1 }, { percent: 100 }], {
      resource: { kind: 'ArmadaChart', namespace: ns, name: 'shop' },
    });
    expect((await (await start(run)).result()).result).toBe('promoted');
    expect(reported.length).toBeGreaterThan(2);
    expect(reported.filter((r) => r !== 'progressing false')).toEqual([]);
  });

  it('gives every hold timer a summary the Temporal UI shows', async () => {
    const ns = uniqueName('summary');
    const handle = await start(canaryRun(ns, [{ percent: 30, holdSeconds: 1 }], { title: 'blog-2' }));
    await handle.result();
    const history = await handle.fetchHistory();
    const timers = (history.events ?? []).filter((e) => e.timerStartedEventAttributes);
    expect(timers.map(summaryOf)).toEqual(['blog-2 canary 30 % — hold 1s']);
  });

  it('a hold ends at the deadline its status shows, however long that status write took', async () => {
    const ns = uniqueName('deadline');
    // Longer than SHOWN_DEADLINE_TOLERANCE_MS: a hold that ran from after the write ends out of it.
    const WRITE_MS = 2_500;
    let shown: string | undefined;
    kube.statusHooks.set(`${ns}/shop`, async (status) => {
      const deadline = (status.progress as { next_step_at?: string | null }).next_step_at;
      if (!deadline) return;
      shown = deadline;
      await new Promise((resolve) => setTimeout(resolve, WRITE_MS)); // a slow API server
    });
    const run = canaryRun(ns, [{ percent: 50, holdSeconds: 3 }, { percent: 100 }], {
      resource: { kind: 'ArmadaChart', namespace: ns, name: 'shop' },
    });
    const handle = await start(run);
    expect((await handle.result()).result).toBe('promoted');
    if (savingHistories) await saveHistory(handle.workflowId, undefined, 'canary-hold-deadline--canary');
    const [timer] = historyTimers((await handle.fetchHistory()).events ?? []);
    // The timer is shorter by the write: it starts only when the task that made the write completes.
    expect(timer.deadline - timer.startedAt).toBeLessThanOrEqual(3_000 - WRITE_MS);
    // A server-side timer, it fires on its deadline;
    expect(Math.abs(timer.firedAt! - timer.deadline)).toBeLessThanOrEqual(TIMER_FIRING_TOLERANCE_MS);
    // which is the one shown but for the task's processing time. Before, the hold ran whole from
    // there and its deadline lay WRITE_MS or more after the one shown.
    expect(Math.abs(timer.deadline - ms(shown))).toBeLessThanOrEqual(SHOWN_DEADLINE_TOLERANCE_MS);
  });

  it('pause freezes the hold and resume runs only the time that was left', async () => {
    const ns = uniqueName('pause');
    const handle = await start(canaryRun(ns, [{ percent: 10, holdSeconds: 3 }, { percent: 100 }]));
    const holding = await until(handle, (p) => p.waitingOn === 'hold');
    const holdStart = ms(holding.history[0].readyAt);
    await until(handle, () => Date.now() - holdStart >= 1000);
    await handle.signal(pauseSignal, { by: 'test', reason: 'look at metrics' });
    const paused = await until(handle, (p) => p.paused?.remainingSeconds !== undefined);
    const remaining = paused.paused!.remainingSeconds!;
    expect(remaining).toBeGreaterThan(0.5);
    expect(remaining).toBeLessThan(2.5);
    expect(paused.nextStepAt).toBeUndefined();
    // Paused for longer than the whole hold: a timer still running would end the step.
    await new Promise((resolve) => setTimeout(resolve, 3500));
    expect((await handle.query(canaryProgressQuery)).history[0].endedAt).toBeUndefined();
    const resumedAt = Date.now();
    await handle.signal(resumeSignal);
    const outcome = await handle.result();
    if (savingHistories) await saveHistory(handle.workflowId, undefined, 'canary-pause-resume--canary');
    // The hold's second timer runs what was left (restarting the hold would make it 3 s) ...
    const holds = historyTimers((await handle.fetchHistory()).events ?? [], ' — hold ');
    expect(holds).toHaveLength(2);
    expect(holds[1].deadline - holds[1].startedAt).toBeLessThanOrEqual(remaining * 1000);
    // ... and the step ends about then: the margin covers the signal, two workflow tasks, the timer
    // and the status write on a loaded machine (1.5 s left little for that).
    const afterResume = ms(outcome.steps[0].endedAt) - resumedAt;
    expect(afterResume).toBeGreaterThanOrEqual(remaining * 1000 - 300);
    expect(afterResume).toBeLessThan(remaining * 1000 + 3000);
    expect(outcome.result).toBe('promoted');
  });

  it('promote skips the remaining steps and goes to 100 %', async () => {
    const ns = uniqueName('promote');
    const handle = await start(
      canaryRun(ns, [{ percent: 10, holdSeconds: 600 }, { percent: 50, holdSeconds: 600 }, { percent: 100 }]),
    );
    await until(handle, (p) => p.waitingOn === 'hold');
    await handle.signal(promoteSignal, { by: 'test' });
    const outcome = await handle.result();
    expect(outcome.result).toBe('promoted');
    expect(outcome.reason).toBe('promoted by test');
    expect(splits(ns)).toEqual(['web-new=1', 'web-old=9', 'web-new=10', 'web-old=0']);
    expect(outcome.steps.map((s) => s.ended)).toEqual(['promoted', undefined, 'promoted']);
  });

  it('an approval step waits for approve, then goes on', async () => {
    const ns = uniqueName('approve');
    const handle = await start(canaryRun(ns, [{ percent: 20, approval: true }, { percent: 100 }]));
    await until(handle, (p) => p.waitingOn === 'approval');
    await handle.signal(approveSignal, { by: 'test' });
    const outcome = await handle.result();
    expect(outcome.result).toBe('promoted');
    expect(outcome.steps[0].ended).toBe('approved');
  });

  it('an approval timeout rolls back by default: old restored, new deleted', async () => {
    const ns = uniqueName('timeout-rb');
    const handle = await start(
      canaryRun(ns, [{ percent: 20, approval: true }, { percent: 100 }], { approvalTimeoutSeconds: 1 }),
    );
    const outcome = await handle.result();
    expect(outcome.result).toBe('rolled-back');
    expect(outcome.reason).toMatch(/approval of web canary 20 % timed out after 1s/);
    expect(splits(ns)).toEqual(['web-new=2', 'web-old=8', 'web-old=10']);
    expect(kube.deleted.filter((d) => d.namespace === ns)).toEqual([{ namespace: ns, names: ['web-new'] }]);
  });

  it('an approval timeout with on_timeout promote goes to 100 %', async () => {
    const ns = uniqueName('timeout-pr');
    const handle = await start(
      canaryRun(ns, [{ percent: 20, approval: true }, { percent: 50, holdSeconds: 600 }, { percent: 100 }], {
        approvalTimeoutSeconds: 1,
        onTimeout: 'promote',
      }),
    );
    const outcome = await handle.result();
    expect(outcome.result).toBe('promoted');
    expect(outcome.reason).toMatch(/timed out after 1s: promoted/);
    expect(splits(ns)).toEqual(['web-new=2', 'web-old=8', 'web-new=10', 'web-old=0']);
  });

  it('a rollback signal mid-hold restores the old side and deletes the new one', async () => {
    const ns = uniqueName('rollback');
    const handle = await start(
      canaryRun(ns, [
        { percent: 10, holdSeconds: 1 },
        { percent: 40, holdSeconds: 600 },
      ]),
    );
    await until(handle, (p) => p.step === 2 && p.waitingOn === 'hold');
    await handle.signal(rollbackSignal, { by: 'test', reason: 'errors up' });
    const outcome = await handle.result();
    expect(outcome.result).toBe('rolled-back');
    expect(outcome.reason).toBe('rollback requested by test: errors up');
    expect(splits(ns)).toEqual(['web-new=1', 'web-old=9', 'web-new=4', 'web-old=6', 'web-old=10']);
    expect(outcome.steps[1].ended).toBe('rolled-back');
    expect(kube.deleted.filter((d) => d.namespace === ns)).toEqual([{ namespace: ns, names: ['web-new'] }]);
  });

  it('rolls back by itself when a step never becomes Ready', async () => {
    const ns = uniqueName('notready');
    kube.notReadyAt.set(ns, 3);
    const handle = await start(
      canaryRun(ns, [
        { percent: 10, holdSeconds: 1 },
        { percent: 30, holdSeconds: 1 },
      ]),
    );
    const outcome = await handle.result();
    expect(outcome.result).toBe('rolled-back');
    expect(outcome.reason).toMatch(/web canary 30 % not Ready: wait for canary web timed out/);
    // The old side was never scaled below 9: the new pods at 30 % were not Ready.
    expect(splits(ns)).toEqual(['web-new=1', 'web-old=9', 'web-new=3', 'web-old=10']);
  });

  it('checks the analysis on its interval and once before passing the step', async () => {
    const ns = uniqueName('checks');
    const url = `http://metrics.${ns}.invalid/health`;
    const handle = await start(
      canaryRun(ns, [{ percent: 10, holdSeconds: 2 }, { percent: 100 }], { analysis: { url, interval: 1 } }),
    );
    expect((await handle.result()).result).toBe('promoted');
    const checks = (await handle.fetchHistory()).events!.filter(
      (e) => e.activityTaskScheduledEventAttributes?.activityType?.name === 'checkAnalysis',
    );
    // The hold ends on the second interval: the step's final check is the only one there.
    expect(checks.map(summaryOf)).toEqual([
      'web canary 10 %: analysis check',
      'web canary 10 %: analysis before passing the step',
      'web canary 100 %: analysis before passing the step',
    ]);
  });

  it('a Prometheus analysis judges the stable pods beside the canary while they run, not at 100 %', async () => {
    const ns = uniqueName('prometheus');
    const prometheus = { address: 'http://prometheus.invalid:9090', query: 'q{ {{selector}} }', max: 0.1 };
    const handle = await start(
      canaryRun(ns, [{ percent: 50, holdSeconds: 1 }, { percent: 100 }], {
        analysis: { prometheus: { ...prometheus, interval: 60 }, compare_to_stable: { margin: 0.01 } },
      }),
    );
    expect((await handle.result()).result).toBe('promoted');
    const asked = kube.prometheus.filter((r) => r.namespace === ns);
    expect(asked).toEqual([
      {
        ...prometheus,
        namespace: ns,
        canary: ['web-new'],
        stable: { deployments: ['web-old'], margin: 0.01 },
      },
      { ...prometheus, namespace: ns, canary: ['web-new'] },
    ]);
  });

  it('rolls back when the analysis fails more often than failure_limit', async () => {
    const ns = uniqueName('analysis');
    const url = `http://metrics.${ns}.invalid/health`;
    kube.analysis.set(url, [true, false, false]);
    const handle = await start(
      canaryRun(ns, [{ percent: 10, holdSeconds: 60 }, { percent: 100 }], {
        analysis: { url, interval: 1, failure_limit: 1 },
      }),
    );
    const outcome = await handle.result();
    if (savingHistories) await saveHistory(handle.workflowId, undefined, 'canary-analysis-rollback--canary');
    expect(outcome.result).toBe('rolled-back');
    expect(outcome.reason).toMatch(/analysis failed 2 time\(s\) \(failure_limit 1\): GET .* status 503/);
    expect(splits(ns)).toEqual(['web-new=1', 'web-old=9', 'web-old=10']);
  });

  it('a long analysis hold continues as new past historyLimit and keeps its deadline and failures', async () => {
    const ns = uniqueName('bounded-analysis');
    const url = `http://metrics.${ns}.invalid/health`;
    // 20 checks: 19 on the 250 ms interval of a 5 s hold, then the step's final one. With
    // failure_limit 2, the first check's failure (first run) and the last two (runs later) only
    // roll back counted together: at the final check.
    kube.analysis.set(url, [false, ...Array<boolean>(17).fill(true), false, false]);
    const limit = 60;
    const handle = await start(
      canaryRun(ns, [{ percent: 10, holdSeconds: 5 }, { percent: 100 }], {
        analysis: { url, interval: '250ms', failure_limit: 2 },
        historyLimit: limit,
      }),
    );
    const outcome = await handle.result();
    const runs = await finishedChain(handle.workflowId, 'canary-bounded-analysis--canary');
    expect(runs.length).toBeGreaterThanOrEqual(4);
    for (const run of runs) expect(run.events).toBeLessThanOrEqual(limit + HISTORY_OVERSHOOT);
    expect(outcome.result).toBe('rolled-back');
    expect(outcome.reason).toMatch(/analysis failed 3 time\(s\) \(failure_limit 2\): GET .* status 503/);
    // Each check ran once across the runs: none repeated, none skipped by a continue-as-new.
    let checks = 0;
    for (const run of runs) {
      const events = (await harness().client.workflow.getHandle(handle.workflowId, run.runId).fetchHistory())
        .events!;
      checks += events.filter(
        (e) => e.activityTaskScheduledEventAttributes?.activityType?.name === 'checkAnalysis',
      ).length;
    }
    expect(checks).toBe(20);
    // Scaled up and found Ready once, in the first run: the later runs resumed inside the hold.
    expect(splits(ns)).toEqual(['web-new=1', 'web-old=9', 'web-old=10']);
    const step = outcome.steps[0];
    expect(ms(step.readyAt)).toBeLessThan(runs[1].startTime.getTime());
    // The hold ended at its deadline, 5 s after Ready: not 5 s after the last run began.
    expect(ms(step.endedAt) - ms(step.readyAt)).toBeGreaterThanOrEqual(5000);
    expect(ms(step.endedAt) - runs.at(-1)!.startTime.getTime()).toBeLessThan(5000);
    expect(step.ended).toBe('rolled-back');
  });

  it('an approval paused across continue-as-new stays paused by whom and since when, then is approved', async () => {
    const ns = uniqueName('bounded-approval');
    const limit = 60;
    const handle = await start(
      canaryRun(ns, [{ percent: 20, approval: true }, { percent: 100 }], { historyLimit: limit }),
    );
    const latest = harness().client.workflow.getHandle<typeof canaryWorkflow>(handle.workflowId);
    const waiting = await until(latest, (p) => p.gate !== undefined);
    await latest.signal(pauseSignal, { by: 'ann', reason: 'look at metrics' });
    const paused = (await until(latest, (p) => p.paused?.since !== undefined)).paused!;
    // Every pause sent again (a tool that retries) is an event: they fill the history, and the
    // pause stays ann's.
    await pauseThroughRuns(latest, 4, limit);
    const still = await until(latest, (p) => p.paused !== undefined && p.gate !== undefined);
    expect(still.paused).toMatchObject({ by: 'ann', reason: 'look at metrics', since: paused.since });
    expect(still.gate).toEqual(waiting.gate);
    expect(still.history[0].readyAt).toBe(waiting.history[0].readyAt);
    await latest.signal(resumeSignal, { by: 'ann' });
    await latest.signal(approveSignal, { by: 'cat', reason: 'metrics fine' });
    const outcome = await handle.result();
    const runs = await finishedChain(handle.workflowId, 'canary-bounded-approval--canary');
    expect(runs.length).toBeGreaterThanOrEqual(4);
    for (const run of runs) expect(run.events).toBeLessThanOrEqual(limit + HISTORY_OVERSHOOT);
    expect(outcome.result).toBe('promoted');
    expect(outcome.steps.map((s) => s.ended)).toEqual(['approved', 'held']);
    expect(splits(ns)).toEqual(['web-new=2', 'web-old=8', 'web-new=10', 'web-old=0']);
    expect((await latest.query(canaryProgressQuery)).approvals).toEqual([
      expect.objectContaining({ by: 'cat', gate: waiting.gate!.name }),
    ]);
  });

  it("a step with distinct_approvers 2 and not_author: the Deployer's author and a second approval by one user are refused by name, two others pass it", async () => {
    const ns = uniqueName('sod');
    const signer = loadSteeringKey(path.join(mkdtempSync(path.join(tmpdir(), 'steering-')), 'key.pem'), {
      create: true,
    });
    const workflowId = uniqueName('canary-sod');
    const gate = 'step 1 (20 %)';
    const approve = (by: string) => {
      const req = { by, gate };
      return handle.executeUpdate(approveUpdate, {
        args: [{ ...req, proof: signer.prove(workflowId, 'approve', req) }],
      });
    };
    const handle = await harness().client.workflow.start(canaryWorkflow, {
      taskQueue: harness().taskQueue,
      workflowId,
      args: [
        canaryRun(ns, [{ percent: 20, approval: true }, { percent: 100 }], {
          approvalRules: { distinct_approvers: 2, not_author: true },
          resource: { kind: 'Deployer', namespace: ns, name: 'web' },
          carried: { steering: { key: signer.publicKey, authors: { 'Deployer/web': 'alice' } } },
        }),
      ],
    });
    await until(handle, (p) => p.waitingOn === 'approval');
    expect(await refusal(approve('alice'))).toBe(
      'not_author: alice wrote this spec (Deployer/web) and may not approve it',
    );
    await approve('bob');
    expect(await refusal(approve('bob'))).toBe('distinct_approvers: 2: bob has approved already');
    expect((await handle.query(canaryProgressQuery)).gate).toMatchObject({
      name: gate,
      approvals: [{ by: 'bob' }],
    });
    expect(await approve('carol')).toBe(`approved ${gate}`);
    const outcome = await handle.result();
    expect(outcome.result).toBe('promoted');
    expect(outcome.steps[0].ended).toBe('approved');
    if (savingHistories) await saveHistory(workflowId, undefined, 'sod-canary-step--canary');
  });
});

describe('deployer workflow (stubbed Kubernetes, real dev server)', () => {
  /** Its Deployer's own deletions name it, to take them off its record. */
  const byDeployer = { deployer: { namespace: 'default', name: 'nginx' } };
  const spec = (namespace: string, version: string) => ({
    type: 'canary' as const,
    deployment: { name: 'nginx', namespace, image: 'nginx', version, replicas: 10 },
    steps: [
      { percent: 10, sleep: 1 },
      { percent: 30, sleep: 1 },
      { percent: 60, sleep: 1 },
    ],
  });

  it('a first deploy goes straight to full size', async () => {
    const ns = uniqueName('dpl-first');
    const outcome = await harness().client.workflow.execute(deployerWorkflow, {
      taskQueue: harness().taskQueue,
      workflowId: uniqueName('dpl'),
      args: [{ name: 'nginx', namespace: 'default', spec: spec(ns, '1.25.3') }],
    });
    expect(outcome).toMatchObject({ result: 'deployed', version: '1.25.3' });
    expect(splits(ns)).toEqual(['nginx-1.25.3=10']);
  });

  it('uninstall deletes every version', async () => {
    const ns = uniqueName('dpl-uninstall');
    kube.deployments.set(ns, [
      { deployment: 'nginx-1.26.0', version: '1.26.0', replicas: 7 },
      { deployment: 'nginx-1.25.3', version: '1.25.3', replicas: 3 },
    ]);
    const outcome = await harness().client.workflow.execute(deployerWorkflow, {
      taskQueue: harness().taskQueue,
      workflowId: uniqueName('dpl'),
      args: [{ name: 'nginx', namespace: 'default', spec: spec(ns, '1.26.0'), mode: 'uninstall' }],
    });
    expect(outcome.result).toBe('uninstalled');
    expect(kube.deleted.filter((d) => d.namespace === ns)).toEqual([
      { namespace: ns, names: ['nginx-1.26.0', 'nginx-1.25.3'], ...byDeployer },
    ]);
    expect(splits(ns)).toEqual([]);
  });

  it('a version change steps new up and old down, then deletes the old Deployment', async () => {
    const ns = uniqueName('dpl-change');
    kube.deployments.set(ns, [{ deployment: 'nginx-1.25.3', version: '1.25.3', replicas: 10 }]);
    const workflowId = uniqueName('dpl');
    const outcome = await harness().client.workflow.execute(deployerWorkflow, {
      taskQueue: harness().taskQueue,
      workflowId,
      args: [{ name: 'nginx', namespace: 'default', spec: spec(ns, '1.26.0') }],
    });
    if (savingHistories) await saveHistory(workflowId, undefined, 'deployer-version-change--deployer');
    expect(outcome).toMatchObject({ result: 'promoted', version: '1.26.0', previous: '1.25.3' });
    expect(outcome.steps.map((s) => `${s.canary}/${s.stable}`)).toEqual(['1/9', '3/7', '6/4', '10/0']);
    expect(kube.deleted.filter((d) => d.namespace === ns)).toEqual([
      { namespace: ns, names: ['nginx-1.25.3'], ...byDeployer },
    ]);
  });

  it('a step with approval waits for approve while its analysis runs, as a chart canary does', async () => {
    const ns = uniqueName('dpl-approve');
    kube.deployments.set(ns, [{ deployment: 'nginx-1.25.3', version: '1.25.3', replicas: 10 }]);
    const analysis = { prometheus: { address: 'http://p.invalid', query: 'q', min: 1, interval: '100ms' } };
    const handle = await harness().client.workflow.start(deployerWorkflow, {
      taskQueue: harness().taskQueue,
      workflowId: uniqueName('dpl'),
      args: [
        {
          name: 'nginx',
          namespace: 'default',
          spec: { ...spec(ns, '1.26.0'), steps: [{ percent: 50, approval: true }], analysis },
        },
      ],
    });
    await until(handle, (p) => p.waitingOn === 'approval');
    // Checked on its interval while it waits.
    await eventually('two checks during the approval', async () =>
      kube.prometheus.filter((r) => r.namespace === ns).length >= 2 ? true : undefined,
    );
    await handle.signal(approveSignal, { by: 'test' });
    const outcome = await handle.result();
    expect(outcome).toMatchObject({ result: 'promoted', version: '1.26.0' });
    expect(outcome.steps[0]).toMatchObject({ percent: 50, ended: 'approved' });
    expect(kube.prometheus.find((r) => r.namespace === ns)).toMatchObject({
      canary: ['nginx-1.26.0'],
      query: 'q',
      min: 1,
    });
  });

  it("an approval's timeout with on_timeout promote goes to 100 %, as a chart canary's does", async () => {
    const ns = uniqueName('dpl-timeout');
    kube.deployments.set(ns, [{ deployment: 'nginx-1.25.3', version: '1.25.3', replicas: 10 }]);
    const outcome = await harness().client.workflow.execute(deployerWorkflow, {
      taskQueue: harness().taskQueue,
      workflowId: uniqueName('dpl'),
      args: [
        {
          name: 'nginx',
          namespace: 'default',
          spec: {
            ...spec(ns, '1.26.0'),
            steps: [
              { percent: 20, approval: true },
              { percent: 50, sleep: 600 },
            ],
            approval_timeout: 1,
            on_timeout: 'promote',
          },
        },
      ],
    });
    expect(outcome).toMatchObject({ result: 'promoted', version: '1.26.0', previous: '1.25.3' });
    // The approval's timeout promoted: the 50 % step and its 10-minute hold never started.
    expect(outcome.steps.filter((s) => s.startedAt).map((s) => `${s.percent} ${s.ended}`)).toEqual([
      '20 promoted',
      '100 promoted',
    ]);
  });

  it('a re-plan mid-canary rolls the version in flight back, then steps the newest from the first step', async () => {
    const ns = uniqueName('dpl-replan');
    kube.deployments.set(ns, [{ deployment: 'nginx-1.25.3', version: '1.25.3', replicas: 10 }]);
    const workflowId = uniqueName('dpl');
    const long = { ...spec(ns, '1.26.0'), steps: [{ percent: 50, sleep: 3600 }] };
    const first = await harness().client.workflow.start(deployerWorkflow, {
      taskQueue: harness().taskQueue,
      workflowId,
      args: [{ name: 'nginx', namespace: 'default', spec: long }],
      memo: { specs: 'Deployer/nginx@1', mode: 'deploy' },
    });
    await until(first, (p) => p.step === 1 && p.nextStepAt !== undefined);
    await first.signal(replanSignal, {
      input: { name: 'nginx', namespace: 'default', spec: spec(ns, '1.27.0') },
      memo: { specs: 'Deployer/nginx@2', mode: 'deploy' },
    });
    const latest = harness().client.workflow.getHandle<typeof deployerWorkflow>(workflowId);
    const outcome = await latest.result();
    if (savingHistories)
      await saveHistory(workflowId, first.firstExecutionRunId, 'deployer-replan--deployer');
    expect(outcome).toMatchObject({ result: 'promoted', version: '1.27.0', previous: '1.25.3' });
    expect(outcome.steps.map((s) => `${s.canary}/${s.stable}`)).toEqual(['1/9', '3/7', '6/4', '10/0']);
    expect((await latest.describe()).memo).toEqual({ specs: 'Deployer/nginx@2', mode: 'deploy' });
    // 1.26.0 went up to 5/5, then back: the old side restored to 10 (and 1.26.0 deleted); then
    // 1.27.0 from its first step.
    expect(splits(ns).slice(0, 5)).toEqual([
      'nginx-1.26.0=5',
      'nginx-1.25.3=5',
      'nginx-1.25.3=10',
      'nginx-1.27.0=1',
      'nginx-1.25.3=9',
    ]);
    expect(kube.deleted.filter((d) => d.namespace === ns)).toEqual([
      { namespace: ns, names: ['nginx-1.26.0'] },
      { namespace: ns, names: ['nginx-1.25.3'], ...byDeployer },
    ]);
  });

  it('a re-plan arriving as the last step becomes Ready keeps that version and steps the newest against it', async () => {
    const ns = uniqueName('dpl-replan-ready');
    kube.deployments.set(ns, [{ deployment: 'nginx-1.25.3', version: '1.25.3', replicas: 10 }]);
    let release!: () => void;
    kube.scaleGates.set(`${ns}/nginx-1.25.3=0`, new Promise<void>((resolve) => (release = resolve)));
    const workflowId = uniqueName('dpl');
    const first = await harness().client.workflow.start(deployerWorkflow, {
      taskQueue: harness().taskQueue,
      workflowId,
      args: [
        { name: 'nginx', namespace: 'default', spec: { ...spec(ns, '1.26.0'), steps: [{ percent: 100 }] } },
      ],
      memo: { specs: 'Deployer/nginx@1', mode: 'deploy' },
    });
    // 1.26.0 is Ready at 100 % and the old side is being scaled to 0: the re-plan lands now.
    await until(first, () => splits(ns).includes('nginx-1.25.3=0'));
    await first.signal(replanSignal, {
      input: { name: 'nginx', namespace: 'default', spec: spec(ns, '1.27.0') },
      memo: { specs: 'Deployer/nginx@2', mode: 'deploy' },
    });
    kube.deployments.set(ns, [{ deployment: 'nginx-1.26.0', version: '1.26.0', replicas: 10 }]);
    release();
    const outcome = await harness().client.workflow.getHandle<typeof deployerWorkflow>(workflowId).result();
    if (savingHistories)
      await saveHistory(workflowId, first.firstExecutionRunId, 'deployer-replan-ready--deployer');
    expect(outcome).toMatchObject({ result: 'promoted', version: '1.27.0', previous: '1.26.0' });
    // 1.26.0 stayed (no restore of 1.25.3 to 10); 1.27.0 was stepped against it.
    expect(splits(ns).slice(0, 4)).toEqual([
      'nginx-1.26.0=10',
      'nginx-1.25.3=0',
      'nginx-1.27.0=1',
      'nginx-1.26.0=9',
    ]);
    expect(kube.deleted.filter((d) => d.namespace === ns)).toEqual([
      { namespace: ns, names: ['nginx-1.25.3'], ...byDeployer },
      { namespace: ns, names: ['nginx-1.26.0'], ...byDeployer },
    ]);
  });

  it('a re-plan that reaches the server with the readiness of a first deploy keeps that deploy', async () => {
    // As the bridge e2e test saw under load: the status already says Completed when the re-plan
    // lands, so the server refuses the task that would end the run, and the worker replays the
    // readiness and the signal as one activation (the SDK hands signals over first).
    const ns = uniqueName('dpl-replan-race');
    const name = uniqueName('nginx');
    const workflowId = uniqueName('dpl');
    const client = harness().client;
    let signalled = false;
    kube.statusHooks.set(`default/${name}`, async (status) => {
      if (status.phase !== 'Completed' || signalled) return;
      signalled = true;
      kube.deployments.set(ns, [{ deployment: 'nginx-1.25.3', version: '1.25.3', replicas: 10 }]);
      await client.workflow.getHandle(workflowId).signal(replanSignal, {
        input: { name, namespace: 'default', spec: spec(ns, '1.26.0') },
        memo: { specs: `Deployer/${name}@2`, mode: 'deploy' },
      });
    });
    const first = await client.workflow.start(deployerWorkflow, {
      taskQueue: harness().taskQueue,
      workflowId,
      args: [{ name, namespace: 'default', spec: spec(ns, '1.25.3') }],
      memo: { specs: `Deployer/${name}@1`, mode: 'deploy' },
    });
    const outcome = await client.workflow.getHandle<typeof deployerWorkflow>(workflowId).result();
    if (savingHistories)
      await saveHistory(workflowId, first.firstExecutionRunId, 'deployer-replan-race--deployer');
    expect(signalled).toBe(true);
    expect(outcome).toMatchObject({ result: 'promoted', version: '1.26.0', previous: '1.25.3' });
    // 1.25.3 went on serving until 1.26.0 had stepped past it: deleted once, at the end.
    expect(splits(ns)[0]).toBe('nginx-1.25.3=10');
    expect(splits(ns)[1]).toBe('nginx-1.26.0=1');
    expect(kube.deleted.filter((d) => d.namespace === ns)).toEqual([
      { namespace: ns, names: ['nginx-1.25.3'], deployer: { namespace: 'default', name } },
    ]);
  });

  it('a paused hold continues as new past historyLimit and resumes its canary without redoing it', async () => {
    const ns = uniqueName('dpl-bounded');
    kube.deployments.set(ns, [{ deployment: 'nginx-1.25.3', version: '1.25.3', replicas: 10 }]);
    const workflowId = uniqueName('dpl');
    const limit = 60;
    const memo = { specs: 'Deployer/nginx@1', mode: 'deploy' };
    const first = await harness().client.workflow.start(deployerWorkflow, {
      taskQueue: harness().taskQueue,
      workflowId,
      args: [
        {
          name: 'nginx',
          namespace: 'default',
          spec: { ...spec(ns, '1.26.0'), steps: [{ percent: 50, sleep: 2 }] },
          historyLimit: limit,
        },
      ],
      memo,
    });
    const latest = harness().client.workflow.getHandle<typeof deployerWorkflow>(workflowId);
    await until(latest, (p) => p.waitingOn === 'hold');
    await latest.signal(pauseSignal, { by: 'ann' });
    await until(latest, (p) => p.paused?.remainingSeconds !== undefined);
    // What a resumed run observed now would be wrong: the new version beside the old one.
    kube.deployments.set(ns, [
      { deployment: 'nginx-1.26.0', version: '1.26.0', replicas: 5 },
      { deployment: 'nginx-1.25.3', version: '1.25.3', replicas: 5 },
    ]);
    await pauseThroughRuns(latest, 4, limit);
    const still = await until(latest, (p) => p.paused?.remainingSeconds !== undefined);
    expect(still.paused).toMatchObject({ by: 'ann' });
    expect(still.paused!.remainingSeconds).toBeGreaterThan(0);
    await latest.signal(resumeSignal, { by: 'ann' });
    const outcome = await latest.result();
    const runs = await finishedChain(workflowId, 'deployer-bounded--deployer');
    expect(runs[0].runId).toBe(first.firstExecutionRunId);
    expect(runs.length).toBeGreaterThanOrEqual(4);
    for (const run of runs) expect(run.events).toBeLessThanOrEqual(limit + HISTORY_OVERSHOOT);
    expect(outcome).toMatchObject({ result: 'promoted', version: '1.26.0', previous: '1.25.3' });
    expect(outcome.steps.map((s) => s.ended)).toEqual(['held', 'held']);
    // Observed, created and stepped once: the later runs went on from the hold.
    expect(kube.deployerCalls.filter((c) => c.includes(ns))).toEqual([
      `observe ${ns}`,
      `create ${ns}/nginx-1.26.0`,
    ]);
    expect(splits(ns)).toEqual(['nginx-1.26.0=5', 'nginx-1.25.3=5', 'nginx-1.26.0=10', 'nginx-1.25.3=0']);
    expect(kube.deleted.filter((d) => d.namespace === ns)).toEqual([
      { namespace: ns, names: ['nginx-1.25.3'], ...byDeployer },
    ]);
    expect((await latest.describe()).memo).toEqual(memo);
  });
});
