import type { AnyProgress } from '../core/progress';
import { logOf, progressView, textOf } from '../core/plan/progress-view';

/** Progress as `armadactl status` (and `watch` on a terminal) prints it, whichever kind of run answered. */
export function formatProgress(p: AnyProgress): string[] {
  return textOf(progressView(p));
}

/** Progress as lines for a log that prints only what changed (`watch` without a terminal). */
export function progressLog(p: AnyProgress): string[] {
  return logOf(progressView(p));
}
