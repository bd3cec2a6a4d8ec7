import { Context } from '@temporalio/activity';
import { ApplicationFailure } from '@temporalio/common';
import type * as activities from '../../activities';
import { heartbeating } from '../../activities/process';
import { lockHolder } from '../../activities/runs';
import type { ObservedRelease } from '../../core/plan/release';
import { temporalHarness, type Harness } from '../helpers/env';
import { saveHistory, savingHistories } from '../helpers/histories';

/** One activity call as the stub saw it, with when it started and ended (ms since the stub was made). */
export interface Call {
  name: string;
  release?: string;
  start: number;
  end?: number;
}

/** One status write as the stub took it: the object, its phase and run link, and the workflow that asked. */
export interface StatusWrite {
  object: string;
  phase?: string;
  link?: string;
  by: string;
}

/**
 * Activities for workflow tests: an in-memory stand-in for Helm releases, so the workflow
 * logic runs on the real Temporal dev server without a cluster. `failOn` makes one release's
 * upgrade fail for good; `gate` holds upgrades until it is opened; `delayMs` makes calls overlap
 * measurably; the upgrades of the releases `together` each wait until all of them have started
 * (a barrier), so they pass only when run in parallel, and fail after 30 s when run one by one.
 */
export function fakeHelm(opts: { failOn?: string; delayMs?: number; together?: string[] } = {}) {
  const t0 = Date.now();
  const calls: Call[] = [];
  const statusWrites: StatusWrite[] = [];
  /** The `.status` fields each write set, by object: what kubectl would read after it. */
  const statusFields: { object: string; status: Record<string, unknown> }[] = [];
  const releases = new Map<string, ObservedRelease>();
  let openGate: () => void = () => {};
  let gateOpen = true;
  let gate = Promise.resolve();

  const record = async <T>(
    name: string,
    release: string | undefined,
    body: () => T | Promise<T>,
  ): Promise<T> => {
    const call: Call = { name, release, start: Date.now() - t0 };
    calls.push(call);
    try {
      return await body();
    } finally {
      call.end = Date.now() - t0;
    }
  };
  const pause = (ms = opts.delayMs ?? 0) => new Promise((r) => setTimeout(r, ms));
  const arrived = new Set<string>();
  let allArrived: () => void = () => {};
  const everyoneArrived = new Promise<void>((resolve) => (allArrived = resolve));
  const barrier = async (release: string) => {
    const together = opts.together ?? [];
    if (!together.includes(release)) return;
    arrived.add(release);
    if (together.every((r) => arrived.has(r))) allArrived();
    let timer: NodeJS.Timeout | undefined;
    const alone = new Promise<never>((_, reject) => {
      timer = setTimeout(() => {
        const missing = together.filter((r) => !arrived.has(r)).join(', ');
        reject(
          ApplicationFailure.nonRetryable(`upgrade ${release} ran alone: ${missing} did not start in 30 s`),
        );
      }, 30_000);
    });
    try {
      await Promise.race([everyoneArrived, alone]);
    } finally {
      clearTimeout(timer);
    }
  };

  const stubs: Partial<typeof activities> = {
    lockHolder, // the real one: it asks the Temporal server which run holds a release
    async helmObserve({ release }) {
      return record('observe', release, () => releases.get(release) ?? null);
    },
    async prepareChart({ values }) {
      return record('prepare', undefined, () => ({
        contentDigest: 'chart',
        digest: JSON.stringify(values ?? {}),
      }));
    },
    async helmUpgradeInstall(req) {
      return record('upgrade', req.release, async () => {
        // Held as a real upgrade is while helm runs: heartbeating (the helm profile's timeout).
        await heartbeating(() => Promise.all([gate, barrier(req.release)]));
        await pause();
        if (req.release === opts.failOn) {
          throw ApplicationFailure.nonRetryable(`helm upgrade ${req.release} failed: boom`, 'InvalidChart');
        }
        const revision = (releases.get(req.release)?.revision ?? 0) + 1;
        releases.set(req.release, {
          revision,
          status: 'deployed',
          digest: req.digest,
          lastDeployedRevision: revision,
        });
        return { release: req.release, namespace: req.namespace, revision, status: 'deployed' };
      });
    },
    async waitForResources({ release }) {
      return record('wait', release, () => ({ resources: [], summary: 'ready' }));
    },
    async helmTest({ release }) {
      return record('test', release, () => undefined);
    },
    async deleteResources() {
      return record('pre-delete', undefined, () => undefined);
    },
    async helmRollback({ release, revision }) {
      return record('rollback', release, () => {
        const current = releases.get(release)!;
        releases.set(release, {
          ...current,
          revision: current.revision + 1,
          lastDeployedRevision: current.revision + 1,
          digest: `rolled-back-to-${revision}`,
        });
      });
    },
    async reportStatus({ kind, name, status, event }) {
      statusWrites.push({
        object: `${kind}/${name}`,
        phase: event?.reason,
        link: (status as { workflow?: { id: string } }).workflow?.id,
        by: Context.current().info.workflowExecution?.workflowId ?? '',
      });
      statusFields.push({ object: `${kind}/${name}`, status: status as Record<string, unknown> });
      return { onCluster: false, tookMs: 0 }; // no custom resources on the cluster in these tests
    },
    async helmUninstall({ release }) {
      return record('uninstall', release, () => {
        releases.delete(release);
      });
    },
  };

  return {
    activities: stubs,
    calls,
    statusWrites,
    statusFields,
    releases,
    /** Holds every upgrade until `open()` is called. */
    close() {
      if (!gateOpen) return;
      gateOpen = false;
      gate = new Promise((resolve) => (openGate = resolve));
    },
    open() {
      gateOpen = true;
      openGate();
    },
  };
}

