import { AppsV1Api } from '@kubernetes/client-node';
import { Client, Connection, WorkflowFailedError } from '@temporalio/client';
import { ApplicationFailure } from '@temporalio/common';
import { randomBytes } from 'node:crypto';
import { mkdtemp, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import path from 'node:path';
import { keyedDigest } from '../../activities/charts/digest';
import { fetchAndDigest } from '../../activities/charts/prepare';
import type { ArmadaChartSpecInput } from '../../api/chart';
import type { ChartOutcome } from '../../core/contracts/workflows';
import { NonRetryable } from '../../core/failures';
import { canaryWorkflowId } from '../../core/plan/names';
import { helm, kubeConfig, uniqueName } from '../helpers/env';
import { chartRuns } from '../helpers/chart-runs';
import { applyObjects, kubectl } from '../helpers/kube';
import { placesHolding } from '../helpers/leaks';
import { eventually, startDebugWorker, type ProductProcess } from '../helpers/processes';

/** A value no test writes anywhere but into a Secret: its presence anywhere else is a leak. */
const secretValue = (prefix: string) => `${prefix}${randomBytes(8).toString('hex')}`;

/**
 * ArmadaChart `values_from` on the real stack: the worker process (dist/, as the operator chart's
 * ServiceAccount, logging at debug), the dev server, helm and the sandbox. The Secrets' values
 * reach helm, from prepareChart's digest, the upgrade and the canary copies' helm template alike,
 * yet appear in no workflow history (the chart runs' nor the canary child's) and not in what
 * the worker printed.
 */
describe('values_from: values read from Secrets inside the activities, never carried by the run', () => {
  /** The ArmadaCharts' own namespace: the Secrets live here, the releases elsewhere. */
  const objects = uniqueName('vf-cr');
  const releases = uniqueName('vf-rel');
  const taskQueue = uniqueName('vf-queue');
  const written: string[] = [];
  let worker: ProductProcess;
  let connection: Connection;
  let client: Client;
  const charts = chartRuns(() => client, objects, taskQueue);

  /** Creates or updates a Secret of the charts' namespace; the value is remembered as one never to leak. */
  const applySecret = async (name: string, data: Record<string, string>, ...secrets: string[]) => {
    written.push(...secrets);
    await applyObjects(objects, [{ apiVersion: 'v1', kind: 'Secret', metadata: { name }, stringData: data }]);
  };
  const start = charts.start;
  const deploy = async (name: string, spec: ArmadaChartSpecInput) =>
    (await (await start(name, spec)).result()) as ChartOutcome;
  const values = async (release: string) =>
    JSON.parse(await helm('get', 'values', release, '-n', releases, '-o', 'json')) as Record<string, unknown>;
  /** The worker's release digest key (ARMADA_DIGEST_KEY_FILE), known here to check what it records. */
  const digestKey = randomBytes(32);

  beforeAll(async () => {
    await kubectl('create', 'namespace', objects);
    const keyFile = path.join(await mkdtemp(path.join(tmpdir(), 'vf-digest-key-')), 'key');
    await writeFile(keyFile, digestKey.toString('base64'));
    worker = await startDebugWorker(taskQueue, { ARMADA_DIGEST_KEY_FILE: keyFile });
    connection = await Connection.connect({ address: process.env.TEMPORAL_ADDRESS });
    client = new Client({ connection });
  });
  afterAll(async () => {
    await worker?.stop();
    await connection?.close();
    await kubectl('delete', 'namespace', objects, releases, '--ignore-not-found', '--wait=false');
  });

  describe('a chart whose values come from Secrets', () => {
    const token = secretValue('tok-');
    const password = secretValue('pw-');
    const newPassword = secretValue('pw2-');
    const spec: ArmadaChartSpecInput = {
      release: 'vault',
      namespace: releases,
      source: { type: 'local', location: 'examples/charts/settings' },
      values: { settings: { logLevel: 'info' } },
      values_from: [
        { kind: 'Secret', name: 'vault-values' },
        { kind: 'Secret', name: 'vault-password', key: 'password', target_path: 'settings.password' },
        { kind: 'ConfigMap', name: 'vault-absent', optional: true },
      ],
      wait: { timeout: 60, resources: [] },
    };

    it('deploys them merged in order under the inline values; an optional missing one is skipped', async () => {
      await applySecret(
        'vault-values',
        { 'values.yaml': `settings:\n  token: ${token}\n  logLevel: debug\n` },
        token,
      );
      await applySecret('vault-password', { password }, password);
      expect(await deploy('vault', spec)).toMatchObject({ action: 'installed', revision: 1 });
      // The inline logLevel wins over the Secret's, as Flux's inline values win over valuesFrom.
      expect(await values('vault')).toEqual({ settings: { logLevel: 'info', token, password } });
      const configMap = JSON.parse(await kubectl('get', 'configmap', 'vault', '-n', releases, '-o', 'json'));
      expect(configMap.data).toMatchObject({ token, password });
    });

    it('leaves the release alone while the Secrets are unchanged, and upgrades it when one changes', async () => {
      expect(await deploy('vault', spec)).toMatchObject({ action: 'unchanged', revision: 1 });
      await applySecret('vault-password', { password: newPassword }, newPassword);
      expect(await deploy('vault', spec)).toMatchObject({ action: 'upgraded', before: 1, revision: 2 });
      expect(await values('vault')).toMatchObject({ settings: { password: newPassword } });
    });

    it('records a keyed digest: a release recorded with the unkeyed digest before stays unchanged, and its next upgrade records the keyed form', async () => {
      const legacy: ArmadaChartSpecInput = {
        ...spec,
        release: 'legacy',
        values_from: [
          { kind: 'Secret', name: 'legacy-password', key: 'password', target_path: 'settings.password' },
        ],
      };
      /** The unkeyed digest of the chart and values as they are now: what armada recorded before. */
      const unkeyedNow = async () =>
        (
          await fetchAndDigest({
            source: { type: 'local', location: 'examples/charts/settings' },
            values: legacy.values,
            valuesFrom: {
              chart: 'legacy',
              namespace: objects,
              references: [
                {
                  kind: 'Secret',
                  name: 'legacy-password',
                  key: 'password',
                  target_path: 'settings.password',
                },
              ],
            },
          })
        ).unkeyedDigest;
      const descriptions = async () =>
        (
          JSON.parse(await helm('history', 'legacy', '-n', releases, '-o', 'json')) as {
            description: string;
          }[]
        ).map((h) => h.description);
      const before = secretValue('pw-');
      await applySecret('legacy-password', { password: before }, before);
      expect(await deploy('legacy', legacy)).toMatchObject({ action: 'installed', revision: 1 });
      const unkeyed = await unkeyedNow();
      expect(await descriptions()).toEqual([`armada-digest=${keyedDigest(unkeyed, digestKey)}`]);

      // Revision 2 as a worker before keyed digests recorded it: the same chart and values.
      await helm(
        'upgrade',
        'legacy',
        path.resolve(__dirname, '../../examples/charts/settings'),
        '-n',
        releases,
        '--reuse-values',
        '--description',
        `armada-digest=${unkeyed}`,
      );
      expect(await deploy('legacy', legacy)).toMatchObject({ action: 'unchanged', revision: 2 });
      // The worker says which releases the roll-in has yet to reach (its output arrives by pipe).
      const told = await eventually(
        'the worker logs the release still on the unkeyed digest',
        async () => {
          const lines = worker
            .output()
            .split('\n')
            .filter((line) => line.includes('release recorded with an unkeyed digest'));
          return lines.length ? lines.map((line) => JSON.parse(line) as Record<string, unknown>) : undefined;
        },
        { process: worker, timeoutMs: 10_000 },
      );
      expect(told).toEqual([
        expect.objectContaining({ release: 'legacy', namespace: releases, revision: 2 }),
      ]);

      const after = secretValue('pw2-');
      await applySecret('legacy-password', { password: after }, after);
      expect(await deploy('legacy', legacy)).toMatchObject({ action: 'upgraded', before: 2, revision: 3 });
      const unkeyedAfter = await unkeyedNow();
      const recorded = (await descriptions())[2];
      expect(recorded).toBe(`armada-digest=${keyedDigest(unkeyedAfter, digestKey)}`);
      // Whoever reads the release cannot test a guess of the password with sha256 any more.
      expect(recorded).not.toContain(unkeyedAfter);
      expect(recorded).toMatch(/^armada-digest=hmac-sha256:[0-9a-f]{64}$/);
    });

    it('fails for good, naming the chart, the reference and the namespace, when a Secret is missing', async () => {
      const missing = await start('lost', {
        ...spec,
        release: 'lost',
        values_from: [{ kind: 'Secret', name: 'nowhere' }],
      });
      const failure = await missing.result().then(
        () => undefined,
        (err: unknown) => err,
      );
      expect(failure).toBeInstanceOf(WorkflowFailedError);
      // The workflow's failure is the activity's (ActivityFailure), caused by readValuesFrom's.
      const cause = (failure as WorkflowFailedError).cause?.cause;
      expect(cause).toBeInstanceOf(ApplicationFailure);
      expect(cause).toMatchObject({
        type: NonRetryable.ValuesNotFound,
        nonRetryable: true,
        message: `ArmadaChart ${objects}/lost values_from[0] (Secret nowhere, key values.yaml): Secret nowhere not found in namespace ${objects}; create it, or set optional: true to deploy without it`,
      });
    });
  });

  it("renders a canary's copies with them: the copy runs the Secret's image tag", async () => {
    const tag = secretValue('t');
    const newTag = secretValue('t');
    const apps = kubeConfig().makeApiClient(AppsV1Api);
    const spec: ArmadaChartSpecInput = {
      release: 'web',
      namespace: releases,
      source: { type: 'local', location: 'examples/charts/hello' },
      values: { replicaCount: 2 },
      values_from: [{ kind: 'Secret', name: 'web-tag', key: 'tag', target_path: 'image.tag' }],
      wait: { timeout: 60 },
      // The hold during which the copy is looked at; the run ends when it does.
      canary: { steps: [{ percent: 50, sleep: 15 }] },
    };
    await applySecret('web-tag', { tag }, tag);
    expect(await deploy('web', spec)).toMatchObject({ action: 'installed', revision: 1 });

    await applySecret('web-tag', { tag: newTag }, newTag);
    const upgrade = await start('web', spec);
    const image = (name: string) =>
      apps
        .readNamespacedDeployment({ namespace: releases, name })
        .then((d) => d.spec!.template.spec!.containers[0].image);
    expect(await eventually('the canary copy', () => image('web-canary'), { process: worker })).toBe(
      `ghcr.io/stefanprodan/podinfo:${newTag}`,
    );
    expect(await upgrade.result()).toMatchObject({ action: 'upgraded', before: 1, revision: 2 });
    expect(await image('web')).toBe(`ghcr.io/stefanprodan/podinfo:${newTag}`);
    charts.runs.push({ workflowId: canaryWorkflowId(objects, 'web') });
  });

  it('keeps every Secret value out of the raw histories and the worker output', async () => {
    expect(written.length).toBeGreaterThanOrEqual(5);
    const { text, leaks } = await charts.searchHistories(written);
    expect(leaks).toEqual([]);
    // The references do travel, decoded from the payloads: the search above reads what runs carry.
    expect(text).toContain('"target_path":"settings.password"');
    expect(worker.output()).toContain('"level":"debug"');
    expect(placesHolding(written, { worker: worker.output() })).toEqual([]);
  });
});
