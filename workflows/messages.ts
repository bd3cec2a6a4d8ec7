/**
 * The message definitions: every signal, query and update of the workflows. With
 * search-attributes.ts, the only files of workflows/ that activities/, kube/, runs/, bridge/ and
 * cli/ may import (docs/explanation/architecture.md); the types the messages carry live in core/.
 */
import { defineQuery, defineSignal, defineUpdate } from '@temporalio/workflow';
import type { Request, Approval, Replan } from '../core/control';
import type { ChartProgress, Progress, CanaryProgress } from '../core/progress';
import type { LockstepSteerable, MemberReport } from '../core/plan/lockstep';
import type { RunEvent } from '../core/plan/notifications';

/** Hold before the next chart or group starts; Helm calls already running finish. */
export const pauseSignal = defineSignal<[Request?]>('pause');
export const resumeSignal = defineSignal<[Request?]>('resume');
/** Start no more charts, let running ones finish, then undo what this run changed. */
export const rollbackSignal = defineSignal<[Request?]>('rollback');

/**
 * Approve and promote are Updates: the validator refuses (the caller sees why) when no gate
 * waits, the gate named is not the one waiting, or the run has no canary to promote; the
 * accepted ones stand in the history with who and why. They answer what they did.
 */
export const approveUpdate = defineUpdate<string, [Approval]>('approve');
export const promoteUpdate = defineUpdate<string, [Request]>('promote');
/**
 * The same as signals, for tools that can only signal (`temporal workflow signal`, the UI's
 * signal form): checked the same way; a refused one is logged and shown by the progress query
 * and the run's current details, never silently dropped.
 */
export const approveSignal = defineSignal<[Approval?]>('approve');
export const promoteSignal = defineSignal<[Request?]>('promote');
export const replanSignal = defineSignal<[Replan]>('replan');

export const progressQuery = defineQuery<Progress>('progress');

/** The same `progress` query, as a canary (a Deployer, a chart's canary child) answers it. */
export const canaryProgressQuery = defineQuery<CanaryProgress>('progress');

/** A group tells its manifest about each chart's progress, so the manifest's query is live. */
export const chartProgressSignal = defineSignal<[string, ChartProgress]>('chartProgress');

/**
 * A cluster freeze (an ArmadaPolicy with `freeze`): `by` names the policies, `reason` says why.
 * The bridge sends it to every running run, and starts new runs with it (their `frozen` input).
 */
export const freezeSignal = defineSignal<[Request?]>('freeze');
/** The freeze is lifted: the run goes on from where it held. */
export const unfreezeSignal = defineSignal<[Request?]>('unfreeze');

// Between the runs of a lockstep set (workflows/lockstep.ts).
/** Coordinator → member: you may start step index N (N = steps: promote). */
export const lockstepGoSignal = defineSignal<[number]>('lockstepGo');
/** Member → coordinator: its progress, with each update. */
export const lockstepReportSignal = defineSignal<[MemberReport]>('lockstepReport');
/** Coordinator → its manifest: what approve and promote sent to the manifest may act on now. */
export const lockstepSteerableSignal = defineSignal<[LockstepSteerable]>('lockstepSteerable');

/** An event for a run's notifier: to a notifier workflow, or from a canary to its chart run. */
export const notificationSignal = defineSignal<[RunEvent]>('notification');
