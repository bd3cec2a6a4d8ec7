import type { Client } from '@temporalio/client';
import { temporal } from '@temporalio/proto';
import { execFile } from 'node:child_process';
import { mkdtemp, readFile, rm, writeFile } from 'node:fs/promises';
import { createServer, type Server } from 'node:http';
import { hostname, tmpdir } from 'node:os';
import path from 'node:path';
import { promisify } from 'node:util';
import { armadaChartSpec, type ArmadaChartSpec } from '../api/chart';
import { toolPath } from '../activities/tools';
import { chartRun, startRun } from '../runs/requests';
import { canaryWorkflowId } from '../core/plan/names';
import { bundleWorkflows } from '../worker/bundle';
import type { BenchContext } from './context';
import { startRealWorker } from './bridge';
import { repo } from './processes';
import { previousEntry } from './results';
import { median, ratio, summarize, type Summary } from './stats';

const run = promisify(execFile);
const STARTED = temporal.api.enums.v1.PendingActivityState.PENDING_ACTIVITY_STATE_STARTED;
/** How long the worker has been dead when the replacement starts, in the delayed mode. */
const REPLACEMENT_DELAY_MS = 10_000;
/** A node selector no sandbox node has: pods that can never be scheduled, so a wait holds. */
const NOWHERE = { nodeSelector: { 'armada-bench/recovery': 'nowhere' } };

/**
 * A kind of activity the benchmark kills a worker in: the chart run that gets there (`steps`:
 * spec of each run in turn, the last one reaching the activity), and where the activity runs.
 */
interface Kind {
  activity: string;
  steps(release: string, namespace: string, tarUrl: string): ArmadaChartSpec[];
  /** The workflow the activity runs in: the chart's, or its canary's. */
  workflowId(release: string, namespace: string, chartWorkflowId: string): string;
}

const chart = (release: string, namespace: string, extra: Record<string, unknown>) =>
  armadaChartSpec.parse({
    release,
    namespace,
    source: { type: 'local', location: 'examples/charts/hello' },
    ...extra,
  });
const inChart = (_release: string, _namespace: string, chartWorkflowId: string) => chartWorkflowId;
/** The Armada wait on the release's own pods: the namespace keeps the stuck pods of earlier samples. */
const ownPods = (release: string) => ({ timeout: 60, labels: { 'app.kubernetes.io/instance': release } });

const KINDS: Record<string, Kind> = {
  /** `helm upgrade --install --wait` waiting for pods that never come (its helm lives on). */
  helmUpgrade: {
    activity: 'helmUpgradeInstall',
    steps: (release, namespace) => [
      chart(release, namespace, { values: NOWHERE, wait: { timeout: 60, native: { enabled: true } } }),
    ],
    workflowId: inChart,
  },
  /** The Armada wait after an install whose pods never come. */
  armadaWait: {
    activity: 'waitForResources',
    steps: (release, namespace) => [chart(release, namespace, { values: NOWHERE, wait: ownPods(release) })],
    workflowId: inChart,
  },
  /** A chart canary's readiness wait: the new revision's copies can never be scheduled. */
  canaryReadiness: {
    activity: 'waitForResources',
    steps: (release, namespace) => [
      chart(release, namespace, { wait: ownPods(release) }),
      chart(release, namespace, {
        values: { ...NOWHERE, image: { tag: '2.0.0' } },
        wait: ownPods(release),
        canary: { steps: [{ percent: 50 }, { percent: 100 }] },
      }),
    ],
    workflowId: (release) => canaryWorkflowId('default', release),
  },
  /** prepareChart of a tar archive that a slow server sends a byte at a time. */
  chartPreparation: {
    activity: 'prepareChart',
    steps: (release, namespace, tarUrl) => [
      armadaChartSpec.parse({ release, namespace, source: { type: 'tar', location: tarUrl } }),
    ],
    workflowId: inChart,
  },
};

