import { AppsV1Api } from '@kubernetes/client-node';
import { Client, Connection, type WorkflowFailedError } from '@temporalio/client';
import { ApplicationFailure } from '@temporalio/common';
import { kinds } from '../../api/kinds';
import { manifestRun, startRun } from '../../runs/requests';
import { NonRetryable } from '../../core/failures';
import type { ManifestOutcome } from '../../core/contracts/workflows';
import { canaryProgressQuery } from '../../workflows/messages';
import type { ManifestDocuments } from '../../core/plan/manifest';
import { canaryWorkflowId } from '../../core/plan/names';
import { releaseSteps } from '../helpers/release-steps';
import { helm, helmProcesses, kubeConfig, uniqueName } from '../helpers/env';
import {
  HOLD_PROMISE_MS,
  SHOWN_DEADLINE_TOLERANCE_MS,
  TIMER_FIRING_TOLERANCE_MS,
  retriedActivities,
  stepAfter,
  historyTimers,
  resultWithin,
} from '../helpers/histories';
import { kubectl } from '../helpers/kube';
import { WORKER_POLLING, eventually, startProcess, type ProductProcess } from '../helpers/processes';

/**
 * How long a phase may take after its last kill: about 100 s alone, 5 min on a loaded machine.
 * Past it, the drill fails naming what each run still waits on.
 */
const PHASE_LIMIT_MS = 300_000;

/** Each canary hold, long enough to kill the worker in it and have a new one poll. */
const HOLD_SECONDS = 6;
const RELEASES = ['settings', 'backend', 'web', 'admin'] as const;
type Release = (typeof RELEASES)[number];
type Phase = 1 | 2 | 3;
/** The node-label gates pods wait on: backend's and web's of phase 1 (b1, w1) and 2 (b2, w2), admin's (a). */
const GATES = ['b1', 'b2', 'w1', 'w2', 'a'] as const;

/**
 * One copy of the scenario: its own release namespace, task queue and worker process. Pods of
 * a gated revision may only run on nodes with the gate's label, so a Helm or Armada wait holds
 * still until the drill opens the gate: that is how a kill lands inside a wait every time.
 */
class Scenario {
  readonly namespace: string;
  readonly taskQueue: string;
  readonly gateKey = (gate: string) => `armada-drill/${this.namespace}-${gate}`;
  worker?: ProductProcess;
  readonly killed: string[] = [];
  /** Each hold's end as the canary showed it before the kill, by step. */
  readonly holdDeadlines = new Map<number, number>();

  constructor(readonly name: 'drill' | 'twin') {
    this.namespace = uniqueName(`wcrash-${name}`);
    this.taskQueue = uniqueName(`wcrash-${name}`);
  }

  async startWorker(): Promise<void> {
    this.worker = startProcess('dist/worker/main.js', { ARMADA_TASK_QUEUE: this.taskQueue });
    await this.worker.printed(WORKER_POLLING);
  }

  /** SIGKILL the worker (its helm children live on, as orphans) and start a new one. */
  async crash(point: string): Promise<void> {
    await this.worker!.stop('SIGKILL');
    this.killed.push(point);
    await this.startWorker();
  }

  async openGate(gate: string): Promise<void> {
    await kubectl('label', 'nodes', '--all', '--overwrite', `${this.gateKey(gate)}=open`);
  }

  /** Closes `gate` and deletes `release`'s pods: their replacements stay Pending until it opens again. */
  async closeGate(gate: string, release: Release): Promise<void> {
    await kubectl('label', 'nodes', '--all', `${this.gateKey(gate)}-`);
    const pods = `app.kubernetes.io/instance=${this.release(release)}`;
    await kubectl('delete', 'pods', '-n', this.namespace, '-l', pods, '--wait=false');
  }

  release(r: Release): string {
    return `${this.namespace}-${r}`;
  }

