import { ApplicationFailure } from '@temporalio/common';
import { WorkflowFailedError, type Client, type WorkflowExecutionInfo } from '@temporalio/client';
import { decodeFromPayloadsAtIndex } from '@temporalio/common/lib/internal-non-workflow';
import type {
  ChartRun,
  DeployerRun,
  GroupOutcome,
  GroupRun,
  ManifestOutcome,
  ManifestRun,
  UndoRun,
} from '../core/contracts/workflows';
import { NonRetryable } from '../core/failures';
import {
  changesToUndo,
  deployerOutcomeOf,
  listedChanges,
  resumeOf,
  type FinishedRun,
  type RunPlan,
} from '../core/plan/finished-runs';
import type { Resume } from '../core/plan/plans';
import { undidChangeOf, undoersOf, type ListedObject } from '../core/plan/undone-changes';
import { deployerPlanOfOne, groupPlanOfOne } from '../core/plan/plans-of-one';
import type { DeployRunInput } from '../core/contracts/run';
import { changedName, deployerBackTo } from '../core/plan/rollback';
import type { Change } from '../core/plan/changes';
import { objectWorkflowId } from '../core/plan/names';
import { releaseOwnerWorkflowId } from '../core/plan/release-lock';
import type { RunMemo } from '../core/plan/specs';
import { ArmadaKind, ArmadaName, ArmadaNamespace } from '../workflows/search-attributes';
import { latestRun } from './control';
import { legacyChartRetry, withLegacyChartRuns } from './legacy-chart-runs';
import { searchAttributes, type RunRequest } from './requests';
import type { ObjectPlace } from './targets';
import { kinds } from '../api/kinds';

/**
 * The day-two commands on finished runs (docs/how-to/operate-runs.md, "Day-two operations"): undo one
 * (`armadactl rollback --to-run RUN_ID | --previous`) and retry a failed one from the step that
 * failed (`armadactl retry`). Both read the object's past runs from Temporal (their outcomes,
 * and their input) and start a new run under the object's own workflow ID (an undo of a chart or
 * of a manifest's group: under the ID of what owns its releases, undoWorkflowId), with a history
 * of its own: the lock keeps it from running beside a deploy of the object or a drift repair of its
 * releases, and the memo it copies from the latest run under that ID keeps the bridge from taking
 * it for a new spec.
 */

/** A day-two command refused: what it names cannot be undone or retried, and why. */
export class RunRefused extends Error {}

/**
 * The workflow whose runs are an object's deploys: a group or chart that another object lists is
 * deployed by that object's run (deployRun has no group or chart child; runsInsideOwner), a
 * standalone chart by its own run (`ArmadaChart:<ns>/<name>`, also when its custom resource is
 * not on the cluster; an older build's runs of it are read beside: withLegacyChartRuns).
 */
function deployWorkflowId(place: ObjectPlace): string {
  const { kind, namespace, name } = place;
  if (place.manifest && (kind === 'ArmadaChartGroup' || kind === 'ArmadaChart'))
    return objectWorkflowId('ArmadaManifest', namespace, place.manifest);
  if (kind === 'ArmadaChart' && place.group)
    return objectWorkflowId('ArmadaChartGroup', namespace, place.group);
  return objectWorkflowId(kind, namespace, name);
}

/**
 * The workflow ID an undo of the object runs under: that of the object that owns the releases it
 * writes (core/plan/release-lock.ts), so no deploy, repair or other undo of them runs beside it.
 * A manifest's group and chart: the manifest's; a group's chart: the group's; else the workflow
 * its deploys ran under (a chart known by its name alone: the one its runs were found under).
 */
export function undoWorkflowId(place: ObjectPlace, deploys: string): string {
  if (place.kind === 'ArmadaChartGroup' && place.manifest)
    return objectWorkflowId('ArmadaManifest', place.namespace, place.manifest);
  return (place.kind === 'ArmadaChart' && releaseOwnerWorkflowId(place)) || deploys;
}

/**
 * The visibility query for the runs an undo reads: the object's deploys (and what ran under
 * their ID), and when its undos run under another ID (undoWorkflowId), those of them that are
 * its own (an undo carries the object's search attributes).
 */
