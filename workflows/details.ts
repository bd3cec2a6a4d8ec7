import type { AnyProgress } from '../core/progress';
import { markdownOf, progressView } from '../core/plan/progress-view';

/** The run's current details in the Temporal UI: its progress as markdown (see progress-view). */
export function renderDetails(progress: AnyProgress): string {
  return markdownOf(progressView(progress));
}