/**
 * The last attempt of `activity` in `workflowId` that a worker started: the worker, whether it
 * still runs, and when it started. Once an attempt has failed and the next one waits (a retried
 * helm write that finds its release pending fails at once), the server keeps its worker but not
 * its start time.
 */
async function lastAttempt(client: Client, workflowId: string, activity: string) {
  const { raw } = await client.workflow.getHandle(workflowId).describe();
  const pending = raw.pendingActivities?.find((a) => a.activityType?.name === activity);
  if (!pending) return undefined;
  const started = pending.lastStartedTime;
  return {
    running: pending.state === STARTED,
    identity: pending.lastWorkerIdentity ?? '',
    startedMs: started ? Number(started.seconds ?? 0) * 1000 + (started.nanos ?? 0) / 1e6 : undefined,
  };
}

async function poll<T>(what: string, check: () => Promise<T | undefined>, timeoutMs = 120_000): Promise<T> {
  const deadline = Date.now() + timeoutMs;
  for (;;) {
    const value = await check().catch(() => undefined);
    if (value !== undefined) return value;
    if (Date.now() > deadline)
      throw new Error(`recovery benchmark: ${what} did not happen within ${timeoutMs / 1000} s`);
    await new Promise((resolve) => setTimeout(resolve, 100));
  }
}

/** The example chart as a tar archive served a byte every 100 ms: a download of minutes. */
async function slowTarServer(dir: string): Promise<{ url: string; server: Server }> {
  const { stdout } = await run(toolPath('helm'), [
    'package',
    path.join(repo, 'examples/charts/hello'),
    '--destination',
    dir,
  ]);
  const archive = await readFile(/saved it to: (.+\.tgz)/.exec(stdout)![1]);
  const server = createServer((_req, res) => {
    res.writeHead(200, { 'content-type': 'application/octet-stream', 'content-length': archive.length });
    let sent = 0;
    const next = setInterval(() => {
      if (res.destroyed || sent >= archive.length) return clearInterval(next);
      res.write(archive.subarray(sent, ++sent));
    }, 100);
    res.on('close', () => clearInterval(next));
  });
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  const address = server.address();
  if (!address || typeof address === 'string') throw new Error('the slow tar server has no port');
  return { url: `http://127.0.0.1:${address.port}/hello.tgz`, server };
}

/** The bundles benchmark 8 compares: the build's, and the same code with the options of before issue 22. */
async function bundles(ctx: BenchContext, dir: string): Promise<Record<Variant, string>> {
  const before = path.join(dir, 'workflows-before-issue-22.js');
  await writeFile(
    before,
    await bundleWorkflows((config) => {
      config.module?.rules?.push({
        test: /activity-proxies\.(ts|js)$/,
        enforce: 'pre',
        use: [{ loader: path.join(repo, 'bench', 'before-profiles-loader.js') }],
      });
      return config;
    }),
  );
  return { now: ctx.bundlePath, beforeIssue22: before };
}

type Variant = 'now' | 'beforeIssue22';
/** Each sample's workflow code and when its replacement worker starts. */
const WAYS: { variant: Variant; mode: 'atOnce' | 'delayed' }[] = [
  { variant: 'now', mode: 'atOnce' },
  { variant: 'now', mode: 'delayed' },
  { variant: 'beforeIssue22', mode: 'atOnce' },
];
const BEFORE_WAY = 'beforeIssue22.atOnce';

/**
 * The before-issue-22 figures as the results file last measured them (BENCH_RECOVERY_BEFORE=1),
 * with that date: carried into a run that does not measure them again. Undefined when the file
 * has none.
 */
async function lastBeforeFigures(): Promise<
  { measuredAt: string; kinds: Record<string, Summary> } | undefined
