import type { ServiceAccountRef } from '../contracts/acting-as';
import type { DeployerSpec } from '../../api/deployer';
import type { ChartOutcome, GroupOutcome } from '../contracts/workflows';
import type { GroupProgress } from '../progress';
import type { DeployerPlan, GroupPlan } from './plans';
import { deployerMember } from './lockstep';
import type { ReleaseChange, DeployerChange, Change } from './changes';

export function isReleaseChange(change: Change): change is ReleaseChange {
  return !('deployer' in change);
}

/** A change as a summary names it: its release, or `Deployer/<name>`. */
export function changedName(change: Change): string {
  return isReleaseChange(change) ? change.release : deployerMember(change.deployer.name);
}

export type Compensation =
  | ((
      | { action: 'rollback'; release: string; namespace: string; revision: number }
      | { action: 'uninstall'; release: string; namespace: string }
    ) & { actAs?: ServiceAccountRef })
  /** `deployer` carries the spec of the version it goes back to, in one 100 % step. */
  | { action: 'revert-deployer'; deployer: DeployerPlan; namespace: string; version: string }
  | { action: 'remove-deployer'; deployer: DeployerPlan; namespace: string };

/**
 * What undoing the changes takes, newest change first: a release that existed goes back to its
 * revision from before the run, one the run installed is uninstalled; a Deployer goes back to the
 * version it replaced at once, one the run first deployed is removed.
 * Example: changes [a (rev 2), b (new), c (rev 5)] → [c back to 5, uninstall b, a back to 2].
 */
export function compensations(changes: readonly Change[]): Compensation[] {
  return [...changes].reverse().map((change): Compensation => {
    if ('deployer' in change) {
      const { deployer, namespace, previous } = change;
      return previous === null
        ? { action: 'remove-deployer', deployer, namespace }
        : {
            action: 'revert-deployer',
            deployer: { ...deployer, spec: deployerUndoSpec(deployer.spec, previous) },
            namespace,
            version: previous,
          };
    }
    const { release, namespace, before, actAs } = change;
    return {
      ...(before === null
        ? { action: 'uninstall' as const, release, namespace }
        : { action: 'rollback' as const, release, namespace, revision: before }),
      ...(actAs && { actAs }),
    };
  });
}

/**
 * A Deployer's spec that goes back to `version`: through its canary steps, or at once (`now`:
 * one 100 % step, as `armadactl rollback dpl/NAME --now`).
 */
export function deployerBackTo(spec: DeployerSpec, version: string, now: boolean): DeployerSpec {
  return {
    ...spec,
    deployment: { ...spec.deployment, version },
    ...(now && { steps: [{ percent: 100 }] }),
  };
}

/**
 * A rollback's spec of a Deployer: back at once, neither judged (the version it goes back to
 * served before) nor held by deploy windows, as a chart's helm rollback is not.
 */
function deployerUndoSpec(spec: DeployerSpec, version: string): DeployerSpec {
  return { ...deployerBackTo(spec, version, true), analysis: undefined, windows: undefined };
}

/** How the outcome and the progress rows name what a compensation put back. */
export function undoneName(step: Compensation): string {
  switch (step.action) {
    case 'revert-deployer':
      return `Deployer/${step.namespace}/${step.deployer.name} → ${step.version}`;
    case 'remove-deployer':
      return `Deployer/${step.namespace}/${step.deployer.name} removed`;
    default:
      return `${step.namespace}/${step.release}`;
  }
}

/** A progress row's state once `step` is done: a release or Deployer the run created is gone. */
export function undoneState(step: Compensation): 'rolled-back' | 'uninstalled' {
  return step.action === 'uninstall' || step.action === 'remove-deployer' ? 'uninstalled' : 'rolled-back';
}

/** Whether a progress row (a chart's, or a Deployer's `Deployer/<name>`) is what `step` put back. */
export function undoes(
  step: Compensation,
  row: { chart: string; namespace: string; release: string },
): boolean {
  return 'deployer' in step
    ? row.chart === deployerMember(step.deployer.name)
    : row.namespace === step.namespace && row.release === step.release;
}

/** Shows `step` done in the progress rows: the chart or Deployer it put back reads so. */
export function markUndone(groups: readonly GroupProgress[], step: Compensation): void {
  for (const g of groups) for (const c of g.charts) if (undoes(step, c)) c.state = undoneState(step);
}

/** What a chart run changed and kept of its release: its install or upgrade; nothing else is a change. */
export function chartWrites(outcome: ChartOutcome): ReleaseChange[] {
  if (outcome.action !== 'installed' && outcome.action !== 'upgraded') return [];
  const { chart, release, namespace, before, actAs } = outcome;
  return [{ chart, release, namespace, before, ...(actAs && { actAs }) }];
}

/**
 * The saga's record of what one group run changed, in the order it changed it: every release a
 * chart installed or upgraded, including releases written by charts that failed afterwards
 * (wait, test). Its Deployers' changes: deployerChangesOf.
 */
export function changesOf(outcome: GroupOutcome): ReleaseChange[] {
  const changes: ReleaseChange[] = [];
  for (const chart of outcome.outcomes) {
    if (chart.action === 'installed' || chart.action === 'upgraded') {
      const { release, namespace, before, actAs } = chart;
      changes.push({ chart: chart.chart, release, namespace, before, ...(actAs && { actAs }) });
    }
  }
  for (const failed of outcome.failed) if (failed.written) changes.push(failed.written);
  return changes;
}

/**
 * The Deployers a group run (`group`, its objects in `namespace`) changed and kept, in the order
 * they finished: each it promoted (back to `previous`) or created (removed). They come after its
 * charts' changes, as a sequenced group rolls them out after its charts.
 */
export function deployerChangesOf(
  outcome: GroupOutcome,
  group: GroupPlan,
  namespace: string,
): DeployerChange[] {
  return (outcome.deployers ?? []).flatMap((done): DeployerChange[] => {
    const deployer = group.deployers?.find((d) => d.name === done.name);
    if (!deployer) return [];
    if (done.result === 'promoted' && done.previous)
      return [{ deployer, namespace, previous: done.previous }];
    if (done.result === 'deployed' && done.created) return [{ deployer, namespace, previous: null }];
    return [];
  });
}

/** The saga's record of what one group run changed: its charts' changes, then its Deployers'. */
export function groupChanges(outcome: GroupOutcome, group: GroupPlan, namespace: string): Change[] {
  return [...changesOf(outcome), ...deployerChangesOf(outcome, group, namespace)];
}
