import { Client, Connection } from '@temporalio/client';
import { randomBytes } from 'node:crypto';
import { mkdtemp, rm } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import path from 'node:path';
import type { ArmadaChartSpecInput } from '../../api/chart';
import { serviceAccountUser } from '../../kube/client';
import { NonRetryable } from '../../core/failures';
import {
  serveExampleCharts,
  type ExampleChartSources,
  type RemoteSourceType,
} from '../helpers/chart-servers';
import { uniqueName } from '../helpers/env';
import { activityFailureOf, chartRuns } from '../helpers/chart-runs';
import { applyObjects, grantedRole, kubectl } from '../helpers/kube';
import { placesHolding } from '../helpers/leaks';
import { eventually, grantAnyNamespace, startDebugWorker, type ProductProcess } from '../helpers/processes';

/** What a credential could sit in a history or a log as: the password, and a Basic header's user:password. */
const credentialSecrets = (username: string, password: string) => [password, `${username}:${password}`];

/**
 * Private chart sources on the real stack: the example chart `settings` served by the project's
 * own servers, each asking for one user (HTTP basic auth on the .tgz and Helm repository server
 * and on git http-backend, htpasswd on distribution's registry), deployed by the worker process
 * (dist/, as the operator chart's ServiceAccount, logging at debug) with credentials from a
 * Secret named by `source.secret_ref`. The servers start once for the file.
 */