> {
  const previous = await previousEntry('recovery');
  const figures = previous?.figures as
    { kinds?: Record<string, Record<string, unknown>>; beforeIssue22?: { measuredAt?: string } } | undefined;
  const kinds = Object.fromEntries(
    Object.entries(figures?.kinds ?? {}).flatMap(([kind, ways]) =>
      ways[BEFORE_WAY] ? [[kind, ways[BEFORE_WAY] as Summary]] : [],
    ),
  );
  if (!previous || !Object.keys(kinds).length) return undefined;
  return { measuredAt: figures?.beforeIssue22?.measuredAt ?? previous.date, kinds };
}

/**
 * 8. Crash recovery. For each kind of activity in flight (KINDS), `kills` times in each of WAYS,
 * in turn: SIGKILL the worker running the activity, start a replacement (at once, or 10 s after
 * the kill), and time from the replacement's first poll to the killed activity's next attempt
 * starting on it (the server's start time of the attempt, from `describe()`). Each kind has a
 * worker and task queue of its own; the kinds run one after another (`sideBySide`,
 * BENCH_RECOVERY_SIDE_BY_SIDE=1: at once, 3 × quicker, but four workers starting together start
 * later and the figures, counted from the first poll, come out lower). With `before`
 * (BENCH_RECOVERY_BEFORE=1) the same is measured with the timeout options of before issue 22
 * (one profile: 30 s heartbeat timeout), bundled from today's code by before-profiles-loader.js;
 * without it, the results file's last such figures are carried over with their date. A scale is
 * one API call of tens of milliseconds: no kill lands in it, and its profile (quick: 5 s
 * start-to-close) bounds it; it is not measured.
 */
