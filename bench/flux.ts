import { CoreV1Api, CustomObjectsApi, Watch } from '@kubernetes/client-node';
import { execFile } from 'node:child_process';
import { mkdir, mkdtemp, realpath } from 'node:fs/promises';
import path from 'node:path';
import { performance } from 'node:perf_hooks';
import { promisify } from 'node:util';
import { toolPath } from '../activities/tools';
import { kubeConfig } from '../kube/client';
import { serveFiles } from '../test/helpers/chart-servers';
import { freePort } from '../test/helpers/temporal';
import type { ChartPlan, ManifestPlan } from '../core/plan/plans';
import { helmReleases } from './deploy-forms';
import { repo, startProcess, tail, until, type BenchProcess } from './processes';

const run = promisify(execFile);
const SOURCE = { group: 'source.toolkit.fluxcd.io', version: 'v1' };
const SOURCE_PLURALS = { HelmRepository: 'helmrepositories', HelmChart: 'helmcharts' } as const;
const HELM = { group: 'helm.toolkit.fluxcd.io', version: 'v2' };
/** The HelmRepository every HelmChart of a Flux form comes from. */
const REPOSITORY = 'examples';
/** The longest a Flux deploy may take before the run fails (Flux at 30 s needs ~30 s per link). */
const DEPLOY_DEADLINE_MS = 10 * 60_000;

interface FluxObject {
  metadata?: { name?: string; generation?: number; deletionTimestamp?: string };
  status?: {
    observedGeneration?: number;
    conditions?: { type: string; status: string; reason?: string; message?: string }[];
  };
}

/** The objects of one kind in one namespace. */
async function listObjects(
  custom: CustomObjectsApi,
  kind: { group: string; version: string; namespace: string; plural: string },
): Promise<FluxObject[]> {
  return ((await custom.listNamespacedCustomObject(kind)) as { items: FluxObject[] }).items;
}

/** The object's Ready condition, if it is about its current generation. */
function readyCondition(obj: FluxObject) {
  const ready = obj.status?.conditions?.find((c) => c.type === 'Ready');
  return obj.status?.observedGeneration === obj.metadata?.generation ? ready : undefined;
}

/** A rejection handler that adds what a controller printed last to the error. */
const saying =
  (controller: BenchProcess, name: string) =>
  (err: Error): never => {
    throw new Error(`${err.message}; ${name} printed:\n${tail(controller.output())}`, { cause: err });
  };

/** One helm-controller and the namespace it alone watches, where its form's objects live. */
export interface FluxForm {
  /** `--requeue-dependency`: how often a HelmRelease re-checks an unmet `dependsOn`. */
  requeueDependency: string;
  namespace: string;
  /** Applies the plan's HelmReleases and resolves with the ms until every one is Ready. */
  deploy(plan: ManifestPlan): Promise<number>;
  /** Deletes the HelmReleases (helm-controller uninstalls their releases) and waits until they are gone. */
  remove(): Promise<void>;
}

export interface Flux {
  forms: FluxForm[];
  stop(): Promise<void>;
}

/** The chart directory a chart of the examples' manifest deploys (examples/charts/<name>). */
const chartDirectory = (chart: ChartPlan) => path.resolve(repo, chart.spec.source.location ?? '');
/** The HelmChart holding a chart directory's packaged chart. */
const helmChartName = (chart: ChartPlan) => `chart-${path.basename(chartDirectory(chart))}`;

/**
 * Flux beside us, as local processes against the benchmark's sandbox: the CRDs of the pinned
 * releases (`deploy/tools/build.sh peers`), a Helm repository of the plan's charts on the loopback,
 * one source-controller, and one helm-controller per `requeueDependencies` entry, each watching
 * only its own namespace. Leader election is off, every port is a free loopback port, and
 * source-controller keeps its artifacts in `work`. Before it returns, every chart's HelmChart is
 * Ready in every form's namespace (untimed: fetching and packaging the charts is the part of a
 * Flux deploy our local chart directories do not have) and every helm-controller answers /readyz.
 */
