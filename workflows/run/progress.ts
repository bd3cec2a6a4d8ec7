import { setCurrentDetails, setHandler, type SignalDefinition } from '@temporalio/workflow';
import { progressQuery } from '../messages';
import { renderDetails } from '../details';
import { statusWriteFailures } from '../status';
import { pendingGroup } from '../manifest';
import { CanaryChild } from '../release-driver';
import type { RunControl } from '../control';
import type { ChartProgress, GroupProgress, Progress } from '../../core/progress';
import type { ManifestPlan } from '../../core/plan/plans';

/**
 * What a run shows while it runs: every group and chart of its plan, in the progress query and
 * as the Temporal UI's current details (the group × chart table). Changes are made through
 * `show`, which renders the details again.
 */
export class RunProgress {
  private readonly progress: Progress;

  constructor(
    plan: ManifestPlan,
    private readonly control: RunControl,
  ) {
    this.progress = { phase: 'Running', groups: plan.groups.map(pendingGroup) };
    setHandler(progressQuery, () => this.now());
    this.show(() => undefined);
  }

  /** A group's row; the plan's groups are the rows, so it is always there. */
  group(name: string): GroupProgress {
    return this.progress.groups.find((g) => g.name === name)!;
  }

  /** A chart's row in its group. */
  chart(group: string, chart: string): ChartProgress {
    return this.group(group).charts.find((c) => c.chart === chart)!;
  }

  /** Applies a change to the rows or the phase and shows it. */
  show(change: (progress: Progress) => void): void {
    change(this.progress);
    setCurrentDetails(renderDetails(this.now()));
  }

  /** What the progress query answers: the rows, the run's control state, failed status writes. */
  now(): Progress {
    return { ...this.progress, ...this.control.progress(), ...statusWriteFailures() };
  }
}

/**
 * The canary children of the run's charts that run now: pause, resume, rollback, a freeze and a
 * re-plan sent to the run go on to each of them (as a chart workflow passes them to its own).
 */
export class CanaryChildren {
  private readonly running = new Set<CanaryChild>();

  constructor(private readonly control: RunControl) {}

  /** A chart's canary follower, for the release driver; `close` it when the chart ends. */
  open(): CanaryChild {
    const child = new CanaryChild();
    child.control = this.control;
    this.running.add(child);
    return child;
  }

  close(child: CanaryChild): void {
    this.running.delete(child);
  }

  forward<Args extends unknown[]>(signal: SignalDefinition<Args>, ...args: Args): void {
    for (const child of this.running) child.signal(signal, ...args);
  }
}
