import {
  allHandlersFinished,
  ApplicationFailure,
  CancellationScope,
  condition,
  log,
  makeContinueAsNewFunc,
  setCurrentDetails,
  setHandler,
  upsertSearchAttributes,
  workflowInfo,
  type Workflow,
} from '@temporalio/workflow';
import { io, profile, quickCalls } from './activity-proxies';
import { analysisFailureLimit, analysisIntervalMs, checkAnalysisOnce } from './analysis';
import { RunControl } from './control';
import { LockstepMember } from './lockstep';
import { renderDetails } from './details';
import { NonRetryable, rootMessage } from '../core/failures';
import { canaryProgressQuery } from './messages';
import type { CanaryProgress } from '../core/progress';
import { CANARY_STATES, deployerOperatorPhase } from '../api/states';
import type { Hold } from '../core/control';
import {
  afterWait,
  continuedRun,
  formatSeconds,
  historyFull,
  holdTimerMs,
  nextWaitMs,
  restoreScales,
  stepScales,
  type CanaryResume,
  type CanaryStep,
  type HoldLeft,
  type Scale,
} from '../core/plan/canary';
import { stepGate } from '../core/plan/gates';
import { gateRules, type GateRules } from '../core/plan/steering';
import { ArmadaPhase } from './search-attributes';
import { report, reportHeld, reportPause, statusWriteFailures } from './status';
import { routeTraffic } from './traffic';
import { noNotifications, ParentForwarder, type EventSink } from './notify';
import type { RunEventFacts } from '../core/plan/notifications';
import { heldMessage, passSafePoint } from './holds';
import type { CanaryRun, CanaryOutcome } from '../core/contracts/workflows';

/** Seconds a step may take to become Ready when the spec gives no `step_timeout`. */
const DEFAULT_STEP_TIMEOUT_SECONDS = 600;

/**
 * A canary as a workflow of its own (an ArmadaChart's canary runs as a child of its chart
 * workflow, so signals reach it by its ID). Cancelling it rolls it back.
 */
export async function canaryWorkflow(run: CanaryRun): Promise<CanaryOutcome> {
  const control = new RunControl(run.carried);
  const events =
    run.notifyParent && run.resource
      ? new ParentForwarder(run.resource, () => control.approvals)
      : noNotifications;
  const canary = new Canary(
    run,
    control,
    (resume) => continueWithSameMemo<typeof canaryWorkflow>(continuedRun(run, resume, control.carry())),
    events,
  );
  control.listen();
  return CancellationScope.nonCancellable(async () => {
    const outcome = await canary.run();
    await events.settled();
    return outcome;
  });
}

type StepEnd = 'held' | 'approved' | 'promote' | { rollback: string };

/** Continues this run as a new one of the same type with `input`, keeping the memo (the bridge reads it). */
export function continueWithSameMemo<W extends Workflow>(...args: Parameters<W>): Promise<never> {
  return makeContinueAsNewFunc<W>({ memo: workflowInfo().memo })(...args);
}

/**
 * Steps Deployment pairs through percentages. Per step: scale the canaries up, wait until they
 * are Ready (bounded by step_timeout), scale the stables down, then hold — a durable timer, or an
 * approval — checking the analysis on its interval. Pause freezes the hold and keeps its
 * remaining time; promote jumps to 100 %; a rollback signal, a cancellation, a readiness timeout,
 * a failed analysis or an approval timeout (with on_timeout rollback) restore the stables and
 * delete the canaries.
 *
 * Histories are bounded: a hold whose run reaches `historyLimit` events continues as new (the
 * caller's `continueAs` builds the input) and the new run resumes inside the same hold, with its
 * deadline, analysis failures, step records, pause and approval.
 *
 * The caller owns what comes after 100 % (the Helm upgrade of a chart, the old Deployment's
 * deletion for a Deployer) and what comes before the first step (creating the canaries at 0).
 */