/**
 * A chart canary's Kubernetes side, for workflow tests: one copy `<release>-new` beside the
 * release's `<release>-old` (2 replicas each); a scale does what it is asked.
 */
export const chartCanaryStubs: Pick<typeof activities, 'createCanaryCopies' | 'scaleDeployment'> = {
  async createCanaryCopies(req) {
    return [{ canary: `${req.release}-new`, stable: `${req.release}-old`, replicas: 2, stableReplicas: 2 }];
  },
  async scaleDeployment(req) {
    return req.replicas;
  },
};

/**
 * Runs a test body against a worker on its own task queue with the stub Helm activities. With
 * ARMADA_SAVE_HISTORIES=1, a body given a `history` name saves the histories of every workflow it
 * ran (a manifest's groups and charts too) as test/histories/<history>--<type>-<n>.json, for the
 * replay test.
 */
export async function withWorker<T>(
  fake: ReturnType<typeof fakeHelm>,
  body: (h: Harness) => Promise<T>,
  history?: string,
): Promise<T> {
  const harness = await temporalHarness({ activities: fake.activities });
  try {
    const result = await harness.worker.runUntil(body(harness));
    if (history && savingHistories) await saveHistories(harness, history);
    return result;
  } finally {
    await harness.close();
  }
}

/** Saves the histories of every workflow the harness's task queue ran, for the replay test. */
async function saveHistories(h: Harness, name: string): Promise<void> {
  const runs = [];
  for await (const run of h.client.workflow.list({ query: `TaskQueue = '${h.taskQueue}'` })) runs.push(run);
  runs.sort((a, b) => a.workflowId.localeCompare(b.workflowId));
  for (const [i, run] of runs.entries())
    await saveHistory(run.workflowId, run.runId, `${name}--${run.type.replace(/Workflow$/, '')}-${i}`);
}

/** Polls a condition (the run's progress, the stub's calls) until it holds; fails after 20 s. */
export async function waitFor(check: () => boolean | Promise<boolean>): Promise<void> {
  const deadline = Date.now() + 20_000;
  while (!(await check())) {
    if (Date.now() > deadline) throw new Error('condition not met within 20 s');
    await new Promise((r) => setTimeout(r, 50));
  }
}
