import type { Client, WorkflowExecutionDescription } from '@temporalio/client';
import type { RunState } from '../core/bridge/decide-run';
import type { ReleaseRun } from '../core/bridge/decide-leftover';
import { legacyRunCounts } from '../core/bridge/legacy-chart-run';
import { releaseWorkflowId } from '../core/plan/names';
import { standaloneChartWorkflowId } from '../core/plan/release-lock';
import type { RunMemo } from '../core/plan/specs';
import { describeLatest, runStateOf } from '../runs/control';
import { ArmadaKind, ArmadaName, ArmadaNamespace } from '../workflows/search-attributes';
import type { ObjectView } from './view';

/**
 * The latest run of an object's workflow ID as the bridge decides by it: for a standalone
 * chart's own ID (`ArmadaChart:<ns>/<name>`) with no run yet, the latest run under its release's
 * old ID (`helm:<ns>/<release>`) when it counts (core/bridge/legacy-chart-run.ts). `workflowId`:
 * the ID the run returned holds, to follow or cancel.
 */
export async function latestRunOf(
  client: Client,
  view: ObjectView,
  workflowId: string,
): Promise<{ workflowId: string; latest: RunState | null }> {
  const description = await describeLatest(client, workflowId);
  if (description) return { workflowId, latest: runStateOf(description) };
  const legacyId = legacyChartWorkflowId(view, workflowId);
  const legacy = legacyId === undefined ? null : await describeLatest(client, legacyId);
  if (legacyId === undefined || !legacy || !legacyRunCounts(view, releaseRunOf(legacy)))
    return { workflowId, latest: null };
  return { workflowId: legacyId, latest: runStateOf(legacy) };
}

/**
 * The old ID of a standalone chart's runs (its release's chart workflow, `helm:<ns>/<release>`)
 * when `workflowId` is the chart's own; undefined for anything else.
 */
export function legacyChartWorkflowId(view: ObjectView, workflowId: string): string | undefined {
  if (view.kind !== 'ArmadaChart' || !view.release || workflowId !== standaloneChartWorkflowId(view))
    return undefined;
  return releaseWorkflowId(view.release.namespace, view.release.release);
}

/** What decideLeftover and legacyRunCounts read of a run Temporal describes. */
export function releaseRunOf(description: WorkflowExecutionDescription): ReleaseRun & { running: boolean } {
  const attributes = description.typedSearchAttributes;
  return {
    memo: (description.memo ?? {}) as unknown as RunMemo,
    status: description.status.name,
    running: description.status.name === 'RUNNING',
    parent: description.parentExecution?.workflowId ?? undefined,
    object: {
      kind: attributes.get(ArmadaKind),
      namespace: attributes.get(ArmadaNamespace),
      name: attributes.get(ArmadaName),
    },
  };
}