export class Canary {
  /** The phase this run last upserted: its search attribute's value. */
  private upsertedPhase?: CanaryProgress['phase'];
  readonly progress: CanaryProgress;
  private analysisFailures: number;
  private readonly lockstep?: LockstepMember;

  /** `continueAs`: ends the run and continues it as a new one resuming at `resume`; `events`: where its notifications go. */
  constructor(
    private readonly input: CanaryRun,
    private readonly control: RunControl,
    private readonly continueAs: (resume: CanaryResume) => Promise<never>,
    private readonly events: EventSink = noNotifications,
  ) {
    const resume = input.resume;
    control.holds.use(input.windows);
    this.analysisFailures = resume?.analysisFailures ?? 0;
    if (input.lockstep) this.lockstep = new LockstepMember(input.lockstep, control);
    this.progress = {
      kind: 'canary',
      target: input.title,
      phase: 'Progressing',
      step: 0,
      steps: input.steps.length,
      percent: 0,
      ...(resume?.reason !== undefined && { reason: resume.reason }),
      history:
        resume?.history ??
        input.steps.map((step, i) => {
          const split = stepScales(input.pairs, step.percent);
          return {
            step: i + 1,
            percent: step.percent,
            canary: sum(split.canary),
            stable: sum(split.stable),
            ...((step.approval || step.holdSeconds !== undefined) && {
              hold: step.approval ? ('approval' as const) : step.holdSeconds,
            }),
          };
        }),
    };
    setHandler(canaryProgressQuery, () => this.progressNow());
    control.promoteRefusal = () => {
      if (this.progress.phase !== 'Progressing')
        return `the canary is ${this.progress.phase}; nothing to promote`;
      if (control.promoteRequested) return `promoting already (asked by ${who(control.promoteRequested)})`;
      return undefined;
    };
    control.approvalHint =
      'approve a canary while a step waits for approval (armadactl status shows the step)';
    const resource = input.resource;
    if (resource)
      control.followPause((paused) => reportPause(resource.kind, resource.namespace, resource.name, paused));
  }

  async run(): Promise<CanaryOutcome> {
    const { steps } = this.input;
    const resume = this.input.resume;
    let promoting = false;
    for (let i = resume?.step ?? 0; i < steps.length; i++) {
      // A resumed step is inside its hold, which waits out a pause itself.
      const resumed = i === resume?.step ? resume : undefined;
      if (!resumed && !(await passSafePoint(this.control, (hold) => this.showHold(hold))))
        return this.rollBack(this.stopReason());
      promoting ||= this.control.promoteRequested !== null;
      // Promoting skips the remaining steps: the next one is the last, 100 %, without a hold.
      const index = promoting ? steps.length - 1 : i;
      if (!resumed && this.lockstep && !(await this.lockstep.mayStart(index, this)))
        return this.rollBack(this.stopReason());
      const end = await this.step(index, promoting, resumed);
      if (typeof end === 'object') return this.rollBack(end.rollback);
      if (promoting) break;
      promoting = end === 'promote';
    }
    if (this.lockstep && !(await this.lockstep.mayStart(steps.length, this)))
      return this.rollBack(this.stopReason());
    this.progress.phase = 'Promoted';
    this.progress.waitingOn = undefined;
    await this.publish(`${this.input.title} at 100 %`);
    return { result: 'promoted', reason: this.progress.reason, steps: this.progress.history };
  }

  /** One step; `resumed`: the run continued as new inside this step's hold, which goes on. */
  private async step(index: number, promoting: boolean, resumed?: CanaryResume): Promise<StepEnd> {
    const step = this.input.steps[index];
    const record = this.progress.history[index];
    const title = `${this.input.title} canary ${step.percent} %`;
    Object.assign(this.progress, { step: index + 1, percent: step.percent, nextStepAt: undefined });
    this.progress.phase = promoting ? 'Promoting' : 'Progressing';
    const end = resumed
      ? await this.hold(step, index, title, resumed)
      : await this.rollOutStep(step, index, promoting, title);
    if (end === 'held' || end === 'approved') {
      const failed = await this.analyse(title, true);
      if (failed) return { rollback: failed };
    }
    record.endedAt = now();
    record.ended = typeof end === 'object' ? 'rolled-back' : end === 'promote' ? 'promoted' : end;
    return end;
  }