export async function startFlux(
  work: string,
  plan: ManifestPlan,
  requeueDependencies: string[],
  { kubeconfig, log }: { kubeconfig: string; log: (line: string) => void },
): Promise<Flux> {
  const processes: BenchProcess[] = [];
  const closers: (() => Promise<void>)[] = [];
  const stop = async () => {
    for (const p of processes.reverse()) await p.stop();
    for (const close of closers.reverse()) await close();
  };
  try {
    const kube = kubeConfig();
    const core = kube.makeApiClient(CoreV1Api);
    const custom = kube.makeApiClient(CustomObjectsApi);
    const kubectl = (...args: string[]) =>
      run(toolPath('kubectl'), args, { cwd: repo, env: { ...process.env, KUBECONFIG: kubeconfig } });
    // Linked beside the binaries by `deploy/tools/build.sh peers`, from the same releases' modules.
    // (resolved: kubectl does not walk a directory given as a symlink).
    const crds = await Promise.all(
      ['source-controller', 'helm-controller'].map((c) =>
        realpath(path.join(repo, '.tools', 'bin', `${c}.crds`)),
      ),
    );
    await kubectl('apply', '--server-side', ...crds.flatMap((dir) => ['-f', dir]));
    await kubectl('wait', '--for=condition=Established', '--timeout=60s', ...crds.flatMap((d) => ['-f', d]));

    const charts = path.join(work, 'charts');
    await mkdir(charts, { recursive: true });
    const directories = [...new Set(plan.groups.flatMap((g) => g.charts.map(chartDirectory)))];
    for (const dir of directories) await run(toolPath('helm'), ['package', dir, '--destination', charts]);
    const files = await serveFiles(charts);
    closers.push(async () => {
      files.server.closeAllConnections();
      await new Promise((resolve) => files.server.close(resolve));
    });
    await run(toolPath('helm'), ['repo', 'index', charts, '--url', files.url]);

    const storagePort = await freePort();
    const sourceController = startProcess(
      toolPath('source-controller'),
      [
        '--enable-leader-election=false',
        `--metrics-addr=127.0.0.1:${await freePort()}`,
        `--health-addr=127.0.0.1:${await freePort()}`,
        `--storage-path=${await mkdtemp(path.join(work, 'source-storage-'))}`,
        `--storage-addr=127.0.0.1:${storagePort}`,
        `--storage-adv-addr=127.0.0.1:${storagePort}`,
        '--log-level=error',
      ],
      { KUBECONFIG: kubeconfig },
    );
    processes.push(sourceController);

    const forms: FluxForm[] = [];
    for (const requeueDependency of requeueDependencies) {
      const namespace = `flux-requeue-${requeueDependency}`;
      await core.createNamespace({ body: { metadata: { name: namespace } } });
      const source = (kind: keyof typeof SOURCE_PLURALS, name: string, spec: object) =>
        custom.createNamespacedCustomObject({
          ...SOURCE,
          namespace,
          plural: SOURCE_PLURALS[kind],
          body: {
            apiVersion: `${SOURCE.group}/${SOURCE.version}`,
            kind,
            metadata: { name, namespace },
            spec: { interval: '1h', ...spec },
          },
        });
      await source('HelmRepository', REPOSITORY, { url: files.url });
      const chartsByName = new Map(plan.groups.flatMap((g) => g.charts.map((c) => [helmChartName(c), c])));
      for (const [name, chart] of chartsByName)
        await source('HelmChart', name, {
          chart: path.basename(chartDirectory(chart)),
          version: '*',
          sourceRef: { kind: 'HelmRepository', name: REPOSITORY },
        });
      await until(
        `the HelmCharts of ${namespace} to be Ready`,
        async () => {
          const items = await listObjects(custom, { ...SOURCE, namespace, plural: SOURCE_PLURALS.HelmChart });
          return items.length === chartsByName.size &&
            items.every((item) => readyCondition(item)?.status === 'True')
            ? true
            : undefined;
        },
        { timeoutMs: 120_000, intervalMs: 200 },
      ).catch(saying(sourceController, 'source-controller'));

      const healthPort = await freePort();
      const helmController = startProcess(
        toolPath('helm-controller'),
        [
          '--enable-leader-election=false',
          '--watch-all-namespaces=false',
          `--requeue-dependency=${requeueDependency}`,
          `--metrics-addr=127.0.0.1:${await freePort()}`,
          `--health-addr=127.0.0.1:${healthPort}`,
          '--log-level=error',
        ],
        { KUBECONFIG: kubeconfig, RUNTIME_NAMESPACE: namespace },
      );
      processes.push(helmController);
      await until(
        `helm-controller (${namespace}) to answer /readyz`,
        async () => ((await fetch(`http://127.0.0.1:${healthPort}/readyz`)).ok ? true : undefined),
        { timeoutMs: 60_000 },
      ).catch(saying(helmController, 'helm-controller'));
      log(`  Flux: helm-controller --requeue-dependency=${requeueDependency} ready in ${namespace}`);
      forms.push({
        requeueDependency,
        namespace,
        deploy: (deployed) =>
          deployHelmReleases(
            custom,
            namespace,
            helmReleases(deployed, namespace, (chart) => ({ kind: 'HelmChart', name: helmChartName(chart) })),
            () => tail(helmController.output()),
          ),
        remove: () => removeHelmReleases(custom, namespace),
      });
    }
    return { forms, stop };
  } catch (err) {
    await stop();
    throw err;
  }
}