  /** The manifest of each phase: 1 installs, 2 upgrades (web as a canary), 3 fails and rolls back. */
  documents(phase: Phase): ManifestDocuments {
    const chart = (release: Release, values: Record<string, unknown>, extra: Record<string, unknown> = {}) =>
      kinds.ArmadaChart.spec.parse({
        release,
        namespace: this.namespace,
        source: {
          type: 'local',
          location: `examples/charts/${release === 'settings' ? 'settings' : 'hello'}`,
        },
        values,
        ...extra,
      });
    const gated = (gate: string) => ({ nodeSelector: { [this.gateKey(gate)]: 'open' } });
    const waitFor = (release: Release, timeout: number) => ({
      wait: { timeout, labels: { 'app.kubernetes.io/instance': this.release(release) } },
    });
    const nativeWait = { wait: { timeout: 120, native: { enabled: true } } };
    return {
      namespace: this.namespace,
      manifest: {
        name: 'crash',
        spec: kinds.ArmadaManifest.spec.parse({
          release_prefix: this.namespace,
          chart_groups: ['base', 'apps'],
          on_failure: 'rollback',
        }),
      },
      groups: {
        base: kinds.ArmadaChartGroup.spec.parse({ sequenced: true, chart_group: ['settings', 'backend'] }),
        apps: kinds.ArmadaChartGroup.spec.parse({ sequenced: false, chart_group: ['web', 'admin'] }),
      },
      charts: {
        settings: chart('settings', { settings: { logLevel: phase === 3 ? 'warn' : 'debug' } }),
        backend:
          phase === 1
            ? chart('backend', { replicaCount: 2, ...gated('b1') }, waitFor('backend', 120))
            : chart('backend', { replicaCount: 3, ...gated('b2') }, nativeWait),
        web:
          phase === 1
            ? chart('web', { replicaCount: 4, ...gated('w1') }, nativeWait)
            : chart(
                'web',
                { replicaCount: 4, image: { tag: '2.0.0' }, ...gated('w2') },
                {
                  wait: { timeout: 120 },
                  canary: {
                    steps: [
                      { percent: 25, sleep: HOLD_SECONDS },
                      { percent: 50, sleep: HOLD_SECONDS },
                      { percent: 75, sleep: HOLD_SECONDS },
                      { percent: 100 },
                    ],
                  },
                },
              ),
        // Phase 3: admin's new pods can run nowhere; its wait times out and the run rolls back.
        admin:
          phase === 3
            ? chart('admin', { replicaCount: 1, nodeSelector: { nowhere: 'true' } }, waitFor('admin', 10))
            : chart('admin', { replicaCount: 1, ...gated('a') }),
      },
    };
  }
}

/** Where in a run the drill kills the worker: when `reached` answers, and what it does around the kill. */
interface KillPoint {
  point: string;
  reached: () => Promise<unknown>;
  /** What the drill does once the point is reached, before the kill. */
  before?: () => Promise<void>;
  then?: () => Promise<void>;
}

/**
 * Drill 1: the worker is SIGKILLed at ten points of three manifest runs — in an Armada wait,
 * between groups, in a `helm install` and a `helm upgrade` waiting for their pods, in a canary's
 * readiness wait and in each of its three holds, in a wait that fails, in the rollback that
 * follows (a `helm rollback` waiting for its pods) — and a new worker process starts each time.
 * A twin of the scenario runs beside it on a worker nobody kills. Each run must end as the
 * twin's did, each release must have exactly the twin's Helm history, and each hold must end on
 * the deadline it had before the kill.
 *
 * The worker is killed alone, as when its process dies on a machine: a helm it had started
 * lives on as an orphan and finishes, and the retried activity finds the release as wanted and
 * writes nothing. (A helm killed with it is drill 5, `helm-interrupted.test.ts`.)
 */
