import { CoreV1Api } from '@kubernetes/client-node';
import { spawn } from 'node:child_process';
import { mkdtemp, readdir, readFile, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import path from 'node:path';
import { helmUninstall } from '../../activities/helm/uninstall';
import { toolPath } from '../../activities/tools';
import { armadaChartSpec } from '../../api/chart';
import type { ChartRun } from '../../core/contracts/workflows';
import { helm, kubeConfig, sharedWorker, uniqueName } from '../helpers/env';
import { eventually } from '../helpers/processes';
import { chartResult, startChart } from '../helpers/chart-runs';

/** The command lines of the helm processes on this machine that name `release`. */
async function helmProcessesOf(release: string): Promise<string[]> {
  const lines = await Promise.all(
    (await readdir('/proc'))
      .filter((pid) => /^\d+$/.test(pid))
      .map((pid) => readFile(`/proc/${pid}/cmdline`, 'utf8').catch(() => '')),
  );
  return lines
    .map((line) => line.split('\0').filter(Boolean))
    .filter((argv) => path.basename(argv[0] ?? '') === 'helm' && argv.includes(release))
    .map((argv) => argv.slice(0, 3).join(' '));
}

describe('the chart workflow on the real stack (dev server, sandbox cluster, helm CLI)', () => {
  const release = uniqueName('hello');
  const namespace = uniqueName('e2e');
  const run = (values: Record<string, unknown>): ChartRun => ({
    chart: 'hello',
    release,
    namespace,
    spec: armadaChartSpec.parse({
      release,
      namespace,
      source: { type: 'local', location: 'examples/charts/hello' },
      values,
      wait: { timeout: 120, labels: { 'app.kubernetes.io/instance': release } },
    }),
  });
  const harness = sharedWorker();

  const execute = async (input: ChartRun) => chartResult(await startChart(harness(), input));

  it('installs the example chart and its pods become Ready', async () => {
    const outcome = await execute(run({ replicaCount: 3 }));
    expect(outcome).toMatchObject({ release, namespace, action: 'installed', before: null, revision: 1 });

    const status = JSON.parse(await helm('status', release, '--namespace', namespace, '--output', 'json'));
    expect(status.info.status).toBe('deployed');

    const pods = await kubeConfig()
      .makeApiClient(CoreV1Api)
      .listNamespacedPod({ namespace, labelSelector: `app.kubernetes.io/instance=${release}` });
    expect(pods.items).toHaveLength(3);
    for (const pod of pods.items) {
      const ready = pod.status?.conditions?.find((c) => c.type === 'Ready');
      expect({ pod: pod.metadata?.name, ready: ready?.status }).toEqual({
        pod: pod.metadata?.name,
        ready: 'True',
      });
    }
  });

  it('leaves an unchanged release alone and upgrades a changed one', async () => {
    expect(await execute(run({ replicaCount: 3 }))).toMatchObject({ action: 'unchanged', revision: 1 });
    expect(await execute(run({ replicaCount: 2 }))).toMatchObject({
      action: 'upgraded',
      before: 1,
      revision: 2,
    });
  });

  it('recovers a release a killed helm left pending-upgrade, then upgrades it', async () => {
    // A helm upgrade that waits for pods that can never be scheduled, killed while it waits.
    const values = path.join(await mkdtemp(path.join(tmpdir(), 'armada-stuck-')), 'values.json');
    await writeFile(values, JSON.stringify({ replicaCount: 1, nodeSelector: { nowhere: 'true' } }));
    const stuck = spawn(toolPath('helm'), [
      'upgrade',
      release,
      'examples/charts/hello',
      '--namespace',
      namespace,
      '--values',
      values,
      '--wait=watcher',
      '--timeout',
      '120s',
    ]);
    const pending = async () =>
      JSON.parse(await helm('status', release, '--namespace', namespace, '--output', 'json')).info.status;
    for (let i = 0; (await pending()) !== 'pending-upgrade'; i++) {
      if (i > 200) throw new Error('helm never marked the release pending-upgrade');
      await new Promise((r) => setTimeout(r, 50));
    }
    stuck.kill('SIGKILL');
    await new Promise((r) => stuck.on('close', r));
    expect(await pending()).toBe('pending-upgrade');

    // Values that revision 2 did not have: after the recovery, an upgrade is still due. (With
    // revision 2's own values, the rollback to 2 already is the wanted release: `unchanged`.)
    const outcome = await execute(run({ replicaCount: 4 }));
    // A manifest rollback would restore revision 2, the last one that ran, not the pending 3.
    expect(outcome).toMatchObject({ action: 'upgraded', before: 2 });
    const history = JSON.parse(
      await helm('history', release, '--namespace', namespace, '--output', 'json'),
    ) as {
      revision: number;
      status: string;
      description: string;
    }[];
    // 3: the killed upgrade (helm keeps it as it was); 4: the rollback to 2, the last
    // deployed revision; 5: the upgrade.
    expect(history.slice(-3).map((h) => [h.revision, h.status])).toEqual([
      [3, 'pending-upgrade'],
      [4, 'superseded'],
      [5, 'deployed'],
    ]);
    expect(history.find((h) => h.revision === 4)?.description).toBe('Rollback to 2');
  });

  it('a cancelled run closes only once its helm write has stopped: no helm of the release outlives the run', async () => {
    // Under churn, the bridge cancels a deploy of an object being deleted and starts its uninstall
    // as soon as the run has closed: a helm install still running then re-created the release.
    const stuck = uniqueName('stuck');
    const handle = await startChart(harness(), {
      ...run({}),
      chart: stuck,
      release: stuck,
      spec: armadaChartSpec.parse({
        release: stuck,
        namespace,
        source: { type: 'local', location: 'examples/charts/hello' },
        // Pods that can never be scheduled: helm's own --wait holds until it is stopped. (Without
        // `native`, helm returns at once and the Armada wait holds: a probe could miss helm.)
        values: { replicaCount: 1, nodeSelector: { nowhere: 'true' } },
        wait: { timeout: 120, native: { enabled: true } },
      }),
    });
    await eventually(
      'helm installing the release',
      async () => (await helmProcessesOf(stuck)).some((p) => p.includes('upgrade')) || undefined,
    );
    await handle.cancel();
    await expect(handle.result()).rejects.toThrow();
    expect(await helmProcessesOf(stuck)).toEqual([]);
  });

  it("takes up again a release its own first install left failed (helm drops the digest from a failed revision's description)", async () => {
    const failedFirst = uniqueName('failed-first');
    const chart = (values: Record<string, unknown>): ChartRun => ({
      ...run(values),
      chart: failedFirst,
      release: failedFirst,
      spec: armadaChartSpec.parse({
        release: failedFirst,
        namespace,
        source: { type: 'local', location: 'examples/charts/hello' },
        values,
        wait: { timeout: 120, labels: { 'app.kubernetes.io/instance': failedFirst } },
      }),
    });
    const start = async (values: Record<string, unknown>) =>
      chartResult(await startChart(harness(), chart(values)));
    // The API server refuses a Deployment whose replicas is not a number: helm records revision 1
    // as failed, described "Release ... failed: ...", with no armada-digest.
    await expect(start({ replicaCount: 'many' })).rejects.toThrow();
    const first = JSON.parse(await helm('history', failedFirst, '-n', namespace, '-o', 'json'));
    expect(first.map((h: { status: string }) => h.status)).toEqual(['failed']);
    expect(first[0].description).not.toContain('armada-digest');
    // Fixed, the next run upgrades it: armada-temporal created it, as the release's label says.
    expect(await start({ replicaCount: 1 })).toMatchObject({ action: 'upgraded', before: 1, revision: 2 });
  });

  it('an uninstall as an identity that may not read the release fails, naming why, and leaves it installed', async () => {
    const nobody = { namespace, name: 'nobody' }; // no such ServiceAccount: no rights at all
    await expect(helmUninstall({ release, namespace, actAs: nobody })).rejects.toThrow(
      `User "system:serviceaccount:${namespace}:nobody" cannot list resource "secrets"`,
    );
    expect(JSON.parse(await helm('status', release, '-n', namespace, '-o', 'json')).info.status).toBe(
      'deployed',
    );
    // A release that is not there is no error.
    await expect(helmUninstall({ release: uniqueName('never'), namespace })).resolves.toBeUndefined();
  });
});