function undoRunsQuery(place: ObjectPlace, deploys: string, undos: string): string {
  const byId = `WorkflowId = '${deploys}'`;
  const { kind, namespace, name } = place;
  const own = `${ArmadaKind.name} = '${kind}' AND ${ArmadaNamespace.name} = '${namespace}' AND ${ArmadaName.name} = '${name}'`;
  // Inside the run of what lists it, only the undos of what holds it may have undone its changes (undidChangeOf).
  if (runsInsideOwner(place)) {
    const undoers = undoersOf(place).map(
      (u) => `(${ArmadaKind.name} = '${u.kind}' AND ${ArmadaName.name} = '${u.name}')`,
    );
    return `${byId} AND (WorkflowType != 'undoWorkflow' OR ${undoers.join(' OR ')})`;
  }
  if (undos === deploys) return byId;
  return `${byId} OR (WorkflowId = '${undos}' AND WorkflowType = 'undoWorkflow' AND ${own})`;
}

/**
 * A group or chart a manifest lists, or a chart a standalone group lists: the run of what lists
 * it deploys it (deployRun), so its deploys are that object's runs and its changes are theirs of
 * its own releases and Deployers (listedChanges).
 */
function runsInsideOwner(place: ObjectPlace): place is ObjectPlace & ListedObject {
  if (place.kind === 'ArmadaChart') return place.manifest !== undefined || place.group !== undefined;
  return place.kind === 'ArmadaChartGroup' && place.manifest !== undefined;
}

/** One run (execution) under a workflow ID, newest first as listed. */
interface Execution {
  workflowId: string;
  runId: string;
  type: string;
  status: string;
  memo?: RunMemo;
}

async function executionsOf(
  client: Client,
  workflowId: string,
  query = `WorkflowId = '${workflowId}'`,
): Promise<Execution[]> {
  const found: WorkflowExecutionInfo[] = [];
  for await (const info of client.workflow.list({ query })) found.push(info);
  if (!found.length) throw new RunRefused(`no run of ${workflowId}; start one with \`armadactl apply\``);
  return found
    .sort((a, b) => b.startTime.getTime() - a.startTime.getTime())
    .map((info) => ({
      workflowId: info.workflowId,
      runId: info.runId,
      type: info.type,
      status: info.status.name,
      memo: info.memo as RunMemo | undefined,
    }));
}

/** What a finished run left: its result, or the outcome its failure carries; undefined when it carries none. */
async function finishedRun(client: Client, run: Execution): Promise<unknown> {
  const handle = client.workflow.getHandle(run.workflowId, run.runId, { followRuns: false });
  try {
    return await handle.result();
  } catch (err) {
    if (!(err instanceof WorkflowFailedError)) throw err;
    return failedWith(err);
  }
}

/**
 * The outcome a failed run carries in its failure: a manifest's (deployRun's) run fails with its
 * outcome, a chart that failed after it wrote with the release; undefined when it carries none.
 */
export function failedWith(err: WorkflowFailedError): unknown {
  const wanted = [NonRetryable.ManifestFailed, NonRetryable.ChartFailedAfterWrite] as string[];
  for (let e: unknown = err.cause; e instanceof Error; e = e.cause)
    if (e instanceof ApplicationFailure && wanted.includes(e.type ?? '')) return e.details?.[0];
  return undefined;
}

/** The input a run was started (or continued) with, decoded as the worker decoded it. */
async function inputOf<T>(client: Client, run: Execution): Promise<T> {
  const history = await client.workflow.getHandle(run.workflowId, run.runId).fetchHistory();
  const started = history.events?.[0]?.workflowExecutionStartedEventAttributes;
  return decodeFromPayloadsAtIndex<T>(client.options.loadedDataConverter, 0, started?.input?.payloads);
}

const FINISHED = new Set(['COMPLETED', 'FAILED']);
const DEPLOYS = new Set([
  'deployRun',
  'manifestWorkflow',
  'groupWorkflow',
  'chartWorkflow',
  'deployerWorkflow',
]);
/** A manifest's run: `deployRun`, or `manifestWorkflow` when an older build started it; one input and outcome. */
const MANIFEST_RUNS = new Set(['deployRun', 'manifestWorkflow']);

function describeRuns(runs: Execution[]): string {
  return runs
    .slice(0, 5)
    .map((r) => `${r.runId} (${r.type}, ${r.status.toLowerCase()})`)
    .join(', ');
}