  /** Scales a step up, waits until it is Ready, scales the stables down, then holds it. */
  private async rollOutStep(
    step: CanaryStep,
    index: number,
    promoting: boolean,
    title: string,
  ): Promise<StepEnd> {
    const record = this.progress.history[index];
    record.startedAt = now();
    const scales = stepScales(this.input.pairs, step.percent);

    this.progress.waitingOn = 'readiness';
    await this.publish(`${title}: ${record.canary} new / ${record.stable} old, waiting for readiness`);
    await this.scale(scales.canary, `${title}: scale new up`, true);
    const timeout = this.input.stepTimeoutSeconds ?? DEFAULT_STEP_TIMEOUT_SECONDS;
    const ready = await this.unlessStopped(() =>
      io.waitForResources.executeWithOptions(
        profile.long(`${title}: wait for Ready (step_timeout ${formatSeconds(timeout)})`, timeout),
        [
          {
            release: this.input.title,
            subject: `canary ${this.input.title}`,
            namespace: this.input.namespace,
            actAs: this.input.actAs,
            targets: scales.canary.map((s) => ({
              type: 'deployment',
              fieldSelector: `metadata.name=${s.name}`,
            })),
            timeoutSeconds: timeout,
          },
        ],
      ),
    );
    if (ready === 'stopped') return { rollback: this.stopReason() };
    if (ready instanceof Error) return { rollback: `${title} not Ready: ${rootMessage(ready)}` };
    // Traffic moves once the canaries can take it, and before the stables lose capacity.
    const routed = await this.setWeights(step.percent, title);
    if (routed) return { rollback: routed };
    // Scaling down stays an activity task: a hold's timer started in the workflow task of a local
    // activity goes to the server only once that is done, late on the deadline the step shows
    // (by 1.7 s under a worker kill in the cluster lane); and a step without a hold ends as its
    // scale does, so a re-plan or a rollback sent meanwhile must reach the workflow first.
    await this.scale(scales.stable, `${title}: scale old down`);
    record.readyAt = now();
    void this.events.notify({ event: 'step-reached', step: this.stepFacts(index) });

    if (promoting) return 'promote';
    return this.promotedBeforeReplan(step) ? 'held' : this.hold(step, index, title);
  }

  /**
   * Whether a re-plan found this step at 100 % and Ready with nothing left to hold: the version
   * serves in full, so the run starts over from it instead of undoing it (a first deploy would
   * otherwise be deleted while it serves, and the newest version created without a canary). A
   * rollback signal or a cancellation still undoes it.
   */
  private promotedBeforeReplan(step: CanaryStep): boolean {
    const { replan, stopRequested, cancelled } = this.control;
    return (
      replan !== null &&
      stopRequested === null &&
      !cancelled &&
      step.percent === 100 &&
      !step.approval &&
      !step.holdSeconds
    );
  }

  /**
   * Holds a ready step: for its sleep on a durable timer, or until approved. Pausing cancels the
   * timer and keeps the time left; resuming starts a new timer for that remainder. A fired timer
   * counts as its length, not as what the workflow clock says (see afterWait). A hold whose
   * history is full continues as new and resumes here (`resumed`).
   */
  /** The rules of its approval steps; a run applied from a file alone has no author to check. */
  private gateRules(): GateRules | undefined {
    const { approvalRules, resource } = this.input;
    if (!approvalRules) return undefined;
    const object = resource ? `${resource.kind}/${resource.name}` : this.input.title;
    return gateRules(approvalRules, object, this.control.steering);
  }

