import { BatchV1Api } from '@kubernetes/client-node';
import type { ArmadaChartSpecInput } from '../../api/chart';
import { NonRetryable } from '../../core/failures';
import { helm, helmHistory, kubeConfig, sharedWorker, uniqueName } from '../helpers/env';
import { kubectl, recordEvents } from '../helpers/kube';
import { eventually } from '../helpers/processes';
import { runChart, runManifest } from '../helpers/runs';

/**
 * ArmadaChart `upgrade.pre.delete` and `protected` on the real stack (worker, helm, sandbox):
 * the objects a delete rule names are gone before helm writes the upgrade, and a release that
 * really failed (a post-install hook pod the sandbox ends with exit code 1, see
 * deploy/sandbox/stages.yaml) is left alone when protected, the group stopping or going on as
 * `continue_processing` says.
 */
describe('upgrade.pre.delete and protected', () => {
  const namespace = uniqueName('guard');
  const harness = sharedWorker();

  /** examples/charts/tested as `release`, with `values`; `spec` adds to the ArmadaChart's spec. */
  const tested = (
    release: string,
    values: Record<string, unknown>,
    spec: Partial<ArmadaChartSpecInput> = {},
  ): ArmadaChartSpecInput => ({
    release,
    namespace,
    source: { type: 'local', location: 'examples/charts/tested' },
    values,
    wait: { timeout: 60, resources: [] },
    ...spec,
  });
  const revisions = async (release: string) =>
    (await helmHistory(release, namespace)).map((h) => [h.revision, h.status]);

  afterAll(() => kubectl('delete', 'namespace', namespace, '--ignore-not-found', '--wait=false'));

  it('deletes the Jobs a pre.delete rule names before helm writes the upgrade', async () => {
    const batch = kubeConfig().makeApiClient(BatchV1Api);
    const migrate = { 'app.kubernetes.io/instance': 'migrate', 'app.kubernetes.io/component': 'migrate' };
    // A Job's pod template is immutable: an upgrade that changes it needs the old Job gone.
    const spec = (tag: string) =>
      tested(
        'migrate',
        { migration: { enabled: true, tag } },
        {
          wait: { timeout: 60, resources: [{ type: 'job', labels: migrate }] },
          upgrade: { pre: { delete: [{ type: 'job', labels: migrate }] } },
        },
      );
    expect((await runChart(harness(), 'migrate', spec('1'))).result).toMatchObject({ action: 'installed' });
    const job = () => batch.readNamespacedJob({ namespace, name: 'migrate-migrate' });
    const first = (await job()).metadata!.uid!;

    const watched = await recordEvents([
      {
        path: `/apis/batch/v1/namespaces/${namespace}/jobs`,
        labelSelector: 'app.kubernetes.io/component=migrate',
      },
      { path: `/api/v1/namespaces/${namespace}/secrets`, labelSelector: 'owner=helm,name=migrate' },
    ]);
    try {
      // Both watches run once they have listed what exists: the Job and revision 1's Secret.
      await eventually('both watches listing', async () =>
        watched.events.filter((e) => e.type === 'ADDED').length >= 2 ? true : undefined,
      );
      expect((await runChart(harness(), 'migrate', spec('2'))).result).toMatchObject({
        action: 'upgraded',
        revision: 2,
      });
    } finally {
      watched.stop();
    }
    const at = (type: string, match: (name: string, uid: string) => boolean) =>
      watched.events.findIndex((e) => e.type === type && match(e.name, e.uid));
    const deleted = at('DELETED', (_name, uid) => uid === first);
    const revision2 = at('ADDED', (name) => name === 'sh.helm.release.v1.migrate.v2');
    expect(deleted).toBeGreaterThanOrEqual(0);
    expect(revision2).toBeGreaterThan(deleted);
    const now = await job();
    expect(now.metadata!.uid).not.toBe(first);
    expect(now.spec!.template.spec!.containers[0].image).toBe('registry.local/migrate:2');
    expect(now.status?.succeeded).toBe(1);
  });

  it("deletes the CronJobs a pre.delete rule names (Armada's type cronjob, and v1's job)", async () => {
    const spec = (note: string) =>
      tested(
        'nightly',
        { note },
        { upgrade: { pre: { delete: [{ type: 'cronjob', labels: { task: 'nightly' } }] } } },
      );
    expect((await runChart(harness(), 'nightly', spec('1'))).result).toMatchObject({ action: 'installed' });
    // Two CronJobs beside the release: the rule's labels match one of them.
    for (const [name, task] of [
      ['nightly-report', 'nightly'],
      ['hourly-report', 'hourly'],
    ]) {
      await kubectl('create', 'cronjob', name, '-n', namespace, '--image=busybox', '--schedule=0 0 * * *');
      await kubectl('label', 'cronjob', name, '-n', namespace, `task=${task}`);
    }
    expect((await runChart(harness(), 'nightly', spec('2'))).result).toMatchObject({
      action: 'upgraded',
      revision: 2,
    });
    const left = await kubectl('get', 'cronjobs', '-n', namespace, '-o', 'name');
    expect(left.trim().split('\n')).toEqual(['cronjob.batch/hourly-report']);
  });

  describe('a release whose post-install hook failed', () => {
    /** Manifest keep's charts: release keep-guarded, its hook pod exiting `exitCode`, then keep-after. */
    const charts = (exitCode: number, guarded: Partial<ArmadaChartSpecInput> = {}) => ({
      guarded: tested('guarded', { hook: { enabled: true, exitCode } }, guarded),
      after: tested('after', {}),
    });
    const keep = (exitCode: number, guarded?: Partial<ArmadaChartSpecInput>) =>
      runManifest(harness(), 'keep', { g: { sequenced: true, charts: charts(exitCode, guarded) } });

    // Its one revision is failed, its description helm's error: no digest says it is armada's,
    // only the owner label does (activities/helm/release.ts OWNER_LABEL).
    beforeAll(async () => {
      const end = await runManifest(harness(), 'keep', {
        g: { sequenced: true, charts: { guarded: charts(1).guarded } },
      });
      expect(end.outcome.groups[0].failed).toEqual([
        expect.objectContaining({
          chart: 'guarded',
          error: expect.stringContaining('pod keep-guarded-hook failed'),
        }),
      ]);
    });

    it('is failed on the API server, at the one revision helm wrote', async () => {
      expect(await revisions('keep-guarded')).toEqual([[1, 'failed']]);
    });

    it('protected: is left as it is and stops its sequenced group', async () => {
      const end = await keep(0, { protected: {} });
      expect(end.failure?.type).toBe(NonRetryable.ManifestFailed);
      expect(end.outcome.groups[0].failed).toEqual([
        expect.objectContaining({
          chart: 'guarded',
          error: expect.stringContaining('is failed and protected'),
        }),
      ]);
      expect(await revisions('keep-guarded')).toEqual([[1, 'failed']]);
      expect(
        JSON.parse(await helm('list', '-n', namespace, '--filter', '^keep-after$', '-o', 'json')),
      ).toEqual([]);
    });

    it('protected with continue_processing: is skipped and the group goes on', async () => {
      const end = await keep(0, { protected: { continue_processing: true } });
      expect(end.result?.state).toBe('deployed');
      expect(end.outcome.groups[0].outcomes.map((o) => [o.chart, o.action])).toEqual([
        ['guarded', 'skipped'],
        ['after', 'installed'],
      ]);
      expect(await revisions('keep-guarded')).toEqual([[1, 'failed']]);
      expect(await revisions('keep-after')).toEqual([[1, 'deployed']]);
    });

    it('unprotected: is upgraded, so protection is what kept it', async () => {
      const end = await keep(0);
      expect(end.outcome.groups[0].outcomes.map((o) => [o.chart, o.action])).toEqual([
        ['guarded', 'upgraded'],
        ['after', 'unchanged'],
      ]);
      // Helm marks the failed revision superseded once an upgrade deploys.
      expect(await revisions('keep-guarded')).toEqual([
        [1, 'superseded'],
        [2, 'deployed'],
      ]);
    });
  });
});