/** A request under the workflow ID of `latest`, the run it follows, with its memo (see the module comment). */
function requestUnder<Input>(
  place: ObjectPlace,
  latest: Pick<Execution, 'workflowId' | 'memo'>,
  workflowType: string,
  input: Input,
  summary: string,
  target: string,
): RunRequest<Input> {
  const { kind, namespace, name } = place;
  return {
    workflowType,
    workflowId: latest.workflowId,
    input,
    memo: latest.memo ?? { mode: 'deploy' },
    options: {
      staticSummary: `${kind} ${namespace}/${name}: ${summary}`,
      typedSearchAttributes: searchAttributes(kind, namespace, name),
    },
    what: `${kind} ${namespace}/${name}`,
    target,
  };
}

/**
 * The run that undoes one of the object's finished deploys: `runId`, else the newest one that
 * changed a release and kept it (`--previous`). A Deployer goes back to the version that run
 * replaced, stepped through its canary steps, or at once (`now`).
 */
export async function undoRequest(
  client: Client,
  place: ObjectPlace,
  opts: { runId?: string; now?: boolean; by?: string; target: string },
): Promise<RunRequest<UndoRun | DeployRunInput>> {
  const deploys = deployWorkflowId(place);
  const undos = undoWorkflowId(place, deploys);
  const runs = await executionsOf(
    client,
    deploys,
    withLegacyChartRuns(place, undoRunsQuery(place, deploys, undos)),
  );
  // The undo follows the latest run under its ID: its memo tells the bridge the specs deployed.
  // (runs holds only the object's own when it runs inside the run of what lists it: undoRunsQuery;
  // and a standalone chart's older runs under another ID: withLegacyChartRuns.)
  const latest =
    undos === deploys && !runsInsideOwner(place) && runs[0].workflowId === undos
      ? runs[0]
      : { workflowId: undos, memo: (await latestRun(client, undos))?.memo };
  const pick = async (run: Execution) => ({ run, left: await finishedRun(client, run) });
  let chosen: { run: Execution; left: unknown } | undefined;
  if (opts.runId) {
    const run = runs.find((r) => r.runId === opts.runId);
    if (!run)
      throw new RunRefused(`${opts.target} has no run ${opts.runId}; its latest: ${describeRuns(runs)}`);
    if (run.status === 'CONTINUED_AS_NEW')
      throw new RunRefused(
        `run ${run.runId} of ${opts.target} continued as new (a re-plan): the run it continued as carries its changes; undo that one (\`armadactl history ${opts.target}\`)`,
      );
    if (!isFinishedDeploy(run))
      throw new RunRefused(
        `run ${run.runId} of ${opts.target} (${run.type}, ${run.status.toLowerCase()}) is not a finished deploy: only a completed or failed deploy can be undone` +
          (run.status === 'RUNNING' ? `; stop a running one with \`armadactl rollback ${opts.target}\`` : ''),
      );
    chosen = await pick(run);
  } else {
    for await (const run of previousDeploys(runs, (r) => undoneRun(client, place, r))) {
      const found = await pick(run);
      if (
        place.kind === 'Deployer'
          ? deployerOutcomeOf(found.left)?.previous
          : (await undoable(client, place, run, found.left)).length
      ) {
        chosen = found;
        break;
      }
    }
    if (!chosen)
      throw new RunRefused(
        `no finished run of ${opts.target} changed anything that could be undone; its runs: ${describeRuns(runs)}`,
      );
  }
  const { run, left } = chosen;
  if (place.kind === 'Deployer') {
    const previous = deployerOutcomeOf(left)?.previous;
    if (!previous)
      throw new RunRefused(
        `run ${run.runId} of ${opts.target} was a first deploy (no version before it): nothing to go back to`,
      );
    const { name, namespace, spec } = await deployerRunOf(client, run);
    // The Deployer's plan of one, its rollout told the run it undoes (it ends RolledBack).
    const plan = deployerPlanOfOne({
      name,
      namespace,
      spec: deployerBackTo(spec, previous, opts.now ?? false),
      undoes: run.runId,
    });
    return requestUnder<DeployRunInput>(
      place,
      latest,
      'deployRun',
      { plan, mode: 'deploy' },
      `undo of run ${run.runId}: back to version ${previous}${opts.now ? ' at once' : ' through the canary steps'}`,
      opts.target,
    );
  }
  const changes = await undoable(client, place, run, left);
  if (!changes.length)
    throw new RunRefused(
      `run ${run.runId} of ${opts.target} kept no change of any release (it changed nothing, rolled itself back, or failed before it wrote): nothing to undo`,
    );
  const { kind, namespace, name } = place as ObjectPlace & { kind: UndoRun['kind'] };
  return requestUnder<UndoRun>(
    place,
    latest,
    'undoWorkflow',
    { kind, namespace, name, undoes: { workflowId: run.workflowId, runId: run.runId }, changes, by: opts.by },
    `undo of run ${run.runId}: ${changes.map(changedName).join(', ')}`,
    opts.target,
  );
}