  private async hold(
    step: CanaryStep,
    index: number,
    title: string,
    resumed?: CanaryResume,
  ): Promise<StepEnd> {
    const { control } = this;
    const approval = step.approval === true;
    const gate = stepGate(index, step.percent);
    if (approval) control.openGate(gate, resumed?.gateSince, this.gateRules());
    if (approval && !resumed)
      void this.events.notify({ event: 'waiting-approval', gate, step: this.stepFacts(index) });
    try {
      return await this.holdOpen(step, index, approval, title, resumed?.left);
    } finally {
      if (approval) control.closeGate();
    }
  }

  /** Holds step `index` until it ends (its time, an approval, a promote, a stop, a failed check). */
  private async holdOpen(
    step: CanaryStep,
    index: number,
    approval: boolean,
    title: string,
    resumed?: HoldLeft,
  ): Promise<StepEnd> {
    const intervalMs = this.input.analysis && analysisIntervalMs(this.input.analysis);
    let left: HoldLeft = resumed ?? { remainingMs: this.holdMs(step, approval), untilCheckMs: intervalMs };
    for (;;) {
      const end = await this.holdEnd(index, approval, title, left);
      if (end === 'resumed') continue;
      if (end) return end;
      const waited = await this.waitInHold(approval, title, left);
      left = waited.left;
      // A hold that has just ended gets the step's final check, not one more between timers.
      const holdEnded = waited.timerFired && left.remainingMs === 0;
      if (
        intervalMs !== undefined &&
        left.untilCheckMs! <= 0 &&
        !this.holdInterrupted(approval) &&
        !holdEnded
      ) {
        left.untilCheckMs = intervalMs;
        const failed = await this.analyse(title, false);
        if (failed) return { rollback: failed };
      }
    }
  }

  /** How long a step holds: its hold, or an approval's timeout (undefined: none). */
  private holdMs(step: CanaryStep, approval: boolean): number | undefined {
    if (!approval) return (step.holdSeconds ?? 0) * 1000;
    const { approvalTimeoutSeconds } = this.input;
    return approvalTimeoutSeconds !== undefined ? approvalTimeoutSeconds * 1000 : undefined;
  }

  /** Whether something ends the hold's current wait: a pause, a stop, a promote, the approval. */
  private holdInterrupted(approval: boolean): boolean {
    const { control } = this;
    return (
      control.paused !== null ||
      control.stopping ||
      control.promoteRequested !== null ||
      (approval && control.approved !== null)
    );
  }

  /**
   * How the hold ends now, if it does; `resumed` after a pause it waited out (the hold looks
   * again). A full history continues the run as new, inside the hold.
   */
  private async holdEnd(
    index: number,
    approval: boolean,
    title: string,
    left: HoldLeft,
  ): Promise<StepEnd | 'resumed' | undefined> {
    const { control } = this;
    if (control.stopping) return { rollback: this.stopReason() };
    if (control.promoteRequested) {
      this.progress.reason = `promoted by ${who(control.promoteRequested)}`;
      return 'promote';
    }
    if (approval && control.approved) return 'approved';
    if (this.historyFull()) return this.continueAsNew(index, left);
    if (control.paused) {
      this.progress.nextStepAt = undefined;
      this.progress.paused = {
        ...control.paused,
        remainingSeconds: left.remainingMs && left.remainingMs / 1000,
      };
      await this.publish(`${title}: paused`);
      await condition(() => control.paused === null || control.stopping || this.historyFull());
      this.progress.paused = undefined;
      return 'resumed';
    }
    if (left.remainingMs !== undefined && left.remainingMs <= 0) return this.holdRanOut(approval, title);
    return undefined;
  }

  /** The hold's time is up: a hold is done; an approval that timed out rolls back or promotes (on_timeout). */
  private holdRanOut(approval: boolean, title: string): StepEnd {
    if (!approval) return 'held';
    const timedOut = `approval of ${title} timed out after ${formatSeconds(this.input.approvalTimeoutSeconds ?? 0)}`;
    if (this.input.onTimeout !== 'promote') return { rollback: timedOut };
    this.progress.reason = `${timedOut}: promoted (on_timeout promote)`;
    return 'promote';
  }

