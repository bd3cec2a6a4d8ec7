import { WorkflowFailedError, WorkflowUpdateFailedError, type WorkflowHandle } from '@temporalio/client';
import { ApplicationFailure } from '@temporalio/common';
import { armadaChartSpec, type ArmadaChartSpecInput } from '../../api/chart';
import { armadaChartGroupSpec } from '../../api/chart-group';
import { armadaManifestSpec } from '../../api/manifest';
import { manifestRun, startRun, type RunRequest } from '../../runs/requests';
import { chartDriverRequest } from './chart-runs';
import type { ChartOutcome, ManifestOutcome } from '../../core/contracts/workflows';
import type { ManifestDocuments } from '../../core/plan/manifest';
import type { Harness } from './env';

/** How a run ended: its result, or the ApplicationFailure the workflow failed with. */
export type RunEnd<T> =
  { result: T; failure?: undefined } | { result?: undefined; failure: ApplicationFailure };

/** Starts `req` on the harness's worker (as armadactl would) and waits for its end. */
async function runToEnd<T>(harness: Harness, req: RunRequest): Promise<RunEnd<T>> {
  const { client, taskQueue } = harness;
  const workflowId = await startRun(client, taskQueue, req);
  try {
    return { result: (await client.workflow.getHandle(workflowId).result()) as T };
  } catch (err) {
    if (err instanceof WorkflowFailedError && err.cause instanceof ApplicationFailure)
      return { failure: err.cause };
    throw err;
  }
}

/** The run of a standalone ArmadaChart `name` (its object in namespace `default`) by its chart driver (chartDriverRequest), to its end. */
export function runChart(harness: Harness, name: string, spec: ArmadaChartSpecInput) {
  return runToEnd<ChartOutcome>(
    harness,
    chartDriverRequest({
      kind: 'ArmadaChart',
      name,
      namespace: 'default',
      spec: armadaChartSpec.parse(spec),
    }),
  );
}

/**
 * The run of an ArmadaManifest `name` to its end: its groups in order, each listing its charts
 * (named by the keys, in order); `spec` adds to the manifest's spec (release_prefix defaults to
 * `name`, so a chart's release is `<name>-<release>`). The objects are never on the cluster (as
 * with `armadactl apply` of a file); a failed run's outcome is its failure's details.
 */
export async function runManifest(
  harness: Harness,
  name: string,
  groups: Record<string, { sequenced?: boolean; charts: Record<string, ArmadaChartSpecInput> }>,
  spec: Record<string, unknown> = {},
): Promise<RunEnd<ManifestOutcome> & { outcome: ManifestOutcome }> {
  const docs: ManifestDocuments = {
    namespace: 'default',
    manifest: {
      name,
      spec: armadaManifestSpec.parse({ release_prefix: name, chart_groups: Object.keys(groups), ...spec }),
    },
    groups: Object.fromEntries(
      Object.entries(groups).map(([group, { sequenced, charts }]) => [
        group,
        armadaChartGroupSpec.parse({ sequenced, chart_group: Object.keys(charts) }),
      ]),
    ),
    charts: Object.fromEntries(
      Object.values(groups).flatMap(({ charts }) =>
        Object.entries(charts).map(([chart, chartSpec]) => [chart, armadaChartSpec.parse(chartSpec)]),
      ),
    ),
  };
  const end = await runToEnd<ManifestOutcome>(harness, manifestRun(docs));
  return { ...end, outcome: end.result ?? (end.failure.details?.[0] as ManifestOutcome) };
}

/** The message an Update's validator refused with. */
export async function refusal(update: Promise<unknown>): Promise<string> {
  const err = await update.then(
    () => undefined,
    (e: unknown) => e,
  );
  expect(err).toBeInstanceOf(WorkflowUpdateFailedError);
  return (err as WorkflowUpdateFailedError).cause?.message ?? '';
}

/** A run's current details in the Temporal UI, as the UI reads them (the metadata query). */
export const detailsOf = async (handle: WorkflowHandle): Promise<string> =>
  ((await handle.query('__temporal_workflow_metadata')) as { currentDetails?: string }).currentDetails ?? '';
