import { kinds } from '../../api/kinds';
import type { ArmadaChartSpec } from '../../api/chart';
import { chartRun, startRun } from '../../runs/requests';
import { helm, helmProcesses, sharedWorker, uniqueName } from '../helpers/env';
import { kubectl } from '../helpers/kube';
import { eventually } from '../helpers/processes';
import { chartResult } from '../helpers/chart-runs';

interface HelmRevision {
  revision: number;
  status: string;
  description: string;
}

/**
 * Drill 5: the helm process of an upgrade is killed (SIGKILL) while it waits, leaving the release
 * `pending-upgrade`. The upgrade activity's next attempt finds the release pending; once the
 * operation's timeout (15 s, plus 10 s of grace) is over — an orphaned helm could still have
 * been at work until then — it rolls the release back to the last deployed revision and
 * upgrades again. No human steps in.
 */
describe('drill: helm killed mid-upgrade', () => {
  const namespace = uniqueName('helmkill');
  const release = uniqueName('web');
  const label = `armada-drill-${release}`;
  const harness = sharedWorker();

  const chart = (values: Record<string, unknown>) => ({
    kind: 'ArmadaChart' as const,
    name: release,
    namespace: 'default',
    spec: kinds.ArmadaChart.spec.parse({
      release,
      namespace,
      source: { type: 'local', location: 'examples/charts/hello' },
      values: { replicaCount: 1, ...values },
      // helm's own watcher keeps the helm process alive until the pods are Ready (or 15 s).
      wait: { timeout: 15, native: { enabled: true } },
    }) as ArmadaChartSpec,
  });
  const deploy = async (values: Record<string, unknown>) => {
    const { client, taskQueue } = harness();
    return client.workflow.getHandle(await startRun(client, taskQueue, chartRun(chart(values))));
  };

  afterAll(async () => {
    await kubectl('label', 'nodes', '--all', `${label}-`).catch(() => '');
    await kubectl('delete', 'namespace', namespace, '--wait=false').catch(() => '');
  });

  it('the retried upgrade recovers the pending release and completes; revisions tell exactly what happened', async () => {
    await (await deploy({})).result();

    // The new revision's pods may only run on nodes with a label none has yet: helm waits.
    const run = await deploy({ image: { tag: '2.0.0' }, nodeSelector: { [label]: 'yes' } });
    const [pid] = await eventually('helm upgrade waiting', async () => {
      const status = JSON.parse(await helm('status', release, '-n', namespace, '-o', 'json'));
      const pids = await helmProcesses('upgrade', release);
      return status.info.status === 'pending-upgrade' && pids.length === 1 ? pids : undefined;
    });
    process.kill(pid, 'SIGKILL');
    await kubectl('label', 'nodes', '--all', `${label}=yes`);

    const outcome = await chartResult(run);
    expect(outcome).toMatchObject({ action: 'upgraded', revision: 4 });
    const history = JSON.parse(
      await helm('history', release, '-n', namespace, '-o', 'json'),
    ) as HelmRevision[];
    expect(history.map((h) => [h.revision, h.status, h.description.replace(/=.*/, '=…')])).toEqual([
      [1, 'superseded', 'armada-digest=…'],
      // The killed upgrade: it never finished, and stays on record as it was left.
      [2, 'pending-upgrade', 'Preparing upgrade'],
      // The next attempt's recovery: back to the last revision that ran…
      [3, 'superseded', 'Rollback to 1'],
      // …then the upgrade again.
      [4, 'deployed', 'armada-digest=…'],
    ]);
    const image = await kubectl(
      'get',
      'deployment',
      release,
      '-n',
      namespace,
      '-o',
      'jsonpath={.spec.template.spec.containers[0].image}',
    );
    expect(image).toBe('ghcr.io/stefanprodan/podinfo:2.0.0');
    // Three attempts of the upgrade activity: the killed one; one a second later that found the
    // release pending within the operation's time and asked to be retried when it is up; the one
    // that recovered and upgraded.
    const attempts = (await run.fetchHistory()).events
      ?.map((e) => e.activityTaskStartedEventAttributes?.attempt ?? 0)
      .filter((attempt) => attempt > 1);
    expect(attempts).toEqual([3]);
  });
});
