import type { AnalysisResult } from '../core/contracts/analysis';
import type { CanaryAnalysis } from '../api/analysis';
import { durationSeconds } from '../api/duration';
import type { ServiceAccountRef } from '../core/contracts/acting-as';
import { io, profile } from './activity-proxies';
import type { DeploymentPair } from '../core/plan/canary';

/** Seconds between analysis checks when the spec gives no `interval`. */
const DEFAULT_ANALYSIS_INTERVAL_SECONDS = 10;

/** What a check looks at: the canary's Deployments, and whether the step runs stable pods. */
export interface AnalysisTarget {
  namespace: string;
  pairs: DeploymentPair[];
  actAs?: ServiceAccountRef;
  /** False at 100 %: no stable pod left to compare with. */
  stableRunning: boolean;
}

/** The check's own settings: the HTTP check's at the top of `analysis`, or prometheus'. */
const settings = (analysis: CanaryAnalysis) => analysis.prometheus ?? analysis;

/** Milliseconds between checks during a hold. */
export function analysisIntervalMs(analysis: CanaryAnalysis): number {
  return (durationSeconds(settings(analysis).interval ?? DEFAULT_ANALYSIS_INTERVAL_SECONDS) ?? 0) * 1000;
}

/** Failed checks tolerated before the canary rolls back. */
export function analysisFailureLimit(analysis: CanaryAnalysis): number {
  return settings(analysis).failure_limit ?? 0;
}

/**
 * One check, as an activity: the HTTP GET of `url`, or the Prometheus query for the canary's
 * pods (and, with compare_to_stable while stable pods run, for the stable's).
 */
export function checkAnalysisOnce(
  analysis: CanaryAnalysis,
  target: AnalysisTarget,
  summary: string,
): Promise<AnalysisResult> {
  const { prometheus, compare_to_stable: compare } = analysis;
  if (!prometheus)
    return io.checkAnalysis.executeWithOptions(profile.long(summary), [
      { url: analysis.url!, expectedStatus: analysis.expected_status, json: analysis.json },
    ]);
  const stables = target.pairs.flatMap((p) => (p.stable ? [p.stable] : []));
  return io.checkPrometheus.executeWithOptions(profile.long(summary), [
    {
      address: prometheus.address,
      query: prometheus.query,
      min: prometheus.min,
      max: prometheus.max,
      namespace: target.namespace,
      actAs: target.actAs,
      canary: target.pairs.map((p) => p.canary),
      ...(compare &&
        target.stableRunning &&
        stables.length && { stable: { deployments: stables, margin: compare.margin } }),
    },
  ]);
}
