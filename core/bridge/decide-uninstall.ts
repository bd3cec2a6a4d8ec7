import type { RunState } from './decide-run';

/** What to do about the uninstall of an object being deleted, whose finalizer the bridge holds. */
export type UninstallDecision =
  /** A deploy runs: cancel it (which stops it cleanly), then look again when it ends. */
  | { do: 'cancel' }
  /** The uninstall runs: look again when it ends. */
  | { do: 'follow' }
  /** Start the uninstall; `failed`: the status an earlier uninstall ended with, said in a Warning Event. */
  | { do: 'start'; failed?: string }
  /** The uninstall completed: the finalizer goes. */
  | { do: 'done' };

/**
 * Deletion: the object's latest run (`latest`, null: none) decides. A running deploy is cancelled
 * first; an uninstall that failed after its activities' own retries (minutes) runs again; only a
 * completed uninstall lets the object go.
 */
export function decideUninstall(
  latest: Pick<RunState, 'running' | 'status' | 'memo'> | null,
): UninstallDecision {
  if (latest?.running) return { do: latest.memo.mode === 'uninstall' ? 'follow' : 'cancel' };
  if (latest?.memo.mode !== 'uninstall') return { do: 'start' };
  return latest.status === 'COMPLETED' ? { do: 'done' } : { do: 'start', failed: latest.status };
}
