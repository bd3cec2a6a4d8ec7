import { defineQuery, defineSignal, defineUpdate } from '@temporalio/workflow';
import type { Request, Approval, Replan } from '../core/control';
import type { ChartProgress, Progress, CanaryProgress } from '../core/progress';

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
