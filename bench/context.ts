import type { Client } from '@temporalio/client';
import { randomUUID } from 'node:crypto';
import { mkdtemp, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import path from 'node:path';
import { freePort } from '../test/helpers/temporal';
import { bundleWorkflows } from '../worker/bundle';
import type { Baseline } from './baseline-build';
import { startNode, type BenchProcess } from './processes';
import type { ThisRun } from './servers';
import { histogramFigures, metricValue, scrape, type HistogramFigures } from './prometheus';

/** What the driver hands every benchmark. */
export interface BenchContext {
  client: Client;
  /** host:port of the Temporal dev server the driver started. */
  temporalAddress: string;
  /** The workflow bundle, built once for every stub worker. */
  bundlePath: string;
  /** KUBECONFIG of the benchmark's own sandbox cluster (benchmarks 2 and 4 only). */
  kubeconfig?: string;
  /** The baseline build measured beside HEAD (deploy/build-at-ref.sh), if any. */
  baseline?: Baseline;
  /** The entries of the benchmarks this run has finished so far (benchmark 6 reuses 1's and 4's). */
  thisRun?: ThisRun;
  log(line: string): void;
}

/** A stub worker process (bench/stub-worker.ts) and what it can tell about itself. */
export interface StubWorker {
  taskQueue: string;
  process: BenchProcess;
  /** The SDK's own figures: task latencies (ms) and sticky-cache hits and misses. */
  sdkMetrics(): Promise<WorkerSdkMetrics>;
  stop(): Promise<void>;
}

export interface WorkerSdkMetrics {
  workflowTaskScheduleToStartMs?: HistogramFigures;
  workflowTaskExecutionMs?: HistogramFigures;
  workflowActivationExecutionMs?: HistogramFigures;
  activityScheduleToStartMs?: HistogramFigures;
  stickyCacheHits?: number;
  stickyCacheMisses?: number;
  stickyCacheSize?: number;
  stickyCacheForcedEvictions?: number;
  /** Workflow tasks that replayed a history (a workflow not in the cache). */
  workflowTaskReplayMs?: HistogramFigures;
}

/** Starts a stub worker on a fresh task queue and waits until it polls. */
export async function startStubWorker(
  ctx: BenchContext,
  mode: 'helm' | 'canary' | 'kube',
  env: NodeJS.ProcessEnv = {},
): Promise<StubWorker> {
  const taskQueue = `bench-${mode}-${randomUUID().slice(0, 8)}`;
  const metricsPort = await freePort();
  const worker = startNode('bench/stub-worker.js', {
    TEMPORAL_ADDRESS: ctx.temporalAddress,
    BENCH_TASK_QUEUE: taskQueue,
    BENCH_WORKER_MODE: mode,
    BENCH_WORKFLOW_BUNDLE: ctx.bundlePath,
    BENCH_WORKER_METRICS: `127.0.0.1:${metricsPort}`,
    ...env,
  });
  await worker.printed('bench-worker: polling');
  return {
    taskQueue,
    process: worker,
    async sdkMetrics() {
      const samples = await scrape(`http://127.0.0.1:${metricsPort}/metrics`);
      return {
        workflowTaskScheduleToStartMs: histogramFigures(
          samples,
          'temporal_workflow_task_schedule_to_start_latency',
        ),
        workflowTaskExecutionMs: histogramFigures(samples, 'temporal_workflow_task_execution_latency'),
        workflowActivationExecutionMs: histogramFigures(
          samples,
          'temporal_workflow_activation_execution_latency',
        ),
        activityScheduleToStartMs: histogramFigures(samples, 'temporal_activity_schedule_to_start_latency'),
        stickyCacheHits: metricValue(samples, 'temporal_sticky_cache_hit'),
        stickyCacheMisses: metricValue(samples, 'temporal_sticky_cache_miss'),
        stickyCacheSize: metricValue(samples, 'temporal_sticky_cache_size'),
        stickyCacheForcedEvictions: metricValue(samples, 'temporal_sticky_cache_total_forced_eviction'),
        workflowTaskReplayMs: histogramFigures(samples, 'temporal_workflow_task_replay_latency'),
      };
    },
    stop: () => worker.stop(),
  };
}

/** A bundle of the product's workflows and the benchmarks' baselines (bench/workflows.ts), for a stub worker's BENCH_WORKFLOW_BUNDLE. */
export async function benchBundle(): Promise<string> {
  const dir = await mkdtemp(path.join(tmpdir(), 'armada-bench-bundle-'));
  const file = path.join(dir, 'workflow-bundle.js');
  await writeFile(file, await bundleWorkflows(undefined, require.resolve('./workflows')));
  return file;
}
