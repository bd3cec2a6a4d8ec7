import {
  WorkflowExecutionAlreadyStartedError,
  type Client,
  type WorkflowStartOptions,
} from '@temporalio/client';
import { TypedSearchAttributes } from '@temporalio/common';
import type { ArmadaChartSpec } from '../api/chart';
import type { DeployerSpec } from '../api/deployer';
import type { KindName } from '../api/kinds';
import type { ChartRun } from '../core/contracts/workflows';
import type { DeployRunInput } from '../core/contracts/run';
import { describeDrift, type DriftRun } from '../core/plan/drift';
import { resolveDependencies } from '../core/plan/dependencies';
import {
  PlanError,
  planGroup,
  planManifest,
  type GroupDocuments,
  type ManifestDocuments,
} from '../core/plan/manifest';
import { objectWorkflowId } from '../core/plan/names';
import { chartPlanOfOne, deployerPlanOfOne, groupPlanOfOne } from '../core/plan/plans-of-one';
import { standaloneChartWorkflowId } from '../core/plan/release-lock';
import type { RunMemo } from '../core/plan/specs';
import { ArmadaKind, ArmadaName, ArmadaNamespace, ArmadaPhase } from '../workflows/search-attributes';

/** An object that runs on its own (one release, or one Deployer), as a file or the cluster holds it. */
export type StandaloneDocument =
  | { kind: 'ArmadaChart'; name: string; namespace: string; spec: ArmadaChartSpec }
  | { kind: 'Deployer'; name: string; namespace: string; spec: DeployerSpec };
export type DeployerDocument = Extract<StandaloneDocument, { kind: 'Deployer' }>;
export type ChartDocument = Extract<StandaloneDocument, { kind: 'ArmadaChart' }>;

/**
 * Everything needed to start one object's run: the bridge starts it, or sends its input to the
 * running workflow as a re-plan; armadactl starts it.
 */
export type { RunMemo };

export interface RunRequest<Input = unknown> {
  workflowType: string;
  workflowId: string;
  input: Input;
  memo: RunMemo;
  options: Omit<WorkflowStartOptions, 'workflowId' | 'args' | 'memo' | 'taskQueue'>;
  /** What it deploys and how a person names it, for the refusal when a run is in progress. */
  what: string;
  target: string;
}

/** A run could not start: another run of the object holds its workflow ID. */
export class RunInProgress extends Error {}

/** Starts a run under its ID; refuses, naming the run and what to do, when one is running. */
export async function startRun(client: Client, taskQueue: string, req: RunRequest): Promise<string> {
  try {
    await client.workflow.start(req.workflowType, {
      ...req.options,
      taskQueue,
      workflowId: req.workflowId,
      args: [req.input],
      memo: { ...req.memo },
    });
  } catch (err) {
    if (err instanceof WorkflowExecutionAlreadyStartedError) {
      throw new RunInProgress(
        `${req.what} already has a run in progress: ${await runningOf(client, req.workflowId)}; ` +
          `follow it with \`armadactl status ${req.target}\` or stop it with \`armadactl rollback ${req.target}\``,
        { cause: err },
      );
    }
    throw err;
  }
  return req.workflowId;
}

/**
 * The run that holds a workflow ID, as a refusal names it: its type, run ID and summary (a drift
 * repair or an undo holds its owner's ID too, core/plan/release-lock.ts). The ID alone when
 * Temporal cannot say.
 */
async function runningOf(client: Client, workflowId: string): Promise<string> {
  try {
    const run = await client.workflow.getHandle(workflowId).describe();
    const summary = await run.staticSummary();
    return `workflow ${workflowId}, ${run.type} run ${run.runId}${summary ? ` (${summary})` : ''}`;
  } catch {
    return `workflow ${workflowId}`;
  }
}

/** The search attributes of an object's run, as the UI and `armadactl history` find it. */
export function searchAttributes(kind: KindName, namespace: string, name: string): TypedSearchAttributes {
  return new TypedSearchAttributes([
    { key: ArmadaKind, value: kind },
    { key: ArmadaName, value: name },
    { key: ArmadaNamespace, value: namespace },
    { key: ArmadaPhase, value: 'Pending' },
  ]);
}

type Mode = RunMemo['mode'];

/**
 * A manifest's run: the one-workflow run `deployRun` (docs/design/one-workflow.md) under the
 * manifest's workflow ID. Runs started as `manifestWorkflow` by an older build end there
 * (decision 6). Throws PlanError when the documents do not resolve.
 */
export function manifestRun(
  docs: ManifestDocuments,
  mode: Mode = 'deploy',
  specs?: string,
): RunRequest<DeployRunInput> {
  const plan = planManifest(docs);
  const charts = plan.groups.reduce((n, g) => n + g.charts.length, 0);
  return {
    workflowType: 'deployRun',
    workflowId: objectWorkflowId('ArmadaManifest', plan.namespace, plan.manifest),
    input: { plan, mode },
    memo: { specs, mode },
    options: {
      staticSummary: `ArmadaManifest ${plan.namespace}/${plan.manifest}: ${plan.groups.length} groups × ${charts} charts`,
      typedSearchAttributes: searchAttributes('ArmadaManifest', plan.namespace, plan.manifest),
    },
    what: `manifest ${plan.namespace}/${plan.manifest}`,
    target: plan.manifest,
  };
}

