import { ApplicationFailure } from '@temporalio/common';
import { cp, mkdir, mkdtemp, readdir, readFile, realpath, rm, stat } from 'node:fs/promises';
import path from 'node:path';
import { parse as parseYaml } from 'yaml';
import type { ChartSource } from '../../api/chart';
import { quoted } from '../../api/common';
import { NonRetryable } from '../../core/failures';
import { heartbeating } from '../process';
import { chartValues } from '../values/read';
import type {
  ChartObjectRef,
  ChartDependency,
  PrepareChartRequest,
  PreparedChart,
  ChartContent,
} from '../../core/contracts/charts';
import { keyedDigest, unkeyedReleaseDigest } from './digest';
import { digestKey } from './digest-key';
import {
  cacheDir,
  chartNotFound,
  describeSource,
  directoryDigest,
  extract,
  fetchChart,
  settle,
  type LocalChart,
} from './source';

/**
 * Preparing a chart for a run: fetched (activities/charts/source.ts), its `dependencies` built
 * into it as Armada's chartbuilder builds them, digested with its values; and finding it again,
 * by content, on whichever worker runs the next step.
 */

/**
 * Activity: brings the chart of `req.source` onto this worker's disk and digests it with the
 * values (`values_from` read now, see chartValues: the digest, never the values, leaves it).
 *
 * - `local`: the directory `location` (relative to `ARMADA_CHARTS_ROOT`, else the working
 *   directory), plus `subpath`; nothing is written. It and its links must stay under that root.
 * - `tar`: downloads the http(s) URL to `<cache>/<sha256(archive)>.tgz` (renamed into place
 *   once complete); with a `subpath`, also extracts it once per archive content to
 *   `<cache>/<sha256(archive)>.d/`.
 * - `repo`, `oci`: `helm pull` to `<cache>/<file>-<digest prefix>.tgz`.
 * - `git`: a shallow fetch of `reference` (default HEAD), checked out to `<cache>/git-<commit>/`
 *   without its `.git` directory.
 *
 * `<cache>` is `ARMADA_CHART_CACHE`, else `<tmpdir>/armada-charts`. Artefacts are named by
 * content, so preparing the same chart again reuses them instead of piling up copies; the
 * temporary directories used on the way are removed.
 *
 * Returns the chart's digests, not where it is: a later activity may run on another worker and
 * finds it there with chartOnThisWorker (see PreparedChart). A chart that is missing (local
 * path, HTTP 404/410, git repository or reference, repository chart or version, OCI tag) fails
 * non-retryably with type `ChartNotFound`, and so does a source that breaks
 * api/source-location.ts (an absolute or `..` path, a `file:` URL, a git location that is not a
 * network URL). Credentials come from `source.secret_ref` (see fetchChart); a missing Secret or
 * key fails non-retryably as `CredentialsNotFound`, and a server that refuses the credentials
 * (or wants some) as `SourceUnauthorized`. A chart with `source.verify` that has no provenance
 * file, or fails helm's verification against the keyring Secret, or whose keyring is missing,
 * fails non-retryably as `ChartUnverified` (activities/charts/provenance.ts), before any release
 * is touched. Network and server errors are retryable: plain errors for downloads and git, helm's
 * classification (`HelmCommandFailed`) for `helm pull`.
 */
export async function prepareChart(req: PrepareChartRequest): Promise<PreparedChart> {
  const { contentDigest, unkeyedDigest } = await fetchAndDigest(req);
  return { contentDigest, digest: keyedDigest(unkeyedDigest, digestKey()) };
}

/**
 * prepareChart's work up to the digest's key: the chart on this worker, its content digest, and
 * unkeyedReleaseDigest of it with its values. For `armadactl diff` as well, which may hold no key.
 */
export async function fetchAndDigest(
  req: PrepareChartRequest,
): Promise<{ contentDigest: string; unkeyedDigest: string }> {
  const chart = await heartbeating(() => fetchBuilt(req.source, req.owner, req.dependencies));
  onThisWorker.set(chart.contentDigest, chart.ref);
  const { values } = await chartValues(req.values, req.valuesFrom);
  return {
    contentDigest: chart.contentDigest,
    unkeyedDigest: unkeyedReleaseDigest(chart.contentDigest, values),
  };
}

/** Where this worker process has each chart it prepared or fetched, by content digest. */
const onThisWorker = new Map<string, string>();

/**
 * The chart `chart` names, on this worker's disk: where this process put it, while that is still
 * there, else fetched again from its source (a `local` chart is always read again: its directory
 * may change in place). A fetched chart whose content is not the one the run prepared (a tar URL
 * or a git branch that moved) fails non-retryably as `ChartChanged`: deploying it would not be
 * what the run planned and recorded. A chart with `dependencies` is built again from all of its
 * sources unless none of them is `local`. Returns a chart directory or archive for helm.
 */