/**
 * Creates the HelmReleases and resolves with the ms from the first create call until a watch,
 * opened before it, has seen every one Ready at its generation. A release whose Ready turns False
 * for any reason but an unmet dependency fails the run, with its message.
 */
async function deployHelmReleases(
  custom: CustomObjectsApi,
  namespace: string,
  releases: object[],
  controllerOutput: () => string,
): Promise<number> {
  const names = new Set(releases.map((r) => (r as FluxObject).metadata!.name!));
  const ready = new Set<string>();
  let settle!: { resolve: (ms: number) => void; reject: (err: Error) => void };
  const done = new Promise<number>((resolve, reject) => (settle = { resolve, reject }));
  let t0 = 0;
  const watch = await new Watch(kubeConfig()).watch(
    `/apis/${HELM.group}/${HELM.version}/namespaces/${namespace}/helmreleases`,
    { allowWatchBookmarks: true },
    (_type, obj: FluxObject) => {
      const name = obj.metadata?.name ?? '';
      const condition = readyCondition(obj);
      if (condition?.status === 'True') ready.add(name);
      if (condition?.status === 'False' && condition.reason !== 'DependencyNotReady')
        settle.reject(
          new Error(`HelmRelease ${namespace}/${name} failed: ${condition.reason}: ${condition.message}`),
        );
      if ([...names].every((n) => ready.has(n))) settle.resolve(performance.now() - t0);
    },
    (err: unknown) => {
      if (err) settle.reject(new Error(`the watch on ${namespace}'s HelmReleases ended`, { cause: err }));
    },
  );
  const deadline = setTimeout(
    () =>
      settle.reject(
        new Error(
          `HelmReleases of ${namespace} not all Ready after ${DEPLOY_DEADLINE_MS / 1000}s (ready: ${[...ready].join(', ') || 'none'}); helm-controller:\n${controllerOutput()}`,
        ),
      ),
    DEPLOY_DEADLINE_MS,
  );
  try {
    t0 = performance.now();
    for (const body of releases)
      await custom.createNamespacedCustomObject({ ...HELM, namespace, plural: 'helmreleases', body });
    return await done;
  } finally {
    clearTimeout(deadline);
    watch.abort();
  }
}

/** Deletes every HelmRelease of the namespace and waits until they are gone (their uninstalls done). */
async function removeHelmReleases(custom: CustomObjectsApi, namespace: string): Promise<void> {
  await custom.deleteCollectionNamespacedCustomObject({ ...HELM, namespace, plural: 'helmreleases' });
  await until(
    `the HelmReleases of ${namespace} to be deleted`,
    async () => {
      const items = await listObjects(custom, { ...HELM, namespace, plural: 'helmreleases' });
      return items.length === 0 ? true : undefined;
    },
    { timeoutMs: 300_000, intervalMs: 200 },
  );
}
