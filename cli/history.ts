import type { Client, WorkflowExecutionInfo } from '@temporalio/client';
import { setTimeout as sleep } from 'node:timers/promises';
import { progressQuery } from '../workflows/messages';
import { formatSeconds } from '../core/plan/canary';
import type { RunMemo } from '../core/plan/specs';
import {
  ArmadaKind,
  ArmadaName,
  ArmadaNamespace,
  ArmadaObjects,
  ArmadaPhase,
} from '../workflows/search-attributes';
import { objectKey } from '../core/plan/run-objects';
import type { Target } from '../runs/targets';

/** One past (or running) run of an object, as `history --output json` prints it; absent values are null. */
export interface RunRecord {
  workflowId: string;
  runId: string;
  /** The workflow type, e.g. `manifestWorkflow`, `canaryWorkflow`. */
  type: string;
  /** Temporal's status of the run: RUNNING, COMPLETED, FAILED, CONTINUED_AS_NEW, ... */
  status: string;
  /** The `ArmadaPhase` search attribute the run left, e.g. `Deployed`, `RolledBack`. */
  phase: string | null;
  /** The two in one word, see outcomeOf. */
  outcome: string;
  startTime: string;
  closeTime: string | null;
  /** Until it closed, or until now while it runs. */
  durationSeconds: number;
  /** Which specs the run deployed (its memo), e.g. `ArmadaManifest/demo@3`. */
  specs: string | null;
  mode: string | null;
  /**
   * The gates the run passed and who approved each, as the run recorded them (its progress):
   * the user the API server authenticated when the approval came through the cluster. Null
   * when the run did not answer (no worker within QUERY_TIMEOUT_MS).
   */
  approvals: { gate: string; by: string | null }[] | null;
}

/** How long history waits for a run to answer its progress query (closed runs need a worker). */
const QUERY_TIMEOUT_MS = 2000;

/**
 * The visibility query for an object's runs. A manifest, a group and a Deployer each run under
 * one workflow ID (re-plans continue it as new runs under the same ID). An ArmadaChart has two:
 * its own run `ArmadaChart:<namespace>/<name>` when it runs standalone (an older build's chart
 * workflow `helm:<namespace>/<release>`), and its canary `ArmadaChart:<namespace>/<name>/canary`
 * (also when a manifest deploys it); all carry the ArmadaChart in their search attributes, so
 * its history finds them without the release.
 * A chart, group or Deployer a manifest lists is deployed inside the manifest's run (deployRun,
 * no child of its own): those runs list it in their `ArmadaObjects`.
 */
export function historyQuery(t: Target): string {
  const byId = `WorkflowId = '${t.workflowId}'`;
  if (t.kind === 'ArmadaManifest') return byId;
  const inRuns = `${ArmadaObjects.name} = '${objectKey(t)}'`;
  if (t.kind !== 'ArmadaChart') return `${byId} OR ${inRuns}`;
  return `${byId} OR (${ArmadaKind.name} = 'ArmadaChart' AND ${ArmadaName.name} = '${t.name}' AND ${ArmadaNamespace.name} = '${t.namespace}') OR ${inRuns}`;
}

/** `RolledBack` → `rolled-back`. */
const kebab = (s: string) =>
  s
    .replace(/([a-z])([A-Z])/g, '$1-$2')
    .replace(/_/g, '-')
    .toLowerCase();

/**
 * Phases a run ends in (the manifest's and the canary's; a Deployer's first deploy, `Completed`).
 * A run that completed in another phase left none of its own (a standalone chart keeps the
 * `Pending` it started with).
 */
const finalPhases = new Set(['Deployed', 'Uninstalled', 'RolledBack', 'Promoted', 'Completed']);

/**
 * A run's outcome from Temporal's status and the phase it left: a completed run ended in its
 * phase (`deployed`, `rolled-back`, `promoted`, ...), a continued-as-new one was `re-planned`,
 * anything else is its status (`running`, `failed`, `cancelled`, `terminated`, `timed-out`).
 */