/**
 * Whose failed run a retry of the object at `place` takes up: the manifest that lists it (a
 * group, or a chart of a listed group), the standalone group that lists it (a chart), else its own.
 */
export function retryPlace(place: ObjectPlace): ObjectPlace {
  const { kind, namespace, manifest, group } = place;
  if (kind !== 'ArmadaChartGroup' && kind !== 'ArmadaChart') return place;
  if (manifest) return { kind: 'ArmadaManifest', namespace, name: manifest };
  if (kind === 'ArmadaChart' && group) return { kind: 'ArmadaChartGroup', namespace, name: group };
  return place;
}

/** One of an object's runs as `--previous` sees it (Execution's fields it reads). */
export type PastRun = Pick<Execution, 'runId' | 'type' | 'status'>;

function isFinishedDeploy(run: PastRun): boolean {
  return DEPLOYS.has(run.type) && FINISHED.has(run.status);
}

/**
 * The deploys `rollback --previous` may undo, newest first (`runs` newest first): finished
 * deploys that no completed undo has taken back, so each `--previous` goes one deploy further
 * back (docs/how-to/operate-runs.md, "Undo a finished deploy"). An undo is a run of its own (`undoes` names the run it undid, undefined
 * for a deploy): never a deploy to undo itself, else a Deployer's undo would flip it forward again.
 * A run that continued as new is left out: the run it continued as carries its changes.
 */
export async function* previousDeploys<Run extends PastRun>(
  runs: readonly Run[],
  undoes: (run: Run) => Promise<string | undefined>,
): AsyncGenerator<Run> {
  const undone = new Set<string>();
  for (const run of runs) {
    const undid = await undoes(run);
    if (undid !== undefined) {
      if (run.status === 'COMPLETED') undone.add(undid);
    } else if (isFinishedDeploy(run) && !undone.has(run.runId)) yield run;
  }
}

/**
/**
 * The run an undo run undid (from its input) as far as it undid the object's change (an undo of
 * another object inside the run of what lists it: undidChangeOf); undefined for a deploy. Reads only
 * undo-shaped runs: an undo, a Deployer's run (an undo of it is a rollout back: `undoes`).
 */
async function undoneRun(client: Client, place: ObjectPlace, run: Execution): Promise<string | undefined> {
  if (run.type === 'undoWorkflow') {
    const undo = await inputOf<UndoRun>(client, run);
    return runsInsideOwner(place) && !undidChangeOf(place, undo) ? undefined : undo.undoes.runId;
  }
  if (place.kind === 'Deployer' && (run.type === 'deployerWorkflow' || run.type === 'deployRun'))
    return (await deployerRunOf(client, run)).undoes;
  return undefined;
}

/**
 * What a Deployer's run rolled out (its input): a `deployRun`'s plan of one, as its Deployer's
 * own run input, or a `deployerWorkflow`'s of an older build.
 */
async function deployerRunOf(client: Client, run: Execution): Promise<DeployerRun> {
  if (run.type === 'deployerWorkflow') return inputOf<DeployerRun>(client, run);
  const { plan } = await inputOf<DeployRunInput>(client, run);
  const deployer = plan.groups[0]?.deployers?.[0];
  if (plan.kind !== 'Deployer' || !deployer)
    throw new RunRefused(
      `run ${run.runId} (${run.workflowId}) is not a Deployer's run: it rolled out no Deployer of its own`,
    );
  return { name: deployer.name, namespace: plan.namespace, spec: deployer.spec, undoes: deployer.undoes };
}

/**
 * What a finished run changed and kept, of the object at `place` (listedChanges); a manifest's or
 * group's, with its Deployers (read from its input).
 */
async function undoable(
  client: Client,
  place: ObjectPlace,
  run: Execution,
  left: unknown,
): Promise<Change[]> {
  if (left === undefined) return [];
  const plan = await planOf(client, run);
  const changes = changesToUndo({ workflowType: run.type, outcome: left } as FinishedRun, plan);
  return runsInsideOwner(place) ? listedChanges(place, changes, plan) : changes;
}

