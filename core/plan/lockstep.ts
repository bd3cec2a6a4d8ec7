import type { CanaryProgress } from '../progress';
import { canarySteps } from './canary';
import type { ChartPlan, DeployerPlan, GroupPlan } from './plans';
import { canaryWorkflowId } from './names';
import { counted, type ProgressView } from './progress-view';

/**
 * Lockstep canaries: the canary charts and Deployers of a group (`canary_lockstep: true`, or a
 * manifest's) step together. The group run coordinates; each member's canary reports to it and waits for
 * its go before each step and before it promotes. Step indexes are 0-based; index `steps` is
 * "promote" (the release upgrade that follows the last step).
 */

/** What a member's canary knows of its set: the run that coordinates it and its own name in the set. */
export interface LockstepLink {
  coordinator: string;
  member: string;
}

/** A member's report to the coordinator, sent with each of its progress updates. */
export interface MemberReport {
  member: string;
  /** Grows with each report: a signal delivered late never overwrites a newer one. */
  seq: number;
  phase: CanaryProgress['phase'];
  step: number;
  steps: number;
  percent: number;
  waitingOn?: string;
  /** The approval gate the member waits at. */
  gate?: string;
  /** While the member waits to start step index `readyFor`: every step before it has passed. */
  readyFor?: number;
  reason?: string;
}

/**
 * What a manifest may pass on to its running lockstep group (group → manifest, at each change):
 * the approval gate the set waits at, and whether a promote has a member to act on.
 */
export interface LockstepSteerable {
  gate?: string;
  promotable: boolean;
}

/** The coordinator's view of one member. */
export interface MemberState {
  report?: MemberReport;
  /** The highest step index the member has been ready for: it passed every step before. */
  passedBefore: number;
  /** Its chart or Deployer run ended (promoted, unchanged, installed without a canary, failed). */
  ended?: 'deployed' | 'failed';
}

/** A chart as lockstep reads it: its name and spec. */
type ChartOf = Pick<ChartPlan, 'chart' | 'spec'>;
/** A Deployer as lockstep reads it: its name and spec. */
type DeployerOf = Pick<DeployerPlan, 'name' | 'spec'>;

/**
 * A Deployer's name in its lockstep set, its messages and tables: `Deployer/web`, so that a chart
 * and a Deployer of one name stay two members (charts keep their plain names).
 */
export const deployerMember = (name: string): string => `Deployer/${name}`;

/** A member of a set as its plan knows it: its name in the set, and the canary steps it takes. */
interface PlannedMember {
  member: string;
  steps: Parameters<typeof canarySteps>[0];
}

/** The members of a group's set: its canary charts, then its Deployers (each steps a canary). */
function plannedMembers(charts: readonly ChartOf[], deployers: readonly DeployerOf[]): PlannedMember[] {
  return [
    ...charts.flatMap((c) => (c.spec.canary ? [{ member: c.chart, steps: c.spec.canary.steps }] : [])),
    ...deployers.map((d) => ({ member: deployerMember(d.name), steps: d.spec.steps })),
  ];
}

/**
 * The members of a group's lockstep set and the workflow the coordinator signals for each: a
 * chart's canary workflow (`ArmadaChart:<ns>/<chart>/canary`, `namespace` being the chart
 * objects'), a Deployer's own run (its DeployerPlan's workflowId, which steps its canary in line).
 */
export function lockstepMembers(
  group: Pick<GroupPlan, 'charts' | 'deployers'>,
  namespace: string,
): { member: string; workflowId: string }[] {
  return [
    ...group.charts.flatMap((c) =>
      c.spec.canary ? [{ member: c.chart, workflowId: canaryWorkflowId(namespace, c.chart) }] : [],
    ),
    ...(group.deployers ?? []).map((d) => ({ member: deployerMember(d.name), workflowId: d.workflowId })),
  ];
}

