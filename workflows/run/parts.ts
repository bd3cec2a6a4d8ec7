import type { RunControl } from '../control';
import type { LockstepCoordinator } from '../lockstep';
import type { CanaryChildren, RunProgress } from './progress';

/** What a run's groups and charts work with: its control, its canary children, what it shows. */
export interface RunParts {
  control: RunControl;
  canaries: CanaryChildren;
  shown: RunProgress;
  /** Namespace of the plan's custom resources (its charts' status, their canaries' IDs). */
  namespace: string;
  /** The running group's lockstep set, when it steps its canaries together. */
  lockstep?: LockstepCoordinator;
}