  /**
   * One wait of the hold, shown first: on a durable timer until the hold ends or the next check
   * is due, or without one until something interrupts it. What is left of the hold after it.
   */
  private async waitInHold(
    approval: boolean,
    title: string,
    left: HoldLeft,
  ): Promise<{ left: HoldLeft; timerFired: boolean }> {
    const { remainingMs } = left;
    const waitMs = nextWaitMs(left);
    const started = Date.now();
    this.progress.waitingOn = approval ? 'approval' : 'hold';
    this.progress.nextStepAt =
      remainingMs !== undefined ? new Date(started + remainingMs).toISOString() : undefined;
    const writeMs = await this.publish(
      approval
        ? `${title}: waiting for approval${remainingMs !== undefined ? ` until ${this.progress.nextStepAt}` : ''}`
        : `${title}: holding until ${this.progress.nextStepAt}`,
    );
    const summary = approval
      ? `${title} — approval${remainingMs !== undefined ? `, times out in ${formatSeconds(remainingMs / 1000)}` : ''}`
      : `${title} — hold ${formatSeconds(remainingMs! / 1000)}`;
    const interrupted = () => this.holdInterrupted(approval);
    let timerFired = false;
    // Only a wait without a timer ends for a full history (signals add events to it): a timer's
    // wait must tell whether the timer fired, and the activation that fires it adds events too.
    if (waitMs === Infinity) await condition(() => interrupted() || this.historyFull());
    else timerFired = !(await condition(interrupted, holdTimerMs(waitMs, writeMs), { summary }));
    return { left: afterWait(left, waitMs, timerFired, Date.now() - started), timerFired };
  }

  /**
   * Shows a freeze or a closed window the canary holds for at its current weight (waiting on
   * `window` until the opening, or on `freeze`), or that it goes on (null).
   */
  private async showHold(hold: Hold | null): Promise<number> {
    const { title, resource } = this.input;
    this.progress.waitingOn = hold?.for;
    this.progress.nextStepAt = hold?.until;
    const published = await this.publish(`${title}: ${hold ? heldMessage(hold) : 'going on'}`);
    return (
      published + (resource ? await reportHeld(resource.kind, resource.namespace, resource.name, hold) : 0)
    );
  }

  /** Whether the run's history is long enough to continue as new (see historyFull). */
  private historyFull(): boolean {
    const { historyLength, continueAsNewSuggested } = workflowInfo();
    return historyFull({ length: historyLength, suggested: continueAsNewSuggested }, this.input.historyLimit);
  }

  /**
   * Ends this run inside the hold of step `index` and continues as a new one that resumes it with
   * `left`. Waits for running handlers first, so an Update accepted now is answered and carried.
   */
  private async continueAsNew(index: number, left: HoldLeft): Promise<never> {
    await condition(allHandlersFinished);
    await this.events.settled();
    log.info('canary history is full; continuing as new', {
      title: this.input.title,
      step: index + 1,
      events: workflowInfo().historyLength,
    });
    return this.continueAs({
      step: index,
      left,
      analysisFailures: this.analysisFailures,
      history: this.progress.history,
      ...(this.progress.reason !== undefined && { reason: this.progress.reason }),
      ...(this.control.gate && { gateSince: this.control.gate.since }),
    });
  }

  /**
   * One analysis check, when the spec has one; returns why the canary must roll back once the
   * failures exceed failure_limit. `final` is the check before a step is passed.
   */
  private async analyse(title: string, final: boolean): Promise<string | undefined> {
    const analysis = this.input.analysis;
    if (!analysis) return undefined;
    this.progress.waitingOn = 'analysis';
    const { namespace, pairs, actAs } = this.input;
    const stableRunning = this.progress.history[this.progress.step - 1].stable > 0;
    const result = await checkAnalysisOnce(
      analysis,
      { namespace, pairs, actAs, stableRunning },
      `${title}: analysis ${final ? 'before passing the step' : 'check'}`,
    );
    if (result.ok) return undefined;
    this.analysisFailures++;
    const limit = analysisFailureLimit(analysis);
    log.warn('canary analysis failed', {
      title,
      message: result.message,
      failures: this.analysisFailures,
      limit,
    });
    return this.analysisFailures > limit
      ? `${title}: analysis failed ${this.analysisFailures} time(s) (failure_limit ${limit}): ${result.message}`
      : undefined;
  }