/**
 * The run of a group no manifest lists: `deployRun` over its plan of one (groupPlanOfOne), under
 * the group's workflow ID. Throws PlanError when a chart it lists is missing.
 */
export function groupRun(
  docs: GroupDocuments,
  mode: Mode = 'deploy',
  specs?: string,
): RunRequest<DeployRunInput> {
  const group = planGroup(docs);
  const { namespace, name } = docs;
  return {
    workflowType: 'deployRun',
    workflowId: objectWorkflowId('ArmadaChartGroup', namespace, name),
    input: { plan: groupPlanOfOne({ group, namespace, mode }), mode },
    memo: { specs, mode },
    options: {
      staticSummary: `ArmadaChartGroup ${namespace}/${name}: ${group.charts.length} charts${group.deployers ? `, ${group.deployers.length} Deployers` : ''}, ${group.sequenced ? 'sequenced' : 'parallel'}`,
      typedSearchAttributes: searchAttributes('ArmadaChartGroup', namespace, name),
    },
    what: `group ${namespace}/${name}`,
    target: `acg/${name}`,
  };
}

/**
 * A standalone ArmadaChart's run (a chart no group lists): the one-workflow run `deployRun` with
 * the plan of one chart (chartPlanOfOne) under the chart's workflow ID, its release lock
 * (`ArmadaChart:<ns>/<name>`); `target_state: uninstalled` uninstalls the release. Runs started
 * as `chartWorkflow` under `helm:<ns>/<release>` by an older build end there
 * (core/plan/legacy-chart-runs.ts). `charts`: the charts of its namespace its `dependencies` may
 * name. Throws PlanError when one of them does not resolve.
 */
export function chartRun(
  doc: ChartDocument,
  mode: Mode = doc.spec.target_state === 'uninstalled' ? 'uninstall' : 'deploy',
  specs?: string,
  charts: Readonly<Record<string, ArmadaChartSpec>> = {},
): RunRequest<DeployRunInput> {
  const { spec } = doc;
  const plan = chartPlanOfOne(chartOfOne(doc, mode, charts));
  return {
    workflowType: 'deployRun',
    workflowId: standaloneChartWorkflowId(doc),
    input: { plan, mode },
    memo: { specs, mode },
    options: {
      staticSummary: `ArmadaChart ${doc.namespace}/${doc.name}: ${mode} ${spec.namespace}/${spec.release}`,
      typedSearchAttributes: searchAttributes('ArmadaChart', doc.namespace, doc.name),
    },
    what: `release ${spec.namespace}/${spec.release}`,
    target: `act/${doc.name}`,
  };
}

/**
 * A standalone chart as the plan of one takes it (and chartWorkflow took it): the chart, its
 * release and its resolved `dependencies`. Throws PlanError when one of them does not resolve.
 */
export function chartOfOne(
  doc: ChartDocument,
  mode: Mode,
  charts: Readonly<Record<string, ArmadaChartSpec>> = {},
): ChartRun {
  const { spec } = doc;
  const { dependencies, problems } = resolveDependencies(doc.name, { ...charts, [doc.name]: spec });
  if (problems.length) throw new PlanError(problems);
  return {
    chart: doc.name,
    release: spec.release,
    namespace: spec.namespace,
    spec,
    mode,
    resourceNamespace: doc.namespace,
    ...(dependencies && { dependencies }),
  };
}

/**
 * A Deployer's run: `deployRun` over its plan of one (deployerPlanOfOne) under the Deployer's
 * workflow ID; its rollout is the run's child `Deployer:<ns>/<name>/rollout`.
 */
export function deployerRun(
  doc: DeployerDocument,
  mode: Mode = 'deploy',
  specs?: string,
): RunRequest<DeployRunInput> {
  const { deployment } = doc.spec;
  return {
    workflowType: 'deployRun',
    workflowId: objectWorkflowId('Deployer', doc.namespace, doc.name),
    input: {
      plan: deployerPlanOfOne({ name: doc.name, namespace: doc.namespace, spec: doc.spec, mode }),
      mode,
    },
    memo: { specs, mode },
    options: {
      staticSummary: `Deployer ${doc.namespace}/${doc.name}: ${deployment.namespace}/${deployment.name} → ${deployment.version} (${deployment.replicas} replicas)`,
      typedSearchAttributes: searchAttributes('Deployer', doc.namespace, doc.name),
    },
    what: `Deployer ${doc.namespace}/${doc.name}`,
    target: `dpl/${doc.name}`,
  };
}

/**
 * A drift run of a release (see workflows/drift.ts), listed under its ArmadaChart, under the
 * release's lock: `workflowId`, its owner's (core/plan/release-lock.ts). `memo`: the memo of the
 * owner's latest run, kept so that the run a repair follows still tells the bridge which specs
 * the owner runs.
 */
export function driftRun(
  input: DriftRun,
  workflowId: string,
  memo: RunMemo = { mode: 'deploy' },
): RunRequest<DriftRun> {
  const { namespace, release, chart } = input;
  return {
    workflowType: 'driftWorkflow',
    workflowId,
    input,
    memo,
    options: {
      staticSummary: `drift of ${namespace}/${release} (${input.policy}): ${describeDrift(input.objects)}`,
      typedSearchAttributes: searchAttributes('ArmadaChart', chart.namespace, chart.name),
    },
    what: `release ${namespace}/${release}`,
    target: `act/${chart.name}`,
  };
}
