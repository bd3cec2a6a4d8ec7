import { Client, Connection } from '@temporalio/client';
import { appendFile, copyFile, mkdir, mkdtemp, rm } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import path from 'node:path';
import type { ArmadaChartSpecInput } from '../../api/chart';
import { NonRetryable } from '../../core/failures';
import {
  keyringSecret,
  serveExampleCharts,
  signArgs,
  signingKey,
  type ExampleChartSources,
  type RemoteSourceType,
} from '../helpers/chart-servers';
import { activityFailureOf, chartRuns } from '../helpers/chart-runs';
import { helm, uniqueName } from '../helpers/env';
import { applyObjects, armadaObject, installCrds, kubectl } from '../helpers/kube';
import { startDebugWorker, type ProductProcess } from '../helpers/processes';

/**
 * Verified charts (`source.verify`) on the real stack: the example chart `settings` packaged and
 * signed here with keys gpg makes for this file (`helm package --sign`), served with its .prov
 * as a .tgz, from a Helm repository and from an OCI registry (helm push uploads the .prov as a
 * layer), deployed by the worker process (dist/) with the signers' public keys from a Secret of
 * the ArmadaChart's namespace; and charts that must not pass: tampered with after signing,
 * signed by a key the keyring does not hold, never signed.
 */
describe('verified charts: helm provenance checked against a keyring Secret, before any release is touched', () => {
  const objects = uniqueName('pv-cr');
  const releases = uniqueName('pv-rel');
  const taskQueue = uniqueName('pv-queue');
  const verify = { keyring_secret: 'signers' };
  let work: string;
  let charts: ExampleChartSources;
  let worker: ProductProcess;
  let connection: Connection;
  let client: Client;
  /** Where the tampered archive (a byte appended after signing) is served, its .prov beside it. */
  let tamperedUrl: string;
  /** `settings` 0.2.0, signed by a key the keyring does not hold, in the registry. */
  let untrustedOci: string;
  const chartRunsOf = chartRuns(() => client, objects, taskQueue);

  const chartSpec = (name: string, source: ArmadaChartSpecInput['source']): ArmadaChartSpecInput => ({
    release: name,
    namespace: releases,
    source,
    wait: { timeout: 60, resources: [] },
  });
  /** Runs the ArmadaChart `name` as the bridge would, on this file's worker; its outcome or failure. */
  const run = (name: string, spec: ArmadaChartSpecInput) => chartRunsOf.outcome(name, spec);
  const history = async (release: string) =>
    (
      JSON.parse(await helm('history', release, '-n', releases, '-o', 'json', '--max', '10')) as {
        revision: number;
        status: string;
      }[]
    ).map((h) => `${h.revision} ${h.status}`);
  const noRelease = async (release: string) =>
    expect(JSON.parse(await helm('list', '-n', releases, '-o', 'json', '--filter', `^${release}$`))).toEqual(
      [],
    );

  beforeAll(async () => {
    work = await mkdtemp(path.join(tmpdir(), 'armada-provenance-'));
    const [signer, stranger] = await Promise.all([
      signingKey(path.join(work, 'keys'), 'armada-signer'),
      signingKey(path.join(work, 'keys'), 'stranger'),
    ]);
    charts = await serveExampleCharts(work, ['settings'], { sign: signer });
    const archive = path.basename(new URL(charts.source('tar', 'settings').location!).pathname);
    const tampered = path.join(charts.www.dir, 'tampered');
    await mkdir(tampered);
    await copyFile(path.join(charts.www.dir, archive), path.join(tampered, archive));
    await copyFile(path.join(charts.www.dir, `${archive}.prov`), path.join(tampered, `${archive}.prov`));
    await appendFile(path.join(tampered, archive), Buffer.from([0]));
    tamperedUrl = `${charts.www.url}/tampered/${archive}`;
    const strangers = path.join(work, 'strangers');
    const settings = path.resolve(__dirname, '../../examples/charts/settings');
    await charts.helm('package', settings, '--version', '0.2.0', '-d', strangers, ...signArgs(stranger));
    const ociBase = charts.source('oci', 'settings').location!.replace(/\/settings$/, '/untrusted');
    await charts.helm('push', path.join(strangers, 'settings-0.2.0.tgz'), ociBase);
    untrustedOci = `${ociBase}/settings`;

    await installCrds();
    await kubectl('create', 'namespace', objects);
    await kubectl('create', 'namespace', releases);
    await applyObjects(objects, [await keyringSecret('signers', signer)]);
    worker = await startDebugWorker(taskQueue, charts.helmEnv);
    connection = await Connection.connect({ address: process.env.TEMPORAL_ADDRESS });
    client = new Client({ connection });
  });
  afterAll(async () => {
    await worker?.stop();
    await connection?.close();
    await charts?.close();
    if (work) await rm(work, { recursive: true, force: true });
    await kubectl('delete', 'namespace', objects, releases, '--ignore-not-found', '--wait=false');
  });

  it.each<RemoteSourceType>(['tar', 'repo', 'oci'])(
    'a %s chart signed by a key of the keyring deploys',
    async (type) => {
      const name = `${type}-signed`;
      const spec = chartSpec(name, { ...charts.source(type, 'settings'), verify });
      expect(await run(name, spec)).toMatchObject({ action: 'installed', revision: 1 });
    },
  );

  it("a tampered archive fails for good, naming the chart, the release and helm's reason; the deployed revision stays", async () => {
    const name = 'tampered';
    const signed = chartSpec(name, { ...charts.source('tar', 'settings'), verify });
    expect(await run(name, signed)).toMatchObject({ action: 'installed', revision: 1 });
    const failure = activityFailureOf(
      await run(name, {
        ...signed,
        source: { type: 'tar', location: tamperedUrl, verify },
        values: { a: 1 },
      }),
    );
    expect(failure).toMatchObject({ type: NonRetryable.ChartUnverified, nonRetryable: true });
    expect(failure.message).toContain(
      `provenance: ArmadaChart ${objects}/${name} (release ${releases}/${name}) tar chart`,
    );
    expect(failure.message).toMatch(/sha256 sum does not match for settings-0\.1\.0\.tgz/);
    expect(failure.message).toContain(`(keyring Secret ${objects}/signers)`);
    expect(await history(name)).toEqual(['1 deployed']);
  });

  it('a chart signed by a key the keyring does not hold fails for good; no release', async () => {
    const failure = activityFailureOf(
      await run('stranger', chartSpec('stranger', { type: 'oci', location: untrustedOci, verify })),
    );
    expect(failure).toMatchObject({ type: NonRetryable.ChartUnverified, nonRetryable: true });
    expect(failure.message).toContain(
      `provenance: ArmadaChart ${objects}/stranger (release ${releases}/stranger) oci chart`,
    );
    expect(failure.message).toContain('signature made by unknown entity');
    await noRelease('stranger');
  });

  it('a chart without a provenance file fails for good when it must be verified, and deploys when it need not', async () => {
    // The stranger's chart, its .prov left behind: a tar URL with nothing beside it.
    const unsigned = path.join(charts.www.dir, 'unsigned');
    await mkdir(unsigned);
    await copyFile(
      path.join(work, 'strangers', 'settings-0.2.0.tgz'),
      path.join(unsigned, 'settings-0.2.0.tgz'),
    );
    const location = `${charts.www.url}/unsigned/settings-0.2.0.tgz`;
    const failure = activityFailureOf(
      await run('unsigned', chartSpec('unsigned', { type: 'tar', location, verify })),
    );
    expect(failure).toMatchObject({ type: NonRetryable.ChartUnverified, nonRetryable: true });
    expect(failure.message).toContain(`no provenance file: HTTP 404 from ${location}.prov`);
    await noRelease('unsigned');
    expect(await run('unsigned', chartSpec('unsigned', { type: 'tar', location }))).toMatchObject({
      action: 'installed',
    });
  });

  it('an OCI chart pushed without its provenance file fails for good when it must be verified', async () => {
    const unsigned = path.join(work, 'unsigned-oci');
    await mkdir(unsigned);
    await copyFile(
      path.join(work, 'strangers', 'settings-0.2.0.tgz'),
      path.join(unsigned, 'settings-0.2.0.tgz'),
    );
    const base = charts.source('oci', 'settings').location!.replace(/\/settings$/, '/unsigned');
    await charts.helm('push', path.join(unsigned, 'settings-0.2.0.tgz'), base);
    const failure = activityFailureOf(
      await run(
        'unsigned-oci',
        chartSpec('unsigned-oci', { type: 'oci', location: `${base}/settings`, verify }),
      ),
    );
    expect(failure).toMatchObject({ type: NonRetryable.ChartUnverified, nonRetryable: true });
    expect(failure.message).toContain(
      `provenance: ArmadaChart ${objects}/unsigned-oci (release ${releases}/unsigned-oci) oci chart ${base}/settings: no provenance file: `,
    );
    await noRelease('unsigned-oci');
  });

  it('a missing keyring Secret fails for good before anything is fetched, saying how to make it', async () => {
    const spec = chartSpec('no-keyring', {
      ...charts.source('repo', 'settings'),
      verify: { keyring_secret: 'nowhere' },
    });
    const failure = activityFailureOf(await run('no-keyring', spec));
    expect(failure).toMatchObject({
      type: NonRetryable.ChartUnverified,
      message: `provenance: ArmadaChart ${objects}/no-keyring (release ${releases}/no-keyring) source.verify.keyring_secret (Secret nowhere): Secret nowhere not found in namespace ${objects}; create it with the signers' public keys: kubectl create secret generic nowhere --from-file=keyring=pubring.gpg`,
    });
    await noRelease('no-keyring');
  });

  it.each(['local', 'git'])(
    'the API server refuses verify on a %s source, naming the field',
    async (type) => {
      const location = type === 'local' ? 'examples/charts/settings' : 'https://git.example.com/charts.git';
      const object = armadaObject(
        'ArmadaChart',
        `${type}-verify`,
        chartSpec(`${type}-verify`, { type, location, verify } as ArmadaChartSpecInput['source']),
      );
      const refused = await applyObjects(objects, [object]).catch((err: Error) => err.message);
      expect(refused).toContain('spec.source.verify: Invalid value');
      expect(refused).toContain(
        'only a packaged chart (tar, repo, oci) has a helm provenance file to verify',
      );
    },
  );
});
