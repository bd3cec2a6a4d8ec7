import { setCurrentDetails, setHandler, type SignalDefinition } from '@temporalio/workflow';
import { progressQuery } from '../messages';
import { renderDetails } from '../details';
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

  private now(): Progress {
    return { ...this.progress, ...this.control.progress() };
  }
}

/**
 * The canary children of the run's charts that run now: pause, resume, rollback, a freeze and a
 * re-plan sent to the run go on to each of them (as a chart workflow passes them to its own); a
 * message naming a chart (its `target`) to that chart's only (workflows/run/objects.ts).
 */
export class CanaryChildren {
  /** Each chart's canary follower, by the chart it belongs to. */
  private readonly running = new Map<CanaryChild, string>();

  constructor(private readonly control: RunControl) {}

  /** The canary follower of the chart `chart`, for the release driver; `close` it when the chart ends. */
  open(chart: string): CanaryChild {
    const child = new CanaryChild();
    child.control = this.control;
    this.running.set(child, chart);
    return child;
  }

  close(child: CanaryChild): void {
    this.running.delete(child);
  }

  /** The canary child of `chart` while it runs. */
  of(chart: string): CanaryChild | undefined {
    return [...this.running].find(([child, of]) => of === chart && child.running)?.[0];
  }

  forward<Args extends unknown[]>(signal: SignalDefinition<Args>, ...args: Args): void {
    for (const child of this.running.keys()) child.signal(signal, ...args);
  }
}

/** Charts of a group that finished in the run a retry takes up: shown unchanged, not run. */
export function showFinished(shown: RunProgress, group: string, finished: readonly string[]): void {
  shown.show(() => {
    for (const row of shown.group(group).charts) if (finished.includes(row.chart)) row.state = 'unchanged';
  });
}