export async function chartOnThisWorker(chart: ChartContent): Promise<string> {
  // Served by content digest without asking the source again, a private chart too: the digest is
  // the one this run's own prepareChart fetched with the chart's own credentials, so the run has
  // already proven it may have these bytes. Only such a digest names a chart here.
  const known = chart.contentDigest && onThisWorker.get(chart.contentDigest);
  if (known && !readsLocal(chart) && (await stat(known).catch(() => undefined))) return known;
  const fetched = await fetchBuilt(chart.source, chart.owner, chart.dependencies);
  if (chart.contentDigest !== undefined && fetched.contentDigest !== chart.contentDigest) {
    throw ApplicationFailure.nonRetryable(
      `${describeSource(chart.source)} changed since the run prepared it: sha256 ${chart.contentDigest} then, ` +
        `${fetched.contentDigest} now; apply the object again to deploy what it serves now`,
      NonRetryable.ChartChanged,
    );
  }
  onThisWorker.set(fetched.contentDigest, fetched.ref);
  return fetched.ref;
}

/** Whether a chart or any chart built into it is `local`, whose directory may change in place. */
function readsLocal(chart: { source: ChartSource; dependencies?: ChartDependency[] }): boolean {
  return chart.source.type === 'local' || (chart.dependencies ?? []).some(readsLocal);
}

/** The chart of `source`, with `dependencies` built into it when the spec lists any (even none). */
async function fetchBuilt(
  source: ChartSource,
  owner: ChartObjectRef | undefined,
  dependencies: ChartDependency[] | undefined,
): Promise<LocalChart> {
  const chart = await fetchChart(source, owner);
  return dependencies ? buildWithSubcharts(source, chart, dependencies) : chart;
}

/**
 * Armada's chartbuilder (armada/handlers/chartbuilder.py), by content: a copy of the chart whose
 * `charts/` holds exactly its dependencies, each (built with its own first) under the name its
 * Chart.yaml gives it. A list that is present replaces what the chart vendored there, an empty
 * one included. The copy lands in `<cache>/built-<digest>/`, named by the digest of the whole
 * tree: a change to any dependency changes the chart's content digest, and so its release's.
 * Two dependencies of one Chart.yaml name fail as `ChartNotFound` (Armada's symlink would too).
 */
async function buildWithSubcharts(
  source: ChartSource,
  chart: LocalChart,
  dependencies: ChartDependency[],
): Promise<LocalChart> {
  const cache = await cacheDir();
  const work = await mkdtemp(path.join(cache, '.build-'));
  try {
    const built = path.join(work, 'chart');
    await copyChart(chart, built);
    const charts = path.join(built, 'charts');
    await rm(charts, { recursive: true, force: true });
    await mkdir(charts);
    const placedBy = new Map<string, string>();
    for (const dependency of dependencies) {
      const subchart = await fetchBuilt(dependency.source, dependency.owner, dependency.dependencies);
      const staged = path.join(work, `dependency-${placedBy.size}`);
      await copyChart(subchart, staged);
      const name = await chartYamlName(staged, dependency);
      const earlier = placedBy.get(name);
      if (earlier !== undefined)
        throw chartNotFound(
          `${describeSource(source)}: dependencies ${quoted(earlier)} and ${quoted(dependency.chart)} are both chart ${quoted(name)}; charts/ can hold only one`,
        );
      placedBy.set(name, dependency.chart);
      await cp(staged, path.join(charts, name), { recursive: true });
    }
    const contentDigest = await directoryDigest(built, {
      source,
      fence: await realpath(work),
      name: 'the chart built with its dependencies',
    });
    return { ref: await settle(built, path.join(cache, `built-${contentDigest}`)), contentDigest };
  } finally {
    await rm(work, { recursive: true, force: true });
  }
}

/**
 * A fetched chart copied to `target` as a directory: a directory's files (links followed, as
 * helm reads them), an archive's one top-level directory.
 */
async function copyChart(chart: LocalChart, target: string): Promise<void> {
  if ((await stat(chart.ref)).isDirectory()) {
    await cp(chart.ref, target, { recursive: true, dereference: true });
    return;
  }
  const tree = await extract(chart.ref, path.join(await cacheDir(), `${chart.contentDigest}.d`));
  const [top, ...more] = await readdir(tree);
  if (top === undefined || more.length)
    throw chartNotFound(`${chart.ref} holds ${more.length + 1} top-level entries, not one chart directory`);
  await cp(path.join(tree, top), target, { recursive: true, dereference: true });
}

/** The `name` a chart's Chart.yaml gives it: what Armada names its directory under charts/. */
async function chartYamlName(dir: string, dependency: ChartDependency): Promise<string> {
  const where = `dependency ${quoted(dependency.chart)} (${describeSource(dependency.source)})`;
  const metadata: unknown = parseYaml(
    await readFile(path.join(dir, 'Chart.yaml'), 'utf8').catch(() => {
      throw chartNotFound(`${where} has no Chart.yaml`);
    }),
  );
  const name = (metadata as { name?: unknown } | null)?.name;
  if (typeof name !== 'string' || !/^[\w.-]+$/.test(name))
    throw chartNotFound(`${where}: its Chart.yaml names no chart (name: ${JSON.stringify(name)})`);
  return name;
}
