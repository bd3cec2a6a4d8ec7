import type { ArmadaChartSpec } from '../../api/chart';
import { helmRequests, type ChartObject } from '../../workflows/plan/helm-requests';
import {
  canaryPreview,
  previewOf,
  type CanaryStepPreview,
  type ReleasePreview,
} from '../../workflows/plan/preview';
import { releaseManifest } from '../helm/manifest';
import { helmObserve } from '../helm/status';
import { upgradeDryRun } from '../helm/upgrade';
import { canaryPairs, renderedDeployments } from '../kube/canary-copies';
import { prepareChart, type ChartDependency } from './prepare';

/** One release a run would drive, and what it is asked to do with it. */
export interface PreviewRequest {
  /** The Helm release (prefixed, when a manifest deploys it) and its namespace. */
  release: string;
  namespace: string;
  spec: ArmadaChartSpec;
  /** The ArmadaChart: its `values_from` are read in its own namespace. */
  chartObject: ChartObject;
  mode: 'deploy' | 'uninstall';
  /** The chart's `dependencies`, resolved as its run would (a ChartPlan's). */
  dependencies?: ChartDependency[];
}

/** What a run would do to a release, with the manifests to compare when it would write. */
export interface ReleaseChange extends ReleasePreview {
  /** The manifest of the current revision, when the run would replace or remove it; '' otherwise. */
  live: string;
  /** The manifest the run would write (install, upgrade); '' otherwise. */
  wanted: string;
  /** A canary upgrade's steps. */
  canary?: CanaryStepPreview[];
}

/**
 * What a chart run would do to a release, found out with reads only and with the worker's own
 * code: the release observed (helmObserve), the chart prepared and digested with its values
 * (prepareChart, `values_from` read), the action decided by the run's planner (previewOf); then
 * for a write, the current revision's manifest (`helm get manifest`) and the one the write would
 * make (upgradeDryRun: the run's helm command, dry); for a canary upgrade, its steps over the
 * live Deployments (canaryPairs). Not an activity: `armadactl diff` calls it in its own process,
 * under the caller's kubeconfig (asCaller), acting as nobody else: the requests carry no actAs.
 */
export async function previewRelease(req: PreviewRequest): Promise<ReleaseChange> {
  const ref = { release: req.release, namespace: req.namespace };
  const observed = await helmObserve(ref);
  const current = async () => (observed ? releaseManifest(ref, observed.revision) : '');
  if (req.mode === 'uninstall') {
    const preview = previewOf(observed, { mode: 'uninstall' }, req.spec);
    return { ...preview, live: preview.action === 'uninstall' ? await current() : '', wanted: '' };
  }
  const requests = helmRequests(ref, req.spec, req.chartObject, req.dependencies);
  const prepared = await prepareChart(requests.prepare);
  const preview = previewOf(observed, { mode: 'deploy', digest: prepared.digest }, req.spec);
  if (preview.action !== 'install' && preview.action !== 'upgrade')
    return { ...preview, live: '', wanted: '' };
  const wanted = await upgradeDryRun(requests.upgrade(prepared));
  const live = await current();
  const canary =
    preview.action === 'upgrade' && req.spec.canary
      ? canaryPreview(req.spec.canary.steps, await canaryPairs(ref, renderedDeployments(wanted)))
      : undefined;
  return { ...preview, live, wanted, ...(canary && { canary }) };
}