  /** Restores every stable Deployment, waits for it (best effort), then deletes the canaries. */
  private async rollBack(reason: string): Promise<CanaryOutcome> {
    const { title, namespace, pairs } = this.input;
    this.progress.phase = 'RollingBack';
    this.progress.reason = reason;
    this.progress.nextStepAt = undefined;
    this.progress.waitingOn = undefined;
    const current = this.progress.history[this.progress.step - 1];
    if (current && !current.ended) Object.assign(current, { ended: 'rolled-back', endedAt: now() });
    await this.publish(`${title}: rolling back: ${reason}`);
    // The failing canary loses its traffic before anything is scaled.
    await this.setWeights(0, `${title}: rollback`);
    const stables = restoreScales(pairs);
    await this.scale(stables, `${title}: rollback, restore old`);
    if (stables.length) {
      const stepTimeout = this.input.stepTimeoutSeconds ?? DEFAULT_STEP_TIMEOUT_SECONDS;
      try {
        await io.waitForResources.executeWithOptions(
          profile.long(`${title}: rollback, wait for old to be Ready`, stepTimeout),
          [
            {
              release: title,
              subject: `stable ${title}`,
              namespace,
              actAs: this.input.actAs,
              targets: stables.map((s) => ({ type: 'deployment', fieldSelector: `metadata.name=${s.name}` })),
              timeoutSeconds: stepTimeout,
            },
          ],
        );
      } catch (err) {
        // The old version is scaled back either way; a slow start must not keep the canary alive.
        log.warn('stable not Ready after rollback', { title, error: rootMessage(err) });
      }
    }
    await io.deleteDeployments.executeWithOptions(profile.quick(`${title}: rollback, delete new`), [
      { namespace, names: pairs.map((p) => p.canary), actAs: this.input.actAs },
    ]);
    this.progress.phase = 'RolledBack';
    this.progress.percent = 0;
    await this.publish(`${title} rolled back: ${reason}`);
    await this.events.notify({ event: 'rolled-back', reason });
    return { result: 'rolled-back', reason, steps: this.progress.history };
  }

  /**
   * Sets the route's weights to `percent` for the canary, when the spec has `traffic`; returns
   * why it could not (a missing route, rule or Service, retries spent).
   */
  private async setWeights(percent: number, title: string): Promise<string | undefined> {
    try {
      this.progress.weights = await routeTraffic(this.input, this.input.traffic, percent, title);
      return undefined;
    } catch (err) {
      log.warn('canary traffic weights not set', { title, percent, error: rootMessage(err) });
      return `${title}: traffic weights not set: ${rootMessage(err)}`;
    }
  }

  /** Step `index` as notifications name it. */
  private stepFacts(index: number): RunEventFacts['step'] {
    return { number: index + 1, of: this.input.steps.length, percent: this.input.steps[index].percent };
  }

  /** `local`: as a local activity, inside the workflow task (a step's scale-up: a workflow task and an activity task fewer per step). */
  private async scale(scales: Scale[], summary: string, local = false): Promise<void> {
    const scaleDeployment = local ? quickCalls.scaleDeployment : io.scaleDeployment;
    await Promise.all(
      scales.map((s) =>
        scaleDeployment.executeWithOptions(profile.quick(`${summary}: ${s.name} → ${s.replicas}`), [
          { namespace: this.input.namespace, name: s.name, replicas: s.replicas, actAs: this.input.actAs },
        ]),
      ),
    );
  }

