import { kinds } from '../../api/kinds';
import type { ArmadaChartSpec } from '../../api/chart';
import type { ArmadaChartGroupSpec } from '../../api/chart-group';
import type { ArmadaManifestSpec } from '../../api/manifest';
import { manifestRun, startRun } from '../../runs/requests';
import type { ManifestOutcome } from '../../core/contracts/workflows';
import type { ManifestDocuments } from '../../core/plan/manifest';
import { helm, sharedWorker, uniqueName } from '../helpers/env';
import { kubectl } from '../helpers/kube';
import { eventually } from '../helpers/processes';

const GROUPS = 30;
const CHARTS_PER_GROUP = 10;
/** Temporal's advice: keep a run's history well under 50,000 events; the bound. */
const MAX_HISTORY_EVENTS = 10_000;

/**
 * Drill 7: a manifest of 300 small charts in 30 groups (sequenced groups, charts in parallel
 * inside each) on the sandbox, with the real helm. It completes, every release is deployed
 * once, and no single workflow run's history comes near Temporal's limits: the manifest's one
 * run (deployRun) holds every group's and chart's steps.
 */
describe('drill: a manifest of 300 charts in 30 groups', () => {
  const namespace = uniqueName('large');
  const harness = sharedWorker();

  afterAll(async () => {
    await kubectl('delete', 'namespace', namespace, '--wait=false').catch(() => '');
  });

  function documents(): ManifestDocuments {
    const groups: Record<string, ArmadaChartGroupSpec> = {};
    const charts: Record<string, ArmadaChartSpec> = {};
    for (let g = 0; g < GROUPS; g++) {
      const names = Array.from({ length: CHARTS_PER_GROUP }, (_, c) => `c-${g}-${c}`);
      groups[`g-${g}`] = kinds.ArmadaChartGroup.spec.parse({ sequenced: false, chart_group: names });
      for (const name of names) {
        // A ConfigMap each: 300 releases of Services and pods would fill the shared sandbox's
        // Service IP range (a /24) and fake nodes.
        charts[name] = kinds.ArmadaChart.spec.parse({
          release: name,
          namespace,
          source: { type: 'local', location: 'examples/charts/settings' },
          values: { settings: { logLevel: name } },
        }) as ArmadaChartSpec;
      }
    }
    const spec = kinds.ArmadaManifest.spec.parse({
      release_prefix: 'big',
      chart_groups: Object.keys(groups),
    }) as ArmadaManifestSpec;
    return { namespace: 'default', manifest: { name: namespace, spec }, groups, charts };
  }

  it('completes; every release is deployed at revision 1; no run exceeds 10,000 history events', async () => {
    const { client, taskQueue } = harness();
    const started = Date.now();
    const workflowId = await startRun(client, taskQueue, manifestRun(documents()));
    const outcome = (await client.workflow.getHandle(workflowId).result()) as ManifestOutcome;
    const seconds = (Date.now() - started) / 1000;
    expect(outcome.state).toBe('deployed');
    expect(outcome.groups).toHaveLength(GROUPS);

    const releases = JSON.parse(await helm('list', '-n', namespace, '--max', '1000', '-o', 'json')) as {
      name: string;
      status: string;
      revision: string;
    }[];
    expect(releases).toHaveLength(GROUPS * CHARTS_PER_GROUP);
    expect(releases.filter((r) => r.status !== 'deployed' || r.revision !== '1')).toEqual([]);

    // Every run on this drill's task queue: the manifest's deployRun alone, its groups and charts
    // inside it (no children: docs/design/one-workflow.md); visibility lags its close by a moment.
    const runs = await eventually('every run listed as closed', async () => {
      const listed = [];
      for await (const run of client.workflow.list({
        query: `TaskQueue = '${taskQueue}' AND ExecutionStatus = 'Completed'`,
      }))
        listed.push(run);
      return listed.length === 1 ? listed : undefined;
    });
    expect(runs.map((r) => [r.workflowId, r.type])).toEqual([[workflowId, 'deployRun']]);
    const sizes: { workflowId: string; events: number }[] = [];
    for (const run of runs) {
      const history = await client.workflow.getHandle(run.workflowId, run.runId).fetchHistory();
      sizes.push({ workflowId: run.workflowId, events: history.events?.length ?? 0 });
    }
    const largest = sizes.reduce((a, b) => (b.events > a.events ? b : a));
    expect(largest.events).toBeLessThan(MAX_HISTORY_EVENTS);
    // The figures docs/contributing/testing.md quotes.
    console.log(
      `large manifest: ${GROUPS * CHARTS_PER_GROUP} charts in ${seconds.toFixed(1)} s; ` +
        `largest history ${largest.events} events (${largest.workflowId})`,
    );
  }, 900_000);
});
