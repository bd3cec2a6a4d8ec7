import type { Client, WorkflowHandle } from '@temporalio/client';
import { armadaChartSpec, type ArmadaChartSpecInput } from '../../api/chart';
import { chartRun } from '../../runs/requests';
import { historyText } from './histories';

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
      const req = chartRun({ kind: 'ArmadaChart', name, namespace, spec: armadaChartSpec.parse(spec) });
      const handle = await client().workflow.start(req.workflowType, {
        taskQueue,
        workflowId: req.workflowId,
        args: [req.input],
      });
      runs.push({ workflowId: handle.workflowId, runId: handle.firstExecutionRunId });
      return handle;
    },
    /**
     * The raw histories of every run (a client without any codec, as the server stores them;
     * payloads decoded: historyText) as one text, and which of `values` each holds: no leaks
     * when none is in any.
     */
    async searchHistories(values: readonly string[]) {
      const texts: string[] = [];
      const leaks: (StartedRun & { value: string })[] = [];
      for (const { workflowId, runId } of runs) {
        const text = historyText(await client().workflow.getHandle(workflowId, runId).fetchHistory());
        texts.push(text);
        for (const value of values.filter((v) => text.includes(v))) leaks.push({ workflowId, runId, value });
      }
      return { text: texts.join('\n'), leaks };
    },
  };
}