export async function runRecovery(
  ctx: BenchContext,
  sizes: { kills: number; before: boolean; sideBySide: boolean },
): Promise<Record<string, unknown>> {
  if (!ctx.kubeconfig) throw new Error('benchmark 8 needs the sandbox cluster (KUBECONFIG)');
  const namespace = `bench-recovery-${process.pid}`;
  const dir = await mkdtemp(path.join(tmpdir(), 'armada-recovery-'));
  const ways = WAYS.filter((way) => sizes.before || way.variant === 'now');
  const bundle = sizes.before ? await bundles(ctx, dir) : { now: ctx.bundlePath, beforeIssue22: '' };
  const carried = sizes.before ? undefined : await lastBeforeFigures();
  const tar = await slowTarServer(dir);
  let n = 0;
  /** `kills` samples of one kind in each way, on its own worker and task queue. */
  const measureKind = async (kind: string): Promise<Record<string, number[]>> => {
    const spec = KINDS[kind];
    const taskQueue = `bench-recovery-${process.pid}-${kind}`;
    const startWorker = async (variant: Variant) => {
      const { process: worker } = await startRealWorker(ctx, taskQueue, bundle[variant]);
      return { worker, variant, polledAt: Date.now() };
    };
    let running = await startWorker('now');
    const byWay: Record<string, number[]> = {};
    try {
      for (let i = 0; i < sizes.kills; i++)
        for (const { variant, mode } of ways) {
          if (running.variant !== variant) {
            await running.worker.stop();
            running = await startWorker(variant);
          }
          const release = `rec-${process.pid}-${n++}`;
          const steps = spec.steps(release, namespace, tar.url);
          let chartWorkflowId = '';
          for (const [s, chartSpec] of steps.entries()) {
            chartWorkflowId = await startRun(
              ctx.client,
              taskQueue,
              chartRun({ kind: 'ArmadaChart', name: release, namespace: 'default', spec: chartSpec }),
            );
            if (s < steps.length - 1) await ctx.client.workflow.getHandle(chartWorkflowId).result();
          }
          const workflowId = spec.workflowId(release, namespace, chartWorkflowId);
          await poll(`${kind}: ${spec.activity} running`, async () => {
            const attempt = await lastAttempt(ctx.client, workflowId, spec.activity);
            // Well inside the activity: at least a second after its attempt started.
            return attempt?.running && Date.now() - (attempt.startedMs ?? Infinity) > 1_000
              ? attempt
              : undefined;
          });
          await running.worker.stop('SIGKILL');
          if (mode === 'delayed') await new Promise((resolve) => setTimeout(resolve, REPLACEMENT_DELAY_MS));
          running = await startWorker(variant);
          const identity = `${running.worker.child.pid}@${hostname()}`;
          // The replacement's pid is new: an attempt it started is the retry of the killed one,
          // started when the server says, or (one that has already failed) when seen, within the
          // 100 ms between looks.
          const retried = await poll(`${kind}: ${spec.activity} retried`, async () => {
            const attempt = await lastAttempt(ctx.client, workflowId, spec.activity);
            return attempt?.identity === identity
              ? { startedMs: attempt.startedMs ?? Date.now() }
              : undefined;
          });
          (byWay[`${variant}.${mode}`] ??= []).push(Math.max(0, retried.startedMs - running.polledAt));
          await ctx.client.workflow.getHandle(chartWorkflowId).terminate('recovery benchmark: sample taken');
          // A killed worker's helm lives on as an orphan (helmUpgrade): stop it with its release.
          await run('pkill', ['-f', `upgrade --install ${release} `]).catch(() => undefined);
        }
    } finally {
      await running.worker.stop();
    }
    ctx.log(
      `  ${kind}: ${Object.entries(byWay)
        .map(([way, s]) => `${way} p50 ${median(s)} ms`)
        .join(', ')}`,
    );
    return byWay;
  };
  const samples: Record<string, Record<string, number[]>> = {};
  try {
    // Settled, not raced: a kind that fails leaves the others to finish before the cleanup.
    const names = Object.keys(KINDS);
    const settled: PromiseSettledResult<Record<string, number[]>>[] = [];
    if (!sizes.sideBySide)
      for (const kind of names) settled.push(...(await Promise.allSettled([measureKind(kind)])));
    else settled.push(...(await Promise.allSettled(names.map(measureKind))));
    settled.forEach((r, i) => r.status === 'fulfilled' && (samples[names[i]] = r.value));
    const failed = settled.find((r): r is PromiseRejectedResult => r.status === 'rejected');
    if (failed) throw failed.reason;
  } finally {
    tar.server.closeAllConnections();
    tar.server.close();
    await rm(dir, { recursive: true, force: true });
    await run(toolPath('kubectl'), ['delete', 'namespace', namespace, '--wait=false'], {
      env: { ...process.env, KUBECONFIG: ctx.kubeconfig },
    }).catch(() => undefined);
  }
  const kinds = Object.fromEntries(
    Object.entries(samples).map(([kind, byWay]) => {
      const figures: Record<string, unknown> = {
        activity: KINDS[kind].activity,
        ...Object.fromEntries(Object.entries(byWay).map(([way, s]) => [way, summarize(s)])),
      };
      const before = carried?.kinds[kind];
      if (before) figures[BEFORE_WAY] = before;
      const beforeP50 = before?.p50 ?? (byWay[BEFORE_WAY] ? median(byWay[BEFORE_WAY]) : undefined);
      figures.nowVsBefore = ratio(median(byWay['now.atOnce'] ?? []), beforeP50);
      return [kind, figures];
    }),
  );
  return {
    what: `from the replacement worker's first poll to the killed activity's next attempt starting on it, ${sizes.kills} kills per kind and way, ${sizes.sideBySide ? 'the kinds side by side' : 'the kinds in turn'} on workers of their own`,
    replacementDelayMs: REPLACEMENT_DELAY_MS,
    kinds,
    beforeIssue22: sizes.before
      ? { measuredAt: new Date().toISOString() }
      : carried && {
          measuredAt: carried.measuredAt,
          note: `not measured again in this run (BENCH_RECOVERY_BEFORE=1 does): the ${BEFORE_WAY} figures are those measured at measuredAt, one kind at a time`,
        },
    helmUpgradeNote:
      "the retried helm write finds the release pending (its dead worker's helm lives on) and waits until that helm's timeout plus 10 s have passed since it last wrote the release (prepareRetriedWrite), then recovers it",
  };
}
