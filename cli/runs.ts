import {
  WorkflowExecutionAlreadyStartedError,
  WorkflowNotFoundError,
  type Client,
  type WorkflowStartOptions,
} from '@temporalio/client';
import { TypedSearchAttributes } from '@temporalio/common';
import { setTimeout as sleep } from 'node:timers/promises';
import type { ChartRun } from '../workflows/chart';
import type { DeployerRun } from '../workflows/deployer';
import { describeDrift, type DriftRun } from '../workflows/plan/drift';
import type { GroupRun } from '../workflows/group';
import type { ManifestRun } from '../workflows/manifest';
import type { RunMemo } from '../workflows/plan/specs';
import {
  approveSignal,
  pauseSignal,
  progressQuery,
  promoteSignal,
  resumeSignal,
  rollbackSignal,
  type CanaryProgress,
  type Progress,
  type Request,
} from '../workflows/messages';
import { formatSeconds } from '../workflows/plan/canary';
import {
  planGroup,
  planManifest,
  type GroupDocuments,
  type ManifestDocuments,
} from '../workflows/plan/manifest';
import {
  canaryWorkflowId,
  driftWorkflowId,
  objectWorkflowId,
  releaseWorkflowId,
} from '../workflows/plan/names';
import { kinds, type KindName } from '../api/kinds';
import type { ChartDocument, DeployerDocument } from './documents';
import { ArmadaKind, ArmadaName, ArmadaNamespace, ArmadaPhase } from '../workflows/search-attributes';

/** The workflow of a manifest: its ID is its lock, so one manifest has one run at a time. */
export function manifestWorkflowId(namespace: string, name: string): string {
  return objectWorkflowId('ArmadaManifest', namespace, name);
}

/** An object a command line names, and the workflow that runs it. */
export interface Target {
  kind: KindName;
  namespace: string;
  name: string;
  /** The workflow steered by status, watch and the control commands (an ArmadaChart's canary). */
  workflowId: string;
}

/**
 * The object a command line names: `NAME` or `amf/NAME` (an ArmadaManifest), `dpl/NAME` (a
 * Deployer), `act/NAME` (an ArmadaChart, steered through its canary), `acg/NAME` (a group no
 * manifest lists; a manifest's groups are steered through the manifest). Kinds go by name,
 * plural, singular or short name, as kubectl takes them.
 */
export function resolveTarget(target: string, namespace: string): Target {
  const slash = target.indexOf('/');
  if (slash < 0)
    return {
      kind: 'ArmadaManifest',
      namespace,
      name: target,
      workflowId: manifestWorkflowId(namespace, target),
    };
  const [kindName, name] = [target.slice(0, slash).toLowerCase(), target.slice(slash + 1)];
  const kind = (Object.keys(kinds) as KindName[]).find((k) => {
    const names = kinds[k];
    return [k.toLowerCase(), names.plural, names.singular, ...names.shortNames].includes(kindName);
  });
  if (kind === undefined)
    throw new Error(
      `unknown kind "${target.slice(0, slash)}" in ${target}; use amf/NAME, acg/NAME, act/NAME or dpl/NAME`,
    );
  const workflowId =
    kind === 'ArmadaChart' ? canaryWorkflowId(namespace, name) : objectWorkflowId(kind, namespace, name);
  return { kind, namespace, name, workflowId };
}

/** The workflow ID of the run a command line names (see resolveTarget). */
export function targetWorkflowId(target: string, namespace: string): string {
  return resolveTarget(target, namespace).workflowId;
}

/** The error for a target that has never run, saying how to start it. */
export function noRun(what: string, cause?: unknown): Error {
  return new Error(`no run of ${what}; start one with \`armadactl apply\``, { cause });
}

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
      throw new Error(
        `${req.what} already has a run in progress (workflow ${req.workflowId}); ` +
          `follow it with \`armadactl status ${req.target}\` or stop it with \`armadactl rollback ${req.target}\``,
        { cause: err },
      );
    }
    throw err;
  }
  return req.workflowId;
}

function searchAttributes(kind: KindName, namespace: string, name: string): TypedSearchAttributes {
  return new TypedSearchAttributes([
    { key: ArmadaKind, value: kind },
    { key: ArmadaName, value: name },
    { key: ArmadaNamespace, value: namespace },
    { key: ArmadaPhase, value: 'Pending' },
  ]);
}

type Mode = RunMemo['mode'];