describe('private chart sources: credentials from source.secret_ref, read by the worker', () => {
  /** The ArmadaCharts' own namespace: the Secrets live here, the releases elsewhere. */
  const objects = uniqueName('ps-cr');
  const releases = uniqueName('ps-rel');
  const taskQueue = uniqueName('ps-queue');
  const user = { username: 'armada', password: `pw-${randomBytes(8).toString('hex')}` };
  const wrongPassword = `wrong-${randomBytes(8).toString('hex')}`;
  let work: string;
  let charts: ExampleChartSources;
  let worker: ProductProcess;
  let connection: Connection;
  let client: Client;
  const chartRunsOf = chartRuns(() => client, objects, taskQueue);

  const secret = (name: string, data: Record<string, string>) => ({
    apiVersion: 'v1',
    kind: 'Secret',
    metadata: { name },
    stringData: data,
  });
  /** The ArmadaChart `name` (release `name`) of `settings` from `type`, with `source` fields added. */
  const chartSpec = (
    name: string,
    type: RemoteSourceType,
    source: Partial<ArmadaChartSpecInput['source']> = {},
  ): ArmadaChartSpecInput => ({
    release: name,
    namespace: releases,
    source: { ...charts.source(type, 'settings'), ...source },
    wait: { timeout: 60, resources: [] },
  });
  /** Runs the ArmadaChart `name` as the bridge would, on this file's worker; its outcome or failure. */
  const run = (name: string, spec: ArmadaChartSpecInput) => chartRunsOf.outcome(name, spec);
  const settingsConfigMap = async (release: string) =>
    JSON.parse(await kubectl('get', 'configmap', release, '-n', releases, '-o', 'json')) as {
      data: Record<string, string>;
    };

  beforeAll(async () => {
    work = await mkdtemp(path.join(tmpdir(), 'armada-private-'));
    charts = await serveExampleCharts(work, ['settings'], { auth: user });
    await kubectl('create', 'namespace', objects);
    // Acting as a ServiceAccount, helm does not create the release's namespace.
    await kubectl('create', 'namespace', releases);
    await applyObjects(objects, [
      secret('login', user),
      secret('wrong-login', { username: user.username, password: wrongPassword }),
      secret('half-login', { username: user.username }),
    ]);
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

  describe.each<RemoteSourceType>(['tar', 'repo', 'oci', 'git'])('a %s source', (type) => {
    it('fails for good without a secret_ref, saying that the server asks for credentials', async () => {
      const failure = activityFailureOf(await run(`${type}-open`, chartSpec(`${type}-open`, type)));
      expect(failure).toMatchObject({ type: NonRetryable.SourceUnauthorized, nonRetryable: true });
      expect(failure.message).toContain(
        'the server asks for credentials: set source.secret_ref to a Secret with keys username and password',
      );
    });

    it('fails for good with a wrong password, naming the Secret and never the password', async () => {
      const spec = chartSpec(`${type}-wrong`, type, { secret_ref: { name: 'wrong-login' } });
      const failure = activityFailureOf(await run(`${type}-wrong`, spec));
      expect(failure).toMatchObject({ type: NonRetryable.SourceUnauthorized, nonRetryable: true });
      expect(failure.message).toContain(
        `the server refused the credentials of Secret ${objects}/wrong-login (source.secret_ref)`,
      );
      expect(failure.message).not.toContain(wrongPassword);
    });

    it("deploys with the Secret's credentials", async () => {
      const spec = chartSpec(`${type}-login`, type, { secret_ref: { name: 'login' } });
      expect(await run(`${type}-login`, spec)).toMatchObject({ action: 'installed', revision: 1 });
      expect((await settingsConfigMap(`${type}-login`)).data).toEqual({ logLevel: 'info' });
    });
  });

  it('fails for good before fetching, naming the Secret, the key and the namespace, when one is missing', async () => {
    const missing = activityFailureOf(
      await run('no-secret', chartSpec('no-secret', 'repo', { secret_ref: { name: 'nowhere' } })),
    );
    expect(missing).toMatchObject({
      type: NonRetryable.CredentialsNotFound,
      nonRetryable: true,
      message: `ArmadaChart ${objects}/no-secret source.secret_ref (Secret nowhere): Secret nowhere not found in namespace ${objects}; create it with keys username and password`,
    });
    const noKey = activityFailureOf(
      await run('no-key', chartSpec('no-key', 'oci', { secret_ref: { name: 'half-login' } })),
    );
    expect(noKey).toMatchObject({
      type: NonRetryable.CredentialsNotFound,
      message: `ArmadaChart ${objects}/no-key source.secret_ref (Secret half-login): Secret ${objects}/half-login has no key password; create it with keys username and password`,
    });
    // Nothing was written: no release of either.
    expect(await kubectl('get', 'secrets', '-n', releases, '-l', 'owner=helm', '-o', 'name')).not.toMatch(
      /no-secret|no-key/,
    );
  });

  it("reads the Secret as the chart's ServiceAccount: refused until that ServiceAccount may get it", async () => {
    // `fetcher` may do anything in the releases' namespace, and nothing in its own.
    const fetcher = { namespace: objects, name: 'fetcher' };
    const fetcherUser = serviceAccountUser(fetcher);
    // A run acting as a ServiceAccount is held to its namespace unless a policy grants more,
    // whoever starts it (the worker checks: activities/policy.ts).
    grantAnyNamespace(objects);
    await applyObjects(objects, [
      { apiVersion: 'v1', kind: 'ServiceAccount', metadata: { name: 'fetcher' } },
    ]);
    await applyObjects(
      releases,
      grantedRole('fetcher', fetcher, [{ apiGroups: ['', 'apps', 'batch'], resources: ['*'], verbs: ['*'] }]),
    );
    const spec = {
      ...chartSpec('as-sa', 'git', { secret_ref: { name: 'login' } }),
      service_account_name: 'fetcher',
    };
    const refused = activityFailureOf(await run('as-sa', spec));
    expect(refused).toMatchObject({ type: NonRetryable.Forbidden, nonRetryable: true });
    expect(refused.message).toContain(
      `read Secret ${objects}/login for ArmadaChart ${objects}/as-sa source.secret_ref (Secret login): HTTP 403`,
    );
    expect(refused.message).toContain(fetcherUser);

    await applyObjects(
      objects,
      grantedRole('fetcher-login', fetcher, [
        { apiGroups: [''], resources: ['secrets'], resourceNames: ['login'], verbs: ['get'] },
      ]),
    );
    // kubectl auth can-i exits 1 while the answer is no.
    await eventually('the grant to reach the authorizer', () =>
      kubectl('auth', 'can-i', 'get', 'secret/login', '-n', objects, '--as', fetcherUser),
    );
    expect(await run('as-sa', spec)).toMatchObject({ action: 'installed', revision: 1 });
  });

  it('keeps the passwords out of the raw histories and the worker output', async () => {
    const secrets = [
      ...credentialSecrets(user.username, user.password),
      ...credentialSecrets(user.username, wrongPassword),
    ];
    const { text, leaks } = await chartRunsOf.searchHistories(secrets);
    expect(leaks).toEqual([]);
    // The references do travel, decoded from the payloads: the search above reads what runs carry.
    expect(text).toContain('"secret_ref":{"name":"wrong-login"}');
    expect(worker.output()).toContain('"level":"debug"');
    expect(placesHolding(secrets, { worker: worker.output() })).toEqual([]);
  });
});
