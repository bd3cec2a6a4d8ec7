import type { CancellationScope } from '@temporalio/workflow';
import type { RunControl } from '../control';
import type { RunMode } from '../../core/plan/run-modes';
import type { LockstepCoordinator } from '../lockstep';
import type { CanaryChildren, RunProgress } from './progress';
import type { RunReports } from './reports';

/** What a run's groups and charts work with: its control, its canary children, what it shows. */
export interface RunParts {
  control: RunControl;
  canaries: CanaryChildren;
  shown: RunProgress;
  /** What users see of the run: status, Events, notifications. */
  told: RunReports;
  /** Namespace of the plan's custom resources (its charts' status, their canaries' IDs). */
  namespace: string;
  /** Deploy, or uninstall every release (a sequenced group's charts in reverse). */
  mode: RunMode;
  /** The running group's lockstep set, when it steps its canaries together. */
  lockstep?: LockstepCoordinator;
  /**
   * A standalone chart's run (a plan of one chart): the scope its chart is driven in, cancelled
   * with the run, so a cancellation stops its helm write and its canary as the chart workflow's
   * did; in any other plan a cancellation lets running charts finish.
   */
  chartScope?: CancellationScope;
}