/** A manifest's run. Throws PlanError when the documents do not resolve. */
export function manifestRun(
  docs: ManifestDocuments,
  mode: Mode = 'deploy',
  specs?: string,
): RunRequest<ManifestRun> {
  const plan = planManifest(docs);
  const charts = plan.groups.reduce((n, g) => n + g.charts.length, 0);
  return {
    workflowType: 'manifestWorkflow',
    workflowId: manifestWorkflowId(plan.namespace, plan.manifest),
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

/** The run of a group no manifest lists. Throws PlanError when a chart it lists is missing. */
export function groupRun(docs: GroupDocuments, mode: Mode = 'deploy', specs?: string): RunRequest<GroupRun> {
  const group = planGroup(docs);
  const { namespace, name } = docs;
  return {
    workflowType: 'groupWorkflow',
    workflowId: objectWorkflowId('ArmadaChartGroup', namespace, name),
    input: { group, namespace, mode },
    memo: { specs, mode },
    options: {
      staticSummary: `ArmadaChartGroup ${namespace}/${name}: ${group.charts.length} charts, ${group.sequenced ? 'sequenced' : 'parallel'}`,
      typedSearchAttributes: searchAttributes('ArmadaChartGroup', namespace, name),
    },
    what: `group ${namespace}/${name}`,
    target: `acg/${name}`,
  };
}

/**
 * A standalone ArmadaChart's run (a chart no group lists) under its release lock;
 * `target_state: uninstalled` uninstalls the release.
 */
export function chartRun(
  doc: ChartDocument,
  mode: Mode = doc.spec.target_state === 'uninstalled' ? 'uninstall' : 'deploy',
  specs?: string,
): RunRequest<ChartRun> {
  const { spec } = doc;
  return {
    workflowType: 'chartWorkflow',
    workflowId: releaseWorkflowId(spec.namespace, spec.release),
    input: {
      chart: doc.name,
      release: spec.release,
      namespace: spec.namespace,
      spec,
      mode,
      resourceNamespace: doc.namespace,
    },
    memo: { specs, mode },
    options: {
      staticSummary: `ArmadaChart ${doc.namespace}/${doc.name}: ${mode} ${spec.namespace}/${spec.release}`,
      typedSearchAttributes: searchAttributes('ArmadaChart', doc.namespace, doc.name),
    },
    what: `release ${spec.namespace}/${spec.release}`,
    target: `act/${doc.name}`,
  };
}

/** A Deployer's rollout. */
export function deployerRun(
  doc: DeployerDocument,
  mode: Mode = 'deploy',
  specs?: string,
): RunRequest<DeployerRun> {
  const { deployment } = doc.spec;
  return {
    workflowType: 'deployerWorkflow',
    workflowId: objectWorkflowId('Deployer', doc.namespace, doc.name),
    input: { name: doc.name, namespace: doc.namespace, spec: doc.spec, mode },
    memo: { specs, mode },
    options: {
      staticSummary: `Deployer ${doc.namespace}/${doc.name}: ${deployment.namespace}/${deployment.name} → ${deployment.version} (${deployment.replicas} replicas)`,
      typedSearchAttributes: searchAttributes('Deployer', doc.namespace, doc.name),
    },
    what: `Deployer ${doc.namespace}/${doc.name}`,
    target: `dpl/${doc.name}`,
  };
}

/** The progress of a run (a manifest's or a canary's), read by the query; a clear error when there is no such run. */
export async function progressOf(client: Client, workflowId: string): Promise<AnyProgress> {
  try {
    return await client.workflow.getHandle(workflowId).query(progressQuery);
  } catch (err) {
    if (err instanceof WorkflowNotFoundError) throw noRun(workflowId, err);
    throw err;
  }
}

/** The latest run of a workflow ID and its progress, as `status --output json` prints it. */
export interface RunStatus {
  workflowId: string;
  runId: string;
  /** Temporal's status of the run: RUNNING, COMPLETED, FAILED, CONTINUED_AS_NEW, ... */
  status: string;
  specs: string | null;
  progress: AnyProgress;
}

/** The latest run of a workflow ID (describe) with its progress (query). */
export async function statusOf(client: Client, workflowId: string): Promise<RunStatus> {
  let description;
  try {
    description = await client.workflow.getHandle(workflowId).describe();
  } catch (err) {
    if (err instanceof WorkflowNotFoundError) throw noRun(workflowId, err);
    throw err;
  }
  const { runId, status, memo } = description;
  const progress = await progressOf(client, workflowId);
  return {
    workflowId,
    runId,
    status: status.name,
    specs: (memo as RunMemo | undefined)?.specs ?? null,
    progress,
  };
}

const signals = {
  pause: pauseSignal,
  resume: resumeSignal,
  approve: approveSignal,
  promote: promoteSignal,
  rollback: rollbackSignal,
};
export type ControlCommand = keyof typeof signals;

/** Sends pause/resume/approve/promote/rollback to a running manifest or canary. */
export async function control(
  client: Client,
  workflowId: string,
  command: ControlCommand,
  req: Request,
): Promise<void> {
  const handle = client.workflow.getHandle(workflowId);
  let status;
  try {
    status = (await handle.describe()).status.name;
  } catch (err) {
    if (err instanceof WorkflowNotFoundError)
      throw new Error(`no run of ${workflowId}; nothing to ${command}`, { cause: err });
    throw err;
  }
  if (status !== 'RUNNING')
    throw new Error(
      `the run of ${workflowId} is ${status.toLowerCase()}, not running; nothing to ${command}`,
    );
  await handle.signal(signals[command], req);
}

/** What the `progress` query answers: a manifest's groups and charts, or a canary's steps. */
export type AnyProgress = Progress | CanaryProgress;

/** Progress as plain lines, whichever kind of run answered. */
export function formatProgress(p: AnyProgress): string[] {
  return 'kind' in p && p.kind === 'canary' ? formatCanary(p) : formatManifest(p as Progress);
}

/** `06:52:01` (UTC) of an RFC 3339 time, or blank. */
const clock = (iso?: string) => (iso ? iso.slice(11, 19) : '');

/** A canary: its phase and step, then one line per step with its split and times (UTC). */
export function formatCanary(p: CanaryProgress): string[] {
  const paused = p.paused
    ? ` — paused since ${p.paused.since}${p.paused.by ? ` by ${p.paused.by}` : ''}${p.paused.reason ? ` (${p.paused.reason})` : ''}${p.paused.remainingSeconds ? `, ${formatSeconds(p.paused.remainingSeconds)} of the hold left` : ''}`
    : '';
  const waiting =
    !p.paused && p.waitingOn
      ? ` (waiting on ${p.waitingOn}${p.nextStepAt ? ` until ${p.nextStepAt}` : ''})`
      : '';
  const lines = [`${p.target}: ${p.phase}, step ${p.step}/${p.steps} at ${p.percent} %${waiting}${paused}`];
  if (p.reason) lines.push(`  ${p.reason}`);
  lines.push(
    `  ${'step'.padEnd(6)}${'percent'.padEnd(9)}${'new/old'.padEnd(10)}${'hold'.padEnd(10)}${'started'.padEnd(10)}${'ready'.padEnd(10)}ended`,
  );
  for (const s of p.history) {
    const hold = s.hold === undefined ? '-' : s.hold === 'approval' ? 'approval' : formatSeconds(s.hold);
    lines.push(
      `${s.step === p.step ? '▶ ' : '  '}${String(s.step).padEnd(6)}${`${s.percent} %`.padEnd(9)}${`${s.canary}/${s.stable}`.padEnd(10)}${hold.padEnd(10)}${clock(s.startedAt).padEnd(10)}${clock(s.readyAt).padEnd(10)}${s.endedAt ? `${clock(s.endedAt)} ${s.ended}` : ''}`.trimEnd(),
    );
  }
  return lines;
}

/** A manifest: one line per group, one per chart under it. */
function formatManifest(p: Progress): string[] {
  const lines = [
    `phase: ${p.phase}${p.waitingOn ? ` (waiting on ${p.waitingOn})` : ''}${p.paused ? ` — paused since ${p.paused.since}${p.paused.by ? ` by ${p.paused.by}` : ''}` : ''}`,
  ];
  for (const g of p.groups) {
    lines.push(`group ${g.name} (${g.sequenced ? 'sequenced' : 'parallel'}): ${g.state}`);
    for (const c of g.charts) {
      const rev = c.revision ? ` rev ${c.revision}` : '';
      lines.push(
        `  ${c.chart.padEnd(20)} ${`${c.namespace}/${c.release}`.padEnd(32)} ${c.state}${rev}${c.error ? `: ${c.error.split('\n')[0]}` : ''}`,
      );
    }
  }
  return lines;
}

/**
 * Follows a run until it ends, printing each change of its progress; returns the outcome, or
 * throws the run's failure.
 */
export async function follow<Outcome>(
  client: Client,
  workflowId: string,
  print: (line: string) => void,
): Promise<Outcome> {
  const handle = client.workflow.getHandle(workflowId);
  const result = handle.result() as Promise<Outcome>;
  let ended = false;
  const settled = result.then(
    () => (ended = true),
    () => (ended = true),
  );
  let last = '';
  while (!ended) {
    const text = await handle
      .query(progressQuery)
      .then((p) => formatProgress(p).join('\n'))
      .catch(() => last);
    if (text !== last) {
      print(text);
      last = text;
    }
    await Promise.race([settled, sleep(1000)]);
  }
  return result;
}

/** A drift run of a release (see workflows/drift.ts), listed under its ArmadaChart. */
export function driftRun(input: DriftRun): RunRequest<DriftRun> {
  const { namespace, release, chart } = input;
  return {
    workflowType: 'driftWorkflow',
    workflowId: driftWorkflowId(namespace, release),
    input,
    memo: { mode: 'deploy' },
    options: {
      staticSummary: `drift of ${namespace}/${release} (${input.policy}): ${describeDrift(input.objects)}`,
      typedSearchAttributes: searchAttributes('ArmadaChart', chart.namespace, chart.name),
    },
    what: `release ${namespace}/${release}`,
    target: `act/${chart.name}`,
  };
}