export function outcomeOf(status: string, phase: string | null): string {
  if (status === 'CONTINUED_AS_NEW') return 're-planned';
  if (status === 'COMPLETED') return phase && finalPhases.has(phase) ? kebab(phase) : 'completed';
  return kebab(status);
}

/** A listed execution as a record; `now` stands in for the end of a run still going. */
export function runRecord(info: WorkflowExecutionInfo, now = new Date()): RunRecord {
  const memo = (info.memo ?? {}) as Partial<RunMemo>;
  const phase = info.typedSearchAttributes.get(ArmadaPhase) ?? null;
  const status = info.status.name;
  return {
    workflowId: info.workflowId,
    runId: info.runId,
    type: info.type,
    status,
    phase,
    outcome: outcomeOf(status, phase),
    startTime: info.startTime.toISOString(),
    closeTime: info.closeTime?.toISOString() ?? null,
    durationSeconds: ((info.closeTime ?? now).getTime() - info.startTime.getTime()) / 1000,
    specs: memo.specs ?? null,
    mode: memo.mode ?? null,
    approvals: null,
  };
}

/** Who approved which gate of one run, from its progress query; null when it does not answer in time. */
async function approvalsOf(client: Client, record: RunRecord): Promise<RunRecord['approvals']> {
  const asked = client.workflow
    .getHandle(record.workflowId, record.runId)
    .query(progressQuery)
    .then((p) => (p.approvals ?? []).map((a) => ({ gate: a.gate, by: a.by ?? null })))
    .catch(() => null);
  return Promise.race([asked, sleep(QUERY_TIMEOUT_MS, null)]);
}

/** The object's runs, newest first, at most `limit`. */
export async function historyOf(client: Client, target: Target, limit: number): Promise<RunRecord[]> {
  const records: RunRecord[] = [];
  // Visibility lists closed runs by close time; the newest *started* come from sorting them all.
  for await (const info of client.workflow.list({ query: historyQuery(target) })) {
    records.push(runRecord(info));
    if (records.length >= 1000) break;
  }
  records.sort((a, b) => b.startTime.localeCompare(a.startTime));
  const newest = records.slice(0, limit);
  const approvals = await Promise.all(newest.map((r) => approvalsOf(client, r)));
  return newest.map((r, i) => ({ ...r, approvals: approvals[i] }));
}

/** `3.2s` under ten seconds, whole seconds above: `42s`, `2m5s`, `1h3s`. */
const duration = (seconds: number) =>
  seconds < 10 ? `${Math.round(seconds * 10) / 10}s` : formatSeconds(Math.round(seconds));

/** `alice (before group apps)`: who approved which gate, `-` for none. */
const approvers = (r: RunRecord) =>
  r.approvals?.length ? r.approvals.map((a) => `${a.by ?? 'unknown'} (${a.gate})`).join(', ') : '-';

/**
 * Runs as a table, newest first: start (UTC), outcome, duration, run ID, the workflow when the
 * runs come from more than one (an ArmadaChart's release and canary), who approved their gates
 * when any run had one approved, and the specs last (a manifest's specs name every object it
 * deploys: the long column).
 */
export function formatHistory(records: readonly RunRecord[]): string[] {
  const workflows = new Set(records.map((r) => r.workflowId)).size > 1;
  const approved = records.some((r) => r.approvals?.length);
  const rows = [
    [
      'started (UTC)',
      'outcome',
      'duration',
      'run',
      ...(workflows ? ['workflow'] : []),
      ...(approved ? ['approved by'] : []),
      'specs',
    ],
    ...records.map((r) => [
      r.startTime.slice(0, 19).replace('T', ' '),
      r.outcome,
      `${duration(r.durationSeconds)}${r.closeTime ? '' : ' so far'}`,
      r.runId,
      ...(workflows ? [r.workflowId] : []),
      ...(approved ? [approvers(r)] : []),
      r.specs ?? '-',
    ]),
  ];
  const widths = rows[0].map((_, i) => Math.max(...rows.map((row) => row[i].length)));
  return rows.map((row) =>
    row
      .map((cell, i) => cell.padEnd(widths[i]))
      .join('  ')
      .trimEnd(),
  );
}
