import { WorkflowFailedError, type Client, type WorkflowHandle } from '@temporalio/client';
import { ApplicationFailure } from '@temporalio/common';
import { armadaChartSpec, type ArmadaChartSpecInput } from '../../api/chart';
import type { ChartOutcome, ChartRun, GroupOutcome, ManifestOutcome } from '../../core/contracts/workflows';
import { NonRetryable } from '../../core/failures';
import { releaseWorkflowId } from '../../core/plan/names';
import { chartOfOne, chartRun, startRun, type ChartDocument, type RunRequest } from '../../runs/requests';
import { historyText } from './histories';
import { placesHolding } from './leaks';

/**
 * A standalone chart's request as chartRun makes it, run by its chart driver alone: the older
 * build's `chartWorkflow` under `helm:<ns>/<release>`, which still drives the chart's release in
 * deployRun (workflows/release-driver.ts). For the tests of a chart's steps (sources, provenance,
 * helm test, hooks): its failure carries the failing activity's type and retry policy, which a
 * deployRun's failure (ManifestFailed) reports only as the chart's message.
 */
export function chartDriverRequest(doc: ChartDocument): RunRequest {
  const req = chartRun(doc);
  const { namespace, release } = doc.spec;
  return {
    ...req,
    workflowType: 'chartWorkflow',
    workflowId: releaseWorkflowId(namespace, release),
    input: chartOfOne(doc, req.input.mode ?? 'deploy'),
  };
}

/**
 * Starts a standalone chart's run as the bridge and armadactl do: chartRun's request (deployRun
 * with its plan of one, under `ArmadaChart:<ns>/<name>`), from the chart driver's input (its
 * object in `resourceNamespace`, else `default`).
 */
export async function startChart(
  harness: { client: Client; taskQueue: string },
  input: ChartRun,
): Promise<WorkflowHandle> {
  const { client, taskQueue } = harness;
  const doc = {
    kind: 'ArmadaChart' as const,
    name: input.chart,
    namespace: input.resourceNamespace ?? 'default',
    spec: input.spec,
  };
  return client.workflow.getHandle(await startRun(client, taskQueue, chartRun(doc, input.mode)));
}

/** A standalone chart's run to its end: the chart's outcome in it (its one group's one chart). */
export async function chartResult(handle: WorkflowHandle): Promise<ChartOutcome> {
  return ((await handle.result()) as ManifestOutcome).groups[0].outcomes[0];
}

/**
 * How a standalone chart's run failed: the chart's failure as the run's outcome records it
 * (ManifestFailed's details: its message, and the release when it came after the write).
 */
export async function chartFailure(handle: WorkflowHandle): Promise<GroupOutcome['failed'][number]> {
  const err: unknown = await handle.result().then(
    () => undefined,
    (e: unknown) => e,
  );
  expect(err).toBeInstanceOf(WorkflowFailedError);
  const cause = (err as WorkflowFailedError).cause;
  expect(cause instanceof ApplicationFailure && cause.type).toBe(NonRetryable.ManifestFailed);
  return ((cause as ApplicationFailure).details?.[0] as ManifestOutcome).groups[0].failed[0];
}

/** A run by workflow ID and run ID (a chart's runs share its ID; no run ID: the latest). */
export interface StartedRun {
  workflowId: string;
  runId?: string;
}

/**
 * ArmadaChart runs of the objects of `namespace`, started as the bridge would on a test's own
 * worker (`taskQueue`), each remembered so that every history can be searched afterwards for
 * what must never be in one (a Secret's value). `client` is read when a run starts.
 */
export function chartRuns(client: () => Client, namespace: string, taskQueue: string) {
  /** Every run started, and any the test adds (a canary child). */
  const runs: StartedRun[] = [];
  return {
    runs,
    /** Starts the ArmadaChart `name`'s run. */
    async start(name: string, spec: ArmadaChartSpecInput): Promise<WorkflowHandle> {
      const req = chartDriverRequest({
        kind: 'ArmadaChart',
        name,
        namespace,
        spec: armadaChartSpec.parse(spec),
      });
      const handle = await client().workflow.start(req.workflowType, {
        taskQueue,
        workflowId: req.workflowId,
        args: [req.input],
      });
      runs.push({ workflowId: handle.workflowId, runId: handle.firstExecutionRunId });
      return handle;
    },
    /** Runs the ArmadaChart `name` to its end: its outcome, or the error it failed with. */
    async outcome(name: string, spec: ArmadaChartSpecInput): Promise<ChartOutcome | Error> {
      return (await this.start(name, spec)).result().then(
        (outcome) => outcome as ChartOutcome,
        (err: Error) => err,
      );
    },
    /**
     * The raw histories of every run (a client without any codec, as the server stores them;
     * payloads decoded: historyText) as one text, and the runs whose history holds any of
     * `secrets` in any form (placesHolding): no leaks when that is empty.
     */
    async searchHistories(secrets: string[]) {
      const histories: Record<string, string> = {};
      for (const { workflowId, runId } of runs)
        histories[`${workflowId} ${runId ?? '(latest)'}`] = historyText(
          await client().workflow.getHandle(workflowId, runId).fetchHistory(),
        );
      return { text: Object.values(histories).join('\n'), leaks: placesHolding(secrets, histories) };
    },
  };
}

/** The activity failure a chart run failed with (the workflow's cause is the ActivityFailure). */
export function activityFailureOf(result: ChartOutcome | Error): ApplicationFailure {
  expect(result).toBeInstanceOf(WorkflowFailedError);
  const cause = (result as WorkflowFailedError).cause?.cause;
  expect(cause).toBeInstanceOf(ApplicationFailure);
  return cause as ApplicationFailure;
}