describe('drill: worker SIGKILLed at ten points of real deploys, restarted each time', () => {
  const drill = new Scenario('drill');
  const twin = new Scenario('twin');
  let connection: Connection;
  let client: Client;

  beforeAll(async () => {
    connection = await Connection.connect({ address: process.env.TEMPORAL_ADDRESS! });
    client = new Client({ connection });
  });
  afterAll(async () => {
    for (const s of [drill, twin]) {
      await s.worker?.stop('SIGKILL');
      await kubectl('label', 'nodes', '--all', ...GATES.map((g) => `${s.gateKey(g)}-`)).catch(() => '');
      await kubectl('delete', 'namespace', s.namespace, '--wait=false').catch(() => '');
    }
    await connection.close();
  });

  const pendingActivity = async (workflowId: string, type: string) => {
    const { raw } = await client.workflow.getHandle(workflowId).describe();
    return raw.pendingActivities?.some((a) => a.activityType?.name === type) || undefined;
  };
  const helmWaiting = async (s: Scenario, verb: 'install' | 'upgrade' | 'rollback', release: Release) => {
    const status = JSON.parse(await helm('status', s.release(release), '-n', s.namespace, '-o', 'json'));
    const waiting =
      status.info.status === `pending-${verb}` &&
      // An install is `helm upgrade --install`.
      (await helmProcesses(verb === 'rollback' ? 'rollback' : 'upgrade', s.release(release))).length === 1;
    return waiting || undefined;
  };
  /** The canary's hold timers started so far: durable, each fires on the server at its deadline. */
  const holdTimers = async (s: Scenario) =>
    historyTimers(
      (await client.workflow.getHandle(canaryWorkflowId(s.namespace, 'web')).fetchHistory()).events ?? [],
      ' — hold',
    );
  /**
   * In step `step`'s hold once its timer is in history. The workflow shows the deadline a moment
   * before, while the status write's local activity runs: a kill then fails that workflow task,
   * and its retry, a task timeout (10 s) later, starts the hold and shows the deadline anew.
   */
  const holding = (s: Scenario, step: number) => async () => {
    if ((await holdTimers(s)).length < step) return undefined;
    const progress = await client.workflow
      .getHandle(canaryWorkflowId(s.namespace, 'web'))
      .query(canaryProgressQuery);
    if (progress.waitingOn !== 'hold' || progress.step !== step || !progress.nextStepAt) return undefined;
    s.holdDeadlines.set(step, Date.parse(progress.nextStepAt));
    return true;
  };
  const manifestId = (s: Scenario) => manifestRun(s.documents(1)).workflowId;
  /**
   * A release's steps in the manifest's latest run (its deployRun: no chart child; the run's
   * activities whose summary names the release), undefined before its first.
   */
  const stepsOf = async (s: Scenario, r: Release) =>
    releaseSteps((await client.workflow.getHandle(manifestId(s)).fetchHistory()).events ?? [], s.release(r));
  /** The release's Armada wait for its pods is running (its latest step, not closed). */
  const releaseWaiting = async (s: Scenario, r: Release) => {
    const steps = await stepsOf(s, r);
    return (steps?.closed === Infinity && steps.types.at(-1) === 'waitForResources') || undefined;
  };

  /** The kill points of each phase, in the order the run reaches them. */
  const killPoints = (s: Scenario): Record<Phase, KillPoint[]> => ({
    1: [
      {
        point: 'backend: Armada wait for its pods',
        reached: () => releaseWaiting(s, 'backend'),
        then: () => s.openGate('b1'),
      },
      {
        point: 'between groups: apps starting',
        reached: async () => (await stepsOf(s, 'web')) !== undefined || undefined,
      },
      {
        point: 'web: helm install waiting for its pods',
        reached: () => helmWaiting(s, 'install', 'web'),
        then: () => s.openGate('w1'),
      },
    ],
    2: [
      {
        point: 'backend: helm upgrade waiting for its pods',
        reached: () => helmWaiting(s, 'upgrade', 'backend'),
        then: () => s.openGate('b2'),
      },
      {
        point: 'web canary: readiness wait of step 1',
        reached: () => pendingActivity(canaryWorkflowId(s.namespace, 'web'), 'waitForResources'),
        then: () => s.openGate('w2'),
      },
      ...[1, 2, 3].map((step) => ({ point: `web canary: hold of step ${step}`, reached: holding(s, step) })),
    ],
    3: [
      {
        point: 'admin: the Armada wait that times out',
        reached: () => releaseWaiting(s, 'admin'),
        // Admin's pods go, and their replacements wait for the gate: the run's rollback, back to
        // their revision, then holds in helm's wait until the drill opens it.
        before: () => s.closeGate('a', 'admin'),
      },
      {
        point: 'the rollback of the run: helm rollback waiting for its pods',
        reached: () => helmWaiting(s, 'rollback', 'admin'),
        then: () => s.openGate('a'),
      },
    ],
  });

  /** Runs one phase to its end, killing the worker at each of `kills` on the way. */
  async function runPhase(s: Scenario, phase: Phase, kills: KillPoint[]): Promise<ManifestOutcome> {
    const handle = client.workflow.getHandle(
      await startRun(client, s.taskQueue, manifestRun(s.documents(phase))),
    );
    for (const kill of kills) {
      await eventually(`${s.name}: ${kill.point}`, async () => (await kill.reached()) ?? undefined, {
        process: s.worker,
        timeoutMs: 240_000,
      });
      await kill.before?.();
      await s.crash(kill.point);
      await kill.then?.();
    }
    try {
      return await resultWithin<ManifestOutcome>(client, handle, PHASE_LIMIT_MS, (id) =>
        id.includes(s.namespace),
      );
    } catch (err) {
      // A run that rolled back after a failure fails, with its outcome in the failure's details.
      const cause = (err as WorkflowFailedError).cause;
      if (cause instanceof ApplicationFailure && cause.type === NonRetryable.ManifestFailed)
        return cause.details![0] as ManifestOutcome;
      throw err;
    }
  }

  async function runScenario(s: Scenario, kills: Record<Phase, KillPoint[]>): Promise<ManifestOutcome[]> {
    await kubectl('create', 'namespace', s.namespace);
    await s.startWorker();
    const outcomes = [];
    for (const phase of [1, 2, 3] as const) outcomes.push(await runPhase(s, phase, kills[phase]));
    return outcomes;
  }

  /** `helm history` of each release, in words that do not depend on the scenario's names. */
  const histories = async (s: Scenario) =>
    Object.fromEntries(
      await Promise.all(
        RELEASES.map(async (r) => {
          const history = JSON.parse(
            await helm('history', s.release(r), '-n', s.namespace, '-o', 'json'),
          ) as { revision: number; status: string; description: string }[];
          return [r, history.map((h) => `${h.revision} ${h.status} ${h.description.replace(/=.*/, '=…')}`)];
        }),
      ),
    );
  const outcomeWords = (s: Scenario, outcomes: ManifestOutcome[]) =>
    outcomes.map((o) => `${o.state}: ${o.rolledBack.map((r) => r.replaceAll(s.namespace, 'NS')).join(', ')}`);

  it(
    'every run ends as the crash-free twin’s did, with its exact Helm revisions; holds keep their deadlines (±1 s)',
    async () => {
      // The twin's gates are open from the start: nothing makes it wait. Admin's pods run from
      // the start in the drill too, until phase 3 closes their gate.
      await Promise.all([...GATES.map((g) => twin.openGate(g)), drill.openGate('a')]);
      const [crashed, crashFree] = await Promise.all([
        runScenario(drill, killPoints(drill)),
        runScenario(twin, { 1: [], 2: [], 3: [] }),
      ]);

      expect(drill.killed).toHaveLength(10);
      expect(outcomeWords(twin, crashFree)).toEqual([
        'deployed: ',
        'deployed: ',
        expect.stringMatching(/^rolled-back: /),
      ]);
      expect(outcomeWords(drill, crashed)).toEqual(outcomeWords(twin, crashFree));

      const twinHistories = await histories(twin);
      // What a crash-free run makes: install, upgrade, and the rollback of phase 3's changes.
      expect(Object.fromEntries(RELEASES.map((r) => [r, twinHistories[r].length]))).toEqual({
        settings: 3,
        backend: 2,
        web: 2,
        admin: 3,
      });
      expect(await histories(drill)).toEqual(twinHistories);

      const web = (
        await kubeConfig().makeApiClient(AppsV1Api).listNamespacedDeployment({ namespace: drill.namespace })
      ).items
        .filter((d) => d.metadata!.name!.startsWith(drill.release('web')))
        .map((d) => `${d.metadata!.name} ${d.spec!.replicas} ${d.spec!.template.spec!.containers[0].image}`);
      expect(web).toEqual([`${drill.release('web')} 4 ghcr.io/stefanprodan/podinfo:2.0.0`]);

      // Each attempt a kill cut short was given up by its profile's heartbeat timeout (5 s for a
      // wait, 10 s for a helm write: workflows/activity-proxies.ts) and retried. Other attempts in flight
      // at a kill (the parallel group's) may be among them too.
      // (The manifest's runs hold every chart's steps: deployRun has no chart child.)
      const ids = [canaryWorkflowId(drill.namespace, 'web'), manifestId(drill)];
      const retried: string[] = [];
      for (const id of ids)
        for await (const run of client.workflow.list({ query: `WorkflowId = '${id}'` }))
          retried.push(
            ...retriedActivities((await client.workflow.getHandle(id, run.runId).fetchHistory()).events!),
          );
      const count = (type: string) => retried.filter((r) => r.startsWith(`${type} `)).length;
      // Armada wait of backend, canary readiness of web, admin's wait that times out.
      expect(count('waitForResources')).toBeGreaterThanOrEqual(3);
      // helm install of web and helm upgrade of backend, each waiting for its pods.
      expect(count('helmUpgradeInstall')).toBeGreaterThanOrEqual(2);
      expect(count('helmRollback')).toBeGreaterThanOrEqual(1); // admin's, in the run's rollback
      // Given up by its profile's heartbeat timeout: 5 s for a wait, 10 s for a helm write; a
      // status write the run made off its path (a quick activity, no heartbeat) by its 5 s
      // start-to-close (or, retried more than once, by a cause the history no longer holds).
      // Never another failure.
      expect(
        retried.filter(
          (r) =>
            !/ after (5|10) s$|^reportStatus after 5 s \(start-to-close\)$| no failure recorded$/.test(r),
        ),
      ).toEqual([]);
      expect(retried.filter((r) => / after (5|10) s$/.test(r)).length).toBeGreaterThanOrEqual(4);

      // Each hold is a server-side timer: it fired on its deadline, the one it showed before the kill.
      const canaryEvents =
        (await client.workflow.getHandle(canaryWorkflowId(drill.namespace, 'web')).fetchHistory()).events ??
        [];
      const holds = historyTimers(canaryEvents, ' — hold');
      expect(holds.map((h) => h.firedAt !== undefined)).toEqual([true, true, true]);
      const firing = holds.map((h) => h.firedAt! - h.deadline);
      const shown = holds.map((h, i) => h.deadline - drill.holdDeadlines.get(i + 1)!);
      // The promise: the step after each hold starts within HOLD_PROMISE_MS of the deadline shown.
      const nextSteps = holds.map(
        (h, i) => stepAfter(canaryEvents, h.fired!)! - drill.holdDeadlines.get(i + 1)!,
      );
      console.log(
        `worker-crash drill: kills at ${drill.killed.join('; ')}; holds fired ${firing.join(', ')} ms from their deadlines, which lay ${shown.join(', ')} ms from the ones shown; the steps after them started ${nextSteps.join(', ')} ms after the deadlines shown`,
      );
      for (const ms of firing) expect(Math.abs(ms)).toBeLessThanOrEqual(TIMER_FIRING_TOLERANCE_MS);
      for (const ms of shown) expect(Math.abs(ms)).toBeLessThanOrEqual(SHOWN_DEADLINE_TOLERANCE_MS);
      for (const ms of nextSteps) expect(Math.abs(ms)).toBeLessThanOrEqual(HOLD_PROMISE_MS);
    },
    15 * 60_000,
  );
});