async function planOf(client: Client, run: Execution): Promise<RunPlan | undefined> {
  if (MANIFEST_RUNS.has(run.type)) return (await inputOf<ManifestRun>(client, run)).plan;
  if (run.type !== 'groupWorkflow') return undefined;
  const { namespace, group } = await inputOf<GroupRun>(client, run);
  return { namespace, groups: [group] };
}

/**
 * The run that takes up the object's latest run, which failed, at the step that failed: a
 * manifest's or a group's charts that finished are left as they are and the gates it passed are
 * not asked again; a chart or a Deployer runs again. It deploys what the failed run deployed (its
 * input), not a spec changed since (the bridge starts a run for that itself). Pause and approvals
 * are not carried over.
 */
export async function retryRequest(client: Client, place: ObjectPlace, target: string): Promise<RunRequest> {
  const driver = retryPlace(place);
  if (driver !== place) {
    // Its run is a child of the driver's: the driver's saga, its later groups and its status
    // belong to that run, so the driver's failed run is taken up, from this object's step.
    const driverTarget = `${kinds[driver.kind].shortNames[0]}/${driver.name}`;
    const req = await retryRequest(client, driver, driverTarget);
    req.options.staticSummary += ` (asked on ${target})`;
    return req;
  }
  // A drift repair runs under a chart's release lock too: the run to take up is the deploy before it.
  const deploys = deployWorkflowId(place);
  const runs = await executionsOf(client, deploys, withLegacyChartRuns(place, `WorkflowId = '${deploys}'`));
  const latest = runs.find((r) => r.type !== 'driftWorkflow') ?? runs[0];
  const left =
    DEPLOYS.has(latest.type) && FINISHED.has(latest.status) ? await finishedRun(client, latest) : undefined;
  const groupFailed = latest.type === 'groupWorkflow' && (left as GroupOutcome | undefined)?.failed.length;
  if (!DEPLOYS.has(latest.type) || (latest.status !== 'FAILED' && !groupFailed))
    throw new RunRefused(
      `the latest run of ${target}, ${latest.runId} (${latest.type}), is ${latest.status.toLowerCase()}${latest.status === 'COMPLETED' ? ' without a failure' : ''}: nothing to retry`,
    );
  const input: Record<string, unknown> = {
    ...(await inputOf<Record<string, unknown>>(client, latest)),
    carried: undefined,
  };
  const summary = `retry of run ${latest.runId}`;
  const resumed = (groups: GroupOutcome[], rolledBack: boolean, earlier?: Resume) => {
    const resume = resumeOf(latest.runId, groups, rolledBack, earlier);
    if ('refused' in resume) throw new RunRefused(resume.refused);
    return resume;
  };
  if (MANIFEST_RUNS.has(latest.type)) {
    const outcome = left as ManifestOutcome | undefined;
    if (!outcome)
      throw new RunRefused(
        `run ${latest.runId} of ${target} left no outcome (it was cancelled or terminated): apply it again`,
      );
    const resume = resumed(
      outcome.groups,
      outcome.state === 'rolled-back',
      input.resume as Resume | undefined,
    );
    return requestUnder(place, latest, 'deployRun', { ...input, resume }, summary, target);
  }
  // A group's or Deployer's run of an older build is taken up by deployRun over its plan of one
  // (decision 6: the old types run on the old build only); a group's `finished` becomes a Resume.
  if (latest.type === 'groupWorkflow') {
    const outcome = left as GroupOutcome;
    const run = input as unknown as GroupRun;
    const earlier = run.finished && { retryOf: '', finished: { [outcome.group]: run.finished } };
    const resume = resumed([outcome], outcome.rolledBack !== undefined, earlier);
    const retry: DeployRunInput = { plan: groupPlanOfOne(run), mode: run.mode ?? 'deploy', resume };
    return requestUnder(place, latest, 'deployRun', retry, summary, target);
  }
  if (latest.type === 'deployerWorkflow') {
    const run = input as unknown as DeployerRun;
    const retry: DeployRunInput = { plan: deployerPlanOfOne(run), mode: run.mode ?? 'deploy' };
    return requestUnder(place, latest, 'deployRun', retry, summary, target);
  }
  if (latest.type === 'chartWorkflow') {
    // A standalone chart's run of an older build: taken up by its plan of one, under its own ID.
    const own = { workflowId: deploys, memo: latest.memo };
    const retry = legacyChartRetry(input as unknown as ChartRun);
    return requestUnder(place, own, 'deployRun', retry, summary, target);
  }
  return requestUnder(place, latest, latest.type, input, summary, target);
}
