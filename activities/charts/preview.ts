import type { ArmadaChartSpec } from '../../api/chart';
import { helmRequests, type ChartObject } from '../../core/plan/helm-requests';
import {
  canaryPreview,
  previewOf,
  type CanaryStepPreview,
  type ReleasePreview,
} from '../../core/plan/preview';
import { releaseManifest, renderedObjects } from '../helm/manifest';
import { observeRelease } from '../helm/status';
import { upgradeDryRun } from '../helm/upgrade';
import { canaryPairs, renderedDeployments } from '../kube/canary-copies';
import { stableJson } from '../../core/stable-json';
import { KEYED_DIGEST_PREFIX, keyedDigest } from './digest';
import { readDigestKey } from './digest-key';
import { fetchAndDigest } from './prepare';
import type { ChartDependency } from '../../core/contracts/charts';

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
 * code: the release observed (observeRelease), the chart prepared and digested with its values
 * (fetchAndDigest, `values_from` read), the action decided by the run's planner (previewOf); then
 * for a write, the current revision's manifest (`helm get manifest`) and the one the write would
 * make (upgradeDryRun: the run's helm command, dry); for a canary upgrade, its steps over the
 * live Deployments (canaryPairs). Not an activity: `armadactl diff` calls it in its own process,
 * under the caller's kubeconfig (asCaller), acting as nobody else: the requests carry no actAs.
 *
 * The digests are compared with the worker's digest key where it is readable here
 * (`ARMADA_DIGEST_KEY_FILE`, else the default file `npm start`'s worker made: readDigestKey).
 * Without it, a release recorded with an unkeyed digest is still compared by digest; one
 * recorded with a keyed digest is compared by its rendered manifest (see byManifest).
 */
export async function previewRelease(req: PreviewRequest): Promise<ReleaseChange> {
  const ref = { release: req.release, namespace: req.namespace };
  const key = readDigestKey();
  const observed = await observeRelease(ref, key);
  const current = async () => (observed ? releaseManifest(ref, observed.revision) : '');
  if (req.mode === 'uninstall') {
    const preview = previewOf(observed, { mode: 'uninstall' }, req.spec);
    return { ...preview, live: preview.action === 'uninstall' ? await current() : '', wanted: '' };
  }
  const requests = helmRequests(ref, req.spec, req.chartObject, req.dependencies);
  const { contentDigest, unkeyedDigest } = await fetchAndDigest(requests.prepare);
  const prepared = { contentDigest, digest: key ? keyedDigest(unkeyedDigest, key) : unkeyedDigest };
  const byDigest = previewOf(observed, { mode: 'deploy', digest: prepared.digest }, req.spec);
  if (byDigest.action !== 'install' && byDigest.action !== 'upgrade')
    return { ...byDigest, live: '', wanted: '' };
  const wanted = await upgradeDryRun(requests.upgrade(prepared));
  const live = await current();
  const preview =
    !key && observed?.status === 'deployed' && observed.digest?.startsWith(KEYED_DIGEST_PREFIX)
      ? byManifest(observed.revision, live, wanted)
      : byDigest;
  if (preview.action === 'unchanged') return { ...preview, live: '', wanted: '' };
  const canary =
    preview.action === 'upgrade' && req.spec.canary
      ? canaryPreview(req.spec.canary.steps, await canaryPairs(ref, renderedDeployments(wanted)))
      : undefined;
  return { ...preview, live, wanted, ...(canary && { canary }) };
}

/**
 * A deployed release's preview where its keyed digest cannot be compared (no digest key here):
 * unchanged when the chart renders the objects the release runs (in any order, however the YAML
 * is laid out), an upgrade otherwise. Values that render no manifest (a hook's, say) are not
 * seen; the reason says so.
 */
function byManifest(revision: number, live: string, wanted: string): ReleasePreview {
  const why = 'the digest key is not readable here (ARMADA_DIGEST_KEY_FILE), so the manifests were compared';
  const objects = (manifest: string) => renderedObjects(manifest).map(stableJson).sort().join('\n');
  return objects(live) === objects(wanted)
    ? {
        action: 'unchanged',
        revision,
        reason: `revision ${revision} runs the manifest this chart and these values render; ${why}, and a change of values that renders no manifest (a hook's) is not seen`,
      }
    : { action: 'upgrade', revision, reason: `the manifest differs from revision ${revision}'s; ${why}` };
}
