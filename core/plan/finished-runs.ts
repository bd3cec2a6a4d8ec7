import type {
  ChartOutcome,
  DeployerOutcome,
  WrittenRelease,
  GroupOutcome,
  ManifestOutcome,
} from '../contracts/workflows';
import type { GroupPlan, Resume } from './plans';
import { changesOf, chartWrites, groupChanges } from './rollback';
import type { Change } from './changes';

/**
 * What a finished run left, read back by armadactl (a completed run's result, or the details of
 * its failure) for the day-two commands: undo it (`rollback --to-run`) or retry it from the
 * step that failed (`retry`).
 */
export type FinishedRun =
  | { workflowType: 'manifestWorkflow' | 'deployRun'; outcome: ManifestOutcome }
  | { workflowType: 'groupWorkflow'; outcome: GroupOutcome }
  /** A chart run's outcome, or the release it had written when it failed after the write. */
  | { workflowType: 'chartWorkflow'; outcome: ChartOutcome | WrittenRelease };

/**
 * What a Deployer's finished run left: a `deployRun`'s (its plan of one: the one Deployer of its
 * one group), or a `deployerWorkflow`'s of an older build (its own outcome); undefined when none.
 */
export function deployerOutcomeOf(left: unknown): DeployerOutcome | undefined {
  if (left === undefined || left === null) return undefined;
  const run = left as Partial<ManifestOutcome> & Partial<DeployerOutcome>;
  return run.groups ? run.groups[0]?.deployers?.[0] : (run as DeployerOutcome);
}

/** What a manifest's or group's run deployed (from its input): the plans of its groups, for their Deployers. */
export interface RunPlan {
  /** The namespace of its custom resources (its Deployers'). */
  namespace: string;
  groups: GroupPlan[];
}

/**
 * Every change a finished run made and kept, in the order it made them: what undoing it puts
 * back (see compensations). With the run's `plan`, a manifest's or group's changes include the
 * Deployers each group promoted or first deployed. A run that continued from others (re-plans)
 * made their changes too (`carriedChanges`). A run that rolled itself back kept nothing.
 */
export function changesToUndo(run: FinishedRun, plan?: RunPlan): Change[] {
  const changesOfGroup = (outcome: GroupOutcome): Change[] => {
    const group = plan?.groups.find((g) => g.name === outcome.group);
    return group ? groupChanges(outcome, group, plan!.namespace) : changesOf(outcome);
  };
  switch (run.workflowType) {
    case 'manifestWorkflow':
    case 'deployRun': {
      const { state, groups, carriedChanges = [] } = run.outcome;
      return state === 'rolled-back' ? [] : [...carriedChanges, ...groups.flatMap(changesOfGroup)];
    }
    case 'groupWorkflow': {
      const { rolledBack, carriedChanges = [] } = run.outcome;
      return rolledBack ? [] : [...carriedChanges, ...changesOfGroup(run.outcome)];
    }
    case 'chartWorkflow': {
      const outcome = run.outcome;
      if (!('action' in outcome)) return [outcome]; // written, then failed
      return [...(outcome.carriedChanges ?? []), ...chartWrites(outcome)];
    }
  }
}

/**
 * The changes of a manifest's run that are those of a group or chart it lists (an undo of that
 * object alone: deployRun deploys it inside the manifest's run): a chart's, its release's; a
 * group's, its charts' releases and its Deployers, by the run's `plan` (none without it).
 */
export function listedChanges(
  object: { kind: string; name: string },
  changes: readonly Change[],
  plan: RunPlan | undefined,
): Change[] {
  const group =
    object.kind === 'ArmadaChartGroup' ? plan?.groups.find((g) => g.name === object.name) : undefined;
  const charts = object.kind === 'ArmadaChart' ? [object.name] : (group?.charts.map((c) => c.chart) ?? []);
  const deployers = (group?.deployers ?? []).map((d) => d.name);
  return changes.filter((c) =>
    'chart' in c ? charts.includes(c.chart) : deployers.includes(c.deployer.name),
  );
}

/**
 * The Resume of a failed run from its groups' outcomes, or why it cannot be retried: a run that
 * rolled back what it changed has nothing to take up (apply it again instead). A failed run that
 * was itself a retry (`earlier`: its own Resume) also keeps what finished before it.
 */
export function resumeOf(
  retryOf: string,
  groups: readonly GroupOutcome[],
  rolledBack: boolean,
  earlier?: Resume,
): Resume | { refused: string } {
  if (rolledBack)
    return {
      refused: `run ${retryOf} rolled back what it had changed: there is nothing to take up; apply it again to start from the top`,
    };
  const finished: Record<string, string[]> = { ...earlier?.finished };
  for (const g of groups)
    finished[g.group] = [
      ...(finished[g.group] ?? []),
      ...g.outcomes.filter((o) => o.action !== 'rolled-back').map((o) => o.chart),
    ];
  return { retryOf, finished };
}

/** Whether every chart of a group (by name) finished in the run a retry takes up. */
export function finishedBefore(
  resume: Resume | undefined,
  group: string,
  charts: readonly string[],
): boolean {
  const finished = resume?.finished[group];
  return finished !== undefined && charts.every((c) => finished.includes(c));
}
