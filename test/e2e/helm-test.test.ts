import { CoreV1Api } from '@kubernetes/client-node';
import type { ArmadaChartSpecInput } from '../../api/chart';
import { NonRetryable } from '../../core/failures';
import { helm, helmHistory, kubeConfig, sharedWorker, uniqueName } from '../helpers/env';
import { kubectl } from '../helpers/kube';
import { runChart, runManifest } from '../helpers/runs';

/**
 * ArmadaChart `test` on the real stack: `helm test` against the sandbox, whose Stages end a
 * Helm test pod with the exit code the chart gives it (deploy/sandbox/stages.yaml). A passing
 * test completes the chart; a failing one fails it after its release was written, and the
 * manifest's `on_failure` decides what becomes of that release.
 */
describe('ArmadaChart test.enabled: helm test with test pods that end', () => {
  const namespace = uniqueName('htest');
  const harness = sharedWorker();
  const core = kubeConfig().makeApiClient(CoreV1Api);

  /** examples/charts/tested as `release`, its test pod exiting `exitCode`, tested after each write. */
  const tested = (release: string, exitCode: number): ArmadaChartSpecInput => ({
    release,
    namespace,
    source: { type: 'local', location: 'examples/charts/tested' },
    values: { test: { exitCode } },
    wait: { timeout: 60, resources: [] },
    test: { enabled: true, timeout: 60 },
  });
  /** How the release's test pod ended, as the API server has it. */
  const testPod = async (release: string) => {
    const pod = await core.readNamespacedPod({ namespace, name: `${release}-test` });
    return {
      phase: pod.status?.phase,
      exitCodes: pod.status?.containerStatuses?.map((c) => c.state?.terminated?.exitCode),
    };
  };
  /** The phase helm recorded for the release's last test run. */
  const lastTestPhase = async (release: string) => {
    const status = JSON.parse(await helm('status', release, '-n', namespace, '-o', 'json')) as {
      hooks?: { name: string; last_run?: { phase?: string } }[];
    };
    return status.hooks?.find((h) => h.name === `${release}-test`)?.last_run?.phase;
  };
  const revisions = async (release: string) =>
    (await helmHistory(release, namespace)).map((h) => [h.revision, h.status]);

  afterAll(() => kubectl('delete', 'namespace', namespace, '--ignore-not-found', '--wait=false'));

  it('installs a chart whose test passes: its test pod Succeeded with exit code 0', async () => {
    const end = await runChart(harness(), 'passes', tested('passes', 0));
    expect(end.result).toMatchObject({ action: 'installed', revision: 1 });
    expect(await testPod('passes')).toEqual({ phase: 'Succeeded', exitCodes: [0] });
    expect(await lastTestPhase('passes')).toBe('Succeeded');
  });

  it('fails a chart whose test fails, naming the test pod; on_failure stop leaves the tested revision', async () => {
    const release = 'stop-app';
    expect(
      (await runManifest(harness(), 'stop', { g: { charts: { app: tested('app', 0) } } })).result,
    ).toMatchObject({ state: 'deployed' });
    const started = Date.now();
    const end = await runManifest(harness(), 'stop', { g: { charts: { app: tested('app', 1) } } });
    expect(end.failure?.type).toBe(NonRetryable.ManifestFailed);
    expect(end.outcome.state).toBe('stopped');
    expect(end.outcome.groups[0].failed).toEqual([
      expect.objectContaining({ chart: 'app', error: expect.stringContaining(`pod ${release}-test failed`) }),
    ]);
    // A test that failed is not run again and again: the run ends within one test's time.
    expect(Date.now() - started).toBeLessThan(30_000);
    expect(await testPod(release)).toEqual({ phase: 'Failed', exitCodes: [1] });
    expect(await lastTestPhase(release)).toBe('Failed');
    expect(await revisions(release)).toEqual([
      [1, 'superseded'],
      [2, 'deployed'],
    ]);
  });

  it('on_failure rollback puts an upgraded release back to its revision and uninstalls a new one', async () => {
    const prefix = 'back';
    expect(
      (await runManifest(harness(), prefix, { g: { charts: { old: tested('old', 0) } } })).result,
    ).toMatchObject({ state: 'deployed' });
    const end = await runManifest(
      harness(),
      prefix,
      { g: { charts: { old: tested('old', 1), new: tested('new', 1) } } },
      { on_failure: 'rollback' },
    );
    expect(end.outcome.state).toBe('rolled-back');
    expect(end.outcome.groups[0].failed.map((f) => f.chart).sort()).toEqual(['new', 'old']);
    expect([...end.outcome.rolledBack].sort()).toEqual([`${namespace}/back-new`, `${namespace}/back-old`]);
    const history = await helmHistory('back-old', namespace);
    expect(history.map((h) => [h.revision, h.status])).toEqual([
      [1, 'superseded'],
      [2, 'superseded'],
      [3, 'deployed'],
    ]);
    expect(history[2].description).toBe('Rollback to 1');
    expect(JSON.parse(await helm('get', 'values', 'back-old', '-n', namespace, '-o', 'json'))).toEqual({
      test: { exitCode: 0 },
    });
    expect(JSON.parse(await helm('list', '-n', namespace, '--filter', '^back-new$', '-o', 'json'))).toEqual(
      [],
    );
  });
});
