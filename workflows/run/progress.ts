import {
  setCurrentDetails,
  setHandler,
  type ChildWorkflowHandle,
  type SignalDefinition,
  type Workflow,
} from '@temporalio/workflow';
import { progressQuery, replanSignal } from '../messages';
import { renderDetails } from '../details';
import { statusWriteFailures } from '../status';
import { pendingGroup } from '../manifest';
import { CanaryChild } from '../release-driver';
import { STEERED_BY_SET } from '../lockstep';
import type { RunControl } from '../control';
import type { SignalForwarder } from '../holds';
import type { Replan, Request } from '../../core/control';
import { deployerReplan } from '../../core/plan/plans-of-one';
import type { ChartProgress, GroupProgress, Progress } from '../../core/progress';
import type { ManifestPlan } from '../../core/plan/plans';

/**
 * What a run shows while it runs: every group and chart of its plan, in the progress query and
 * as the Temporal UI's current details (the group × chart table). Changes are made through
 * `show`, which renders the details again.
 */
export class RunProgress {
  private readonly progress: Progress;
  /** The table of the lockstep set that runs now, shown below the group × chart table. */
  private setTable?: string;

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
    const details = renderDetails(this.now());
    setCurrentDetails(this.setTable === undefined ? details : `${details}\n\n${this.setTable}`);
  }

  /** Shows the running lockstep set's table (none: the set ended). */
  showSet(table: string | undefined): void {
    this.setTable = table;
    this.show(() => undefined);
  }

  /** What the progress query answers: the rows, the run's control state, failed status writes. */
  now(): Progress {
    return { ...this.progress, ...this.control.progress(), ...statusWriteFailures() };
  }
}

/** A rollout child the run passes its signals on to. */
interface Steered {
  signal<Args extends unknown[]>(signal: SignalDefinition<Args>, ...args: Args): void;
}

/**
 * The canary children of the run's charts and the rollouts of its Deployers (each steps a
 * canary) that run now: pause, resume, rollback, a freeze and a re-plan sent to the run go on to
 * each of them (as a chart workflow passes them to its own); a message naming a chart (its
 * `target`) to that chart's only (workflows/run/objects.ts). A lockstep set's members get pause,
 * resume and rollback from their set (`useSet`), which also hears of them.
 */
export class CanaryChildren {
  /** Each running child: the chart it belongs to (none for a Deployer's rollout), and whether it is a member of the running lockstep set. */
  private readonly running = new Map<Steered, { chart?: string; inSet: boolean }>();
  private set?: SignalForwarder;

  constructor(private readonly control: RunControl) {}

  /** The canary follower of the chart `chart`, for the release driver; `close` it when the chart ends. */
  open(chart: string, inSet = false): CanaryChild {
    const child = new CanaryChild();
    child.control = this.control;
    child.inSet = inSet;
    this.running.set(child, { chart, inSet });
    return child;
  }

  close(child: CanaryChild): void {
    this.running.delete(child);
  }

  /** The canary child of `chart` while it runs. */
  of(chart: string): CanaryChild | undefined {
    for (const [child, { chart: of }] of this.running)
      if (of === chart && child instanceof CanaryChild && child.running) return child;
    return undefined;
  }

  /**
   * Follows the Deployer `deployer`'s rollout `child` until its `result` is in. A re-plan reaches
   * it as its own part of the new plan (deployerReplan): it starts over with it, as its own run did.
   */
  async follow<T>(
    deployer: string,
    child: ChildWorkflowHandle<Workflow>,
    result: Promise<T>,
    inSet: boolean,
  ): Promise<T> {
    const steered: Steered = {
      signal<Args extends unknown[]>(signal: SignalDefinition<Args>, ...args: Args) {
        if (signal.name !== replanSignal.name)
          return void child.signal(signal, ...args).catch(() => undefined);
        const replan = deployerReplan(args[0] as Replan, deployer);
        if (replan) void child.signal(replanSignal, replan).catch(() => undefined);
      },
    };
    this.running.set(steered, { inSet });
    try {
      return await result;
    } finally {
      this.running.delete(steered);
    }
  }

  /** The running group's lockstep set, which steers its members; none when the group has none. */
  useSet(set: SignalForwarder | undefined): void {
    this.set = set;
  }

  forward<Args extends unknown[]>(signal: SignalDefinition<Args>, ...args: Args): void {
    const bySet = STEERED_BY_SET.has(signal.name);
    for (const [child, { inSet }] of this.running) if (!(inSet && bySet)) child.signal(signal, ...args);
    // Pause, resume and rollback: each carries a Request.
    if (bySet) this.set?.(signal as unknown as SignalDefinition<[Request?]>, args[0] as Request | undefined);
  }
}

/** Charts of a group that finished in the run a retry takes up: shown unchanged, not run. */
export function showFinished(shown: RunProgress, group: string, finished: readonly string[]): void {
  shown.show(() => {
    for (const row of shown.group(group).charts) if (finished.includes(row.chart)) row.state = 'unchanged';
  });
}