/**
 * Why a lockstep group cannot run, if it cannot: its members (canary charts and Deployers) must
 * deploy at once (a sequenced group would start the second only after the first promoted, and
 * the first waits for the second), and step through the same percentages. `owner` names the
 * group for the message.
 *
 * Example: web [10, 50] and Deployer api [20] → `ArmadaChartGroup apps: canary_lockstep members'
 * step percentages differ: web [10, 50, 100], Deployer/api [20, 100]`.
 */
export function lockstepProblems(
  owner: string,
  sequenced: boolean,
  charts: readonly ChartOf[],
  deployers: readonly DeployerOf[] = [],
): string[] {
  const members = plannedMembers(charts, deployers);
  const problems: string[] = [];
  if (sequenced && members.length > 1)
    problems.push(
      `${owner}: canary_lockstep needs sequenced: false; its members ${members.map((m) => m.member).join(', ')} step together, so they deploy at once`,
    );
  const lists = members.map((m) => ({
    member: m.member,
    percents: canarySteps(m.steps).map((s) => s.percent),
  }));
  if (new Set(lists.map((l) => l.percents.join())).size > 1)
    problems.push(
      `${owner}: canary_lockstep members' step percentages differ: ${lists.map((l) => `${l.member} [${l.percents.join(', ')}]`).join(', ')}`,
    );
  return problems;
}

/** What the set must do before a member starts step index `index`: `start` (index 0) or `pass step 2`. */
export function awaitedOfSet(index: number): string {
  return index === 0 ? 'start' : `pass step ${index}`;
}

/** Members still in the set: not ended. */
const active = (members: ReadonlyMap<string, MemberState>) =>
  [...members].filter(([, m]) => m.ended === undefined);

/**
 * The highest step index every member still in the set may start: the lowest `passedBefore`
 * among them (-1 while one has not reported yet, e.g. its chart still installs or observes).
 * Example: web ready for 2, api ready for 1 → 1 (both may run step 2; web waits to start step 3).
 * A set where every member ended releases everything (Infinity).
 */
export function releasedStep(members: ReadonlyMap<string, MemberState>): number {
  return Math.min(...active(members).map(([, m]) => m.passedBefore));
}

/** The members step index `index` waits on: those still in the set that have not passed the steps before it. */
export function holdingBack(members: ReadonlyMap<string, MemberState>, index: number): string[] {
  return active(members)
    .filter(([, m]) => m.passedBefore < index)
    .map(([name]) => name);
}

/** Folds a report in: a stale one (lower seq) changes nothing. Returns whether it was taken. */
export function takeReport(state: MemberState, report: MemberReport): boolean {
  if (state.report && state.report.seq >= report.seq) return false;
  state.report = report;
  if (report.readyFor !== undefined) state.passedBefore = Math.max(state.passedBefore, report.readyFor);
  return true;
}

/**
 * The lockstep set as one table (the group run's current details): member, step, percent, state
 * and what it waits on; a member ready for a step the others have not passed waits on them.
 */
export function lockstepView(
  group: string,
  members: ReadonlyMap<string, MemberState>,
  stoppedFor?: string,
): ProgressView {
  const released = releasedStep(members);
  const rows = [...members].map(([name, m]) => {
    const r = m.report;
    const ahead = r?.readyFor !== undefined && r.readyFor > released;
    const waiting = ahead
      ? `${holdingBack(members, r.readyFor!).join(', ')} to ${awaitedOfSet(r.readyFor!)}`
      : (r?.waitingOn ?? '');
    const state = m.ended ?? r?.phase ?? 'not started';
    return { cells: [name, r ? `${r.step}/${r.steps}` : '', r ? `${r.percent} %` : '', state, waiting] };
  });
  return {
    title: `Lockstep canaries of group ${group}${stoppedFor ? ` — rolling back all: ${stoppedFor}` : ''}`,
    notes: [],
    columns: ['member', 'step', 'percent', 'state', 'waiting on'],
    rows,
    size: counted(rows.length, 'member'),
    log: [],
  };
}
