import { defineQuery, defineSignal } from '@temporalio/workflow';

/** Who asked for something and why; shown by the progress query (and, later, in CR status). */
export interface Request {
  by?: string;
  reason?: string;
}

/** Hold before the next chart or group starts; Helm calls already running finish. */
export const pauseSignal = defineSignal<[Request?]>('pause');
export const resumeSignal = defineSignal<[Request?]>('resume');
/** Start no more charts, let running ones finish, then undo what this run changed. */
export const rollbackSignal = defineSignal<[Request?]>('rollback');
/** Pass the approval gate the run waits at. */
export const approveSignal = defineSignal<[Request?]>('approve');

export type ChartState =
  'pending' | 'deploying' | 'deployed' | 'unchanged' | 'skipped' | 'failed' | 'rolled-back' | 'uninstalled';

export interface ChartProgress {
  chart: string;
  release: string;
  namespace: string;
  state: ChartState;
  revision?: number;
  error?: string;
}

export interface GroupProgress {
  name: string;
  sequenced: boolean;
  state: 'pending' | 'waiting-approval' | 'running' | 'done' | 'failed' | 'stopped';
  charts: ChartProgress[];
}

export interface Progress {
  phase: string;
  group?: string;
  waitingOn?: string;
  paused?: { by?: string; reason?: string; since: string };
  groups: GroupProgress[];
}

export const progressQuery = defineQuery<Progress>('progress');

/** A group tells its manifest about each chart's progress, so the manifest's query is live. */
export const chartProgressSignal = defineSignal<[string, ChartProgress]>('chartProgress');

/** The message at the bottom of a failure chain (child workflow → activity → helm's words). */
export function rootMessage(err: unknown): string {
  let e: unknown = err;
  while (e instanceof Error && e.cause instanceof Error) e = e.cause;
  return e instanceof Error ? e.message : String(e);
}