  /**
   * Runs an activity until it ends or the canary is stopping; a stop cancels it. An activity
   * failure is returned (the caller rolls back), not thrown.
   *
   * The activity can end just before a stop signal arrives and still reach the workflow in the
   * same activation as the signal (the server refuses a task that completes while a signal
   * waits, and the worker replays both); the SDK runs signal handlers first, so the stop is seen
   * while the result is on its way. That result stands, as it would have a moment earlier, and
   * the caller meets the stop at its next safe point.
   */
  private async unlessStopped<T>(fn: () => Promise<T>): Promise<T | Error | 'stopped'> {
    const scope = new CancellationScope();
    let ended = false;
    const work = scope.run(fn).then(
      (value) => ((ended = true), value),
      (err: unknown) => ((ended = true), err instanceof Error ? err : new Error(String(err))),
    );
    await condition(() => ended || this.control.stopping);
    if (ended) return work;
    scope.cancel();
    const late = await work;
    return late instanceof Error ? 'stopped' : late;
  }

  private stopReason(): string {
    const stop = this.control.stopRequested;
    if (stop) return `rollback requested by ${who(stop)}${stop.reason ? `: ${stop.reason}` : ''}`;
    if (this.control.replan)
      return `the spec changed (${this.control.replan.memo.specs}); starting over with it`;
    return 'the run was cancelled';
  }

  /** The steps with the run's control (pause, gate, approvals, refusals): the query's answer, the UI's details. */
  private progressNow(): CanaryProgress {
    const { paused, ...control } = this.control.progress();
    return {
      ...this.progress,
      ...control,
      ...(paused && { paused: { ...paused, ...this.progress.paused } }),
      ...statusWriteFailures(),
    };
  }

  /**
   * Shows the progress in the Temporal UI (details, phase) and in the custom resource's status;
   * resolves to the milliseconds the status write took (0 without a resource).
   */
  async publish(message: string): Promise<number> {
    const p = this.progress;
    setCurrentDetails(renderDetails(this.progressNow()));
    this.lockstep?.report(this.progressNow());
    if (p.phase !== this.upsertedPhase) {
      upsertSearchAttributes([{ key: ArmadaPhase, value: p.phase }]);
      this.upsertedPhase = p.phase;
    }
    const resource = this.input.resource;
    if (!resource) return 0;
    // A chart's canary ends before its release is upgraded: the chart workflow reports Deployed.
    const done = p.phase === 'Promoted' && resource.kind === 'Deployer';
    const phase = p.phase === 'RolledBack' ? 'RolledBack' : done ? 'Deployed' : 'Progressing';
    // The status is merge-patched: null removes the deadline an earlier hold wrote.
    const deadline = p.nextStepAt ?? null;
    const progress =
      resource.kind === 'Deployer'
        ? { percentage: p.percent, step: p.step, wait: deadline }
        : {
            step: p.step,
            steps: p.steps,
            percent: p.percent,
            summary: `${p.step}/${p.steps} ${p.percent}%`,
            next_step_at: deadline,
          };
    return report(resource.kind, resource.namespace, resource.name, phase, message, {
      progress,
      ...(resource.kind === 'Deployer' && { phase: deployerOperatorPhase(CANARY_STATES[p.phase]) }),
    });
  }
}

function sum(scales: Scale[]): number {
  return scales.reduce((n, s) => n + s.replicas, 0);
}

function now(): string {
  return new Date().toISOString();
}

function who(req: { by?: string; reason?: string }): string {
  return req.by ?? 'an operator';
}

/** Throws the canary's rollback as a typed failure, for callers that must stop on it. */
export function canaryRolledBack(outcome: CanaryOutcome, where: string): ApplicationFailure {
  return ApplicationFailure.nonRetryable(
    `canary of ${where} rolled back: ${outcome.reason ?? 'no reason given'}`,
    NonRetryable.CanaryRolledBack,
    outcome,
  );
}
