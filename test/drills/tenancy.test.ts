import { Client, Connection, WorkflowFailedError, WorkflowNotFoundError } from '@temporalio/client';
import { execFile } from 'node:child_process';
import { appendFile, mkdir, mkdtemp, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import path from 'node:path';
import { promisify } from 'node:util';
import { stringify } from 'yaml';
import { chartRun } from '../../runs/requests';
import { progressQuery } from '../../workflows/messages';
import { rootMessage } from '../../core/failures';
import { armadaChartSpec } from '../../api/chart';
import { GROUP, VERSION } from '../../api/common';
import { objectWorkflowId, releaseWorkflowId } from '../../core/plan/names';
import { helm, uniqueName } from '../helpers/env';
import { historyText } from '../helpers/histories';
import { keyringSecret, serveFiles, signArgs, signingKey } from '../helpers/chart-servers';
import {
  applyObjects,
  applyPolicy,
  armadaObject,
  deploymentState,
  eventMessages,
  grantedRole,
  handLabelledDeployment,
  helloChart,
  installCrds,
  kubectl,
  settingsChart,
} from '../helpers/kube';
import { serviceAccountKubeconfig } from '../helpers/kubeconfig';
import { databaseFiles, placesHolding } from '../helpers/leaks';
import {
  WORKER_POLLING,
  eventually,
  startBridge,
  startProcess,
  type ProductProcess,
} from '../helpers/processes';
import { freePort, startDevServer } from '../helpers/temporal';

/**
 * The hostile-tenant drill (issue 18): tenant A tries to reach past its namespace, and every
 * attempt is refused by name, starts no workflow and leaves every release and Deployment as it
 * was. See docs/contributing/testing.md.
 *
 * The product runs as a multi-tenant cluster installs it: the operator chart with its defaults
 * (the worker's own role reads no Secret and deploys nothing) and each tenant's ServiceAccount
 * `deployer` bound to the chart's deploy role in its own namespace (rbac.deploy.serviceAccounts),
 * the bridge's default ServiceAccount (tenancy.defaultServiceAccount). Its own dev server keeps
 * a database file, searched with the processes' logs for the tenant's Secret.
 */
const json = async (...args: string[]) => JSON.parse(await kubectl(...args, '-o', 'json'));
/** `kubectl auth can-i`'s answer, "yes" or "no" (it exits 1 for no). */
const canI = (...args: string[]) =>
  kubectl('auth', 'can-i', ...args).then(
    (out) => out.trim(),
    (err: { stdout?: string }) => err.stdout?.trim() ?? String(err),
  );
const hello = path.resolve(__dirname, '../../examples/charts/hello');

describe('hostile tenant: namespace boundaries, allow-lists and adoption (bridge process, real worker, helm, sandbox)', () => {
  const teamA = uniqueName('team-a');
  const teamB = uniqueName('team-b');
  /** A namespace the policy grants tenant A, where A's ServiceAccount has no rights. */
  const shared = uniqueName('shared');
  /** The operator chart's release: the tenants' ServiceAccounts and the worker's roles. */
  const operator = uniqueName('tenancy-operator');
  const fullname = `${operator}-armada-temporal`;
  const taskQueue = uniqueName('tenancy-queue');
  const processes: ProductProcess[] = [];
  let dir: string;
  let worker: ProductProcess;
  let bridge: ProductProcess;
  let connection: Connection;
  let client: Client;
  /** Where the drill's Temporal is and its task queue, as armadactl reads them. */
  let temporalEnv: Record<string, string>;
  /** The message of an object's Invalid condition, once the bridge has set it. */
  const invalid = (kind: string, namespace: string, name: string) =>
    eventually(
      `${kind} ${namespace}/${name} marked Invalid`,
      async () => {
        const status = (await json('get', kind, name, '-n', namespace)).status;
        const condition = status?.conditions?.find((c: { type: string }) => c.type === 'Invalid');
        return condition?.status === 'True' ? (condition.message as string) : undefined;
      },
      { process: bridge },
    );

  /** Why a chart of tenant A (or of `namespace`) failed (status.reason), once it has. */
  const failedReason = (name: string, namespace = teamA) =>
    eventually(
      `${name} failed`,
      async () => {
        const status = (await json('get', 'act', name, '-n', namespace)).status;
        return status?.actual_state === 'failed' ? (status.reason as string) : undefined;
      },
      { process: bridge },
    );

  const noRun = async (workflowId: string) => {
    const described = await client.workflow
      .getHandle(workflowId)
      .describe()
      .catch((err: unknown) => err);
    expect(described).toBeInstanceOf(WorkflowNotFoundError);
  };

  /** What an attempt must leave alone: both tenants' releases and tenant B's Deployments. */
  const untouched = async () => ({
    releases: [await helm('list', '-n', teamA, '-o', 'json'), await helm('list', '-n', teamB, '-o', 'json')],
    deployments: (await json('get', 'deployments', '-n', teamB)).items.map(
      (d: { metadata: { name: string; resourceVersion: string } }) =>
        `${d.metadata.name}@${d.metadata.resourceVersion}`,
    ),
  });

  const secret = (name: string, valuesYaml: string) => ({
    apiVersion: 'v1',
    kind: 'Secret',
    metadata: { name },
    stringData: { 'values.yaml': valuesYaml },
  });

  const deployer = (name: string, namespace: string) => ({
    apiVersion: `${GROUP}/${VERSION}`,
    kind: 'Deployer',
    metadata: { name },
    spec: {
      type: 'canary',
      deployment: { name, namespace, image: 'nginx', version: '1.25.3', labels: { app: name }, replicas: 2 },
      steps: [{ percent: 50, sleep: 1 }],
    },
  });

  beforeAll(async () => {
    await installCrds();
    for (const ns of [teamA, teamB, shared, operator]) await kubectl('create', 'namespace', ns);
    // Team A may reach only the chart server it names, may target `shared` as well as its own
    // namespace, and may never adopt.
    await applyPolicy(`sources-${teamA}`, {
      namespaces: [teamA],
      target_namespaces: [shared],
      url_prefixes: ['https://charts.team-a.example/'],
    });
    const tenants = [teamA, teamB].flatMap((ns, i) => [
      '--set',
      `rbac.deploy.serviceAccounts[${i}].namespace=${ns}`,
      '--set',
      `rbac.deploy.serviceAccounts[${i}].name=deployer`,
    ]);
    await helm(
      'install',
      operator,
      path.resolve(__dirname, '../../deploy/chart'),
      '--namespace',
      operator,
      '--skip-crds',
      // The tests install the admission policies with the CRDs (installCrds), outside any release.
      '--set',
      'admissionPolicies.install=false',
      '--set',
      'worker.replicas=0',
      '--set',
      'bridge.replicas=0',
      ...tenants,
    );
    dir = await mkdtemp(path.join(tmpdir(), 'armada-tenancy-'));
    const port = await freePort();
    processes.push(await startDevServer(port, { dbFile: path.join(dir, 'temporal.db') }));
    const env = { TEMPORAL_ADDRESS: `127.0.0.1:${port}`, ARMADA_TASK_QUEUE: taskQueue };
    temporalEnv = env;
    const workerKubeconfig = await serviceAccountKubeconfig(
      process.env.KUBECONFIG!,
      operator,
      `${fullname}-worker`,
      path.join(dir, 'worker.kubeconfig'),
      '1h',
    );
    worker = startProcess('dist/worker/main.js', {
      ...env,
      ARMADA_KUBECONFIG: workerKubeconfig,
      ARMADA_LOG_LEVEL: 'debug',
    });
    processes.push(worker);
    await worker.printed(WORKER_POLLING);
    bridge = startBridge(
      teamA,
      { ...env, ARMADA_NAMESPACES: `${teamA},${teamB}`, ARMADA_DEFAULT_SERVICE_ACCOUNT: 'deployer' },
      { ownNamespaceOnly: true },
    );
    processes.push(bridge);
    connection = await Connection.connect({ address: env.TEMPORAL_ADDRESS });
    client = new Client({ connection });
    // Tenant B's own Deployer, and a release in team A that someone installed by hand.
    await applyObjects(teamB, [deployer('nginx', teamB)]);
    await helm('install', 'hand', hello, '-n', teamA, '--set', 'replicaCount=1');
    await eventually(
      "tenant B's Deployer deployed",
      async () =>
        (await json('get', 'dpl', 'nginx', '-n', teamB)).status?.phase === 'Completed' ? true : undefined,
      { process: bridge },
    );
  }, 180_000);
  afterAll(async () => {
    for (const p of processes.reverse()) await p.stop();
    await connection?.close();
    await helm('uninstall', operator, '--namespace', operator, '--ignore-not-found').catch(() => '');
    for (const ns of [teamA, teamB, shared, operator])
      await kubectl('delete', 'namespace', ns, '--wait=false');
  });

  it.each([
    [
      'deploys into kube-system',
      'ArmadaChart',
      () => helloChart('sys', 'kube-system'),
      'spec.namespace: namespace boundary',
    ],
    [
      "deploys into tenant B's namespace",
      'ArmadaChart',
      () => helloChart('into-b', teamB),
      'spec.namespace: namespace boundary',
    ],
    [
      'fetches a chart from outside the allow-list',
      'ArmadaChart',
      () =>
        helloChart('evil', teamA, {
          source: { type: 'tar', location: 'https://evil.example/hello-0.1.0.tgz' },
        }),
      'spec.source.location: url_prefixes: https://evil.example/hello-0.1.0.tgz starts with none of the url_prefixes',
    ],
    [
      'adopts a release installed by hand',
      'ArmadaChart',
      () => helloChart('hand', teamA, { adopt: true }),
      'spec.adopt: allow_adoption',
    ],
    [
      "runs a Deployer named like tenant B's, in tenant B's namespace",
      'Deployer',
      () => deployer('nginx', teamB),
      'spec.deployment.namespace: namespace boundary',
    ],
  ])('tenant A %s: refused by name, no run, nothing touched', async (_what, kind, object, rule) => {
    const before = await untouched();
    const obj = object();
    await applyObjects(teamA, [obj]);
    const message = await invalid(kind, teamA, obj.metadata.name);
    expect(message).toContain(rule);
    // The page that explains the rules.
    expect(message).toMatch(/ \(see docs\/how-to\/multi-tenancy\.md\)$/);
    await noRun(objectWorkflowId(kind as 'ArmadaChart' | 'Deployer', teamA, obj.metadata.name));
    if (kind === 'ArmadaChart') {
      const { namespace, release } = obj.spec as { namespace: string; release: string };
      await noRun(releaseWorkflowId(namespace, release));
    }
    expect(await untouched()).toEqual(before);
  });

  it("a second Deployer of tenant B's Deployments, even in B's own namespace, is a rival: refused, nothing touched", async () => {
    const before = await untouched();
    const copycat = { ...deployer('nginx', teamB), metadata: { name: 'copycat' } };
    await applyObjects(teamB, [copycat]);
    expect(await invalid('Deployer', teamB, 'copycat')).toContain(
      `Deployment ${teamB}/nginx-* is already deployed by Deployer ${teamB}/nginx`,
    );
    await noRun(objectWorkflowId('Deployer', teamB, 'copycat'));
    expect(await untouched()).toEqual(before);
  });

  it("tenant A points a local chart out of the worker's charts root: the API server refuses it, naming the field", async () => {
    const before = await untouched();
    const escape = helloChart('escape', teamA, { source: { type: 'local', location: 'examples/../../etc' } });
    const refused = await applyObjects(teamA, [escape]).catch((err: Error) => err.message);
    expect(refused).toContain('spec.source.location');
    await noRun(objectWorkflowId('ArmadaChart', teamA, 'escape'));
    expect(await untouched()).toEqual(before);
  });

  it('a chart that names a release installed by hand, without adopt, fails before it writes: the release keeps its revision', async () => {
    await applyObjects(teamA, [helloChart('hand', teamA, { adopt: false })]);
    const reason = await failedReason('hand');
    expect(reason).toContain(`release ${teamA}/hand exists and armada-temporal did not create it`);
    const history = JSON.parse(await helm('history', 'hand', '-n', teamA, '-o', 'json'));
    expect(history.map((h: { revision: number; status: string }) => `${h.revision} ${h.status}`)).toEqual([
      '1 deployed',
    ]);
  });

  it('a permitted adoption: with allow_adoption granted to tenant B, adopt: true takes over a release installed by hand, as the next revision', async () => {
    // Issue 32.10: only the refused adoption ran on the real stack.
    await applyPolicy(`adoption-${teamB}`, { namespaces: [teamB], allow_adoption: true });
    await helm('install', 'adopted', hello, '-n', teamB, '--set', 'replicaCount=1');
    await applyObjects(teamB, [helloChart('adopted', teamB, { adopt: true })]);
    await eventually(
      'adopted Deployed',
      async () => {
        const status = (await json('get', 'act', 'adopted', '-n', teamB)).status;
        return status?.actual_state === 'deployed' && status.satisfied ? true : undefined;
      },
      { process: bridge },
    );
    const history = JSON.parse(await helm('history', 'adopted', '-n', teamB, '-o', 'json'));
    expect(
      history.map((h: { revision: number; status: string; description: string }) =>
        [h.revision, h.status, h.description.startsWith('armada-digest=') ? 'armada' : h.description].join(
          ' ',
        ),
      ),
    ).toEqual(['1 superseded Install complete', '2 deployed armada']);
  });

  it("a namespace the policy grants but tenant A's ServiceAccount may not write stays empty: the run acts as that ServiceAccount", async () => {
    await applyObjects(teamA, [helloChart('grabs', shared, { service_account_name: 'deployer' })]);
    const reason = await failedReason('grabs');
    expect(reason).toContain(`system:serviceaccount:${teamA}:deployer`);
    expect(reason).toMatch(/forbidden/i);
    expect(JSON.parse(await helm('list', '-n', shared, '-o', 'json'))).toEqual([]);
  });

  it("tenant A names tenant B's Secret in values_from: it is looked for in A's namespace only, and the run fails before it writes", async () => {
    await applyObjects(teamB, [secret('b-values', 'greeting: from-tenant-b')]);
    const values_from = [{ kind: 'Secret', name: 'b-values' }];
    await applyObjects(teamA, [helloChart('peek', teamA, { service_account_name: 'deployer', values_from })]);
    expect(await failedReason('peek')).toContain(`Secret b-values not found in namespace ${teamA}`);
    expect(JSON.parse(await helm('list', '-n', teamA, '-o', 'json', '--filter', '^peek$'))).toEqual([]);
  });

  it('the good path: tenant A deploys into its own namespace as its ServiceAccount, values_from its own Secret, which no history, database or log holds; deleting the chart uninstalls as that ServiceAccount', async () => {
    const greeting = `from-tenant-a-${teamA}`;
    await applyObjects(teamA, [secret('a-values', `greeting: ${greeting}`)]);
    const values_from = [{ kind: 'Secret', name: 'a-values' }];
    // No service_account_name: the bridge's default, `deployer`, as a tenant relying on it writes.
    await applyObjects(teamA, [helloChart('good', teamA, { values_from })]);
    await eventually(
      'good satisfied',
      async () => ((await json('get', 'act', 'good', '-n', teamA)).status?.satisfied ? true : undefined),
      { process: bridge },
    );
    expect(JSON.parse(await helm('status', 'good', '-n', teamA, '-o', 'json')).info.status).toBe('deployed');
    expect(await helm('get', 'values', 'good', '-n', teamA)).toContain(greeting);
    const history = historyText(
      await client.workflow.getHandle(objectWorkflowId('ArmadaChart', teamA, 'good')).fetchHistory(),
    );
    expect(history).toContain('"name":"a-values"'); // the reference travels, the value does not
    expect(history).toContain(`"service_account_name":"deployer"`);
    expect(worker.output()).toContain('"level":"debug"');
    expect(
      placesHolding([greeting], {
        history,
        ...(await databaseFiles(dir)),
        worker: worker.output(),
        bridge: bridge.output(),
      }),
    ).toEqual([]);

    await kubectl('delete', 'act', 'good', '-n', teamA, '--wait=false');
    await eventually(
      'good uninstalled',
      async () =>
        JSON.parse(await helm('list', '-n', teamA, '-o', 'json', '--filter', '^good$')).length === 0
          ? true
          : undefined,
      { process: bridge },
    );
  });

  it("a manifest's rollback acts as its charts' ServiceAccount too: the release its run installed is uninstalled", async () => {
    const manifest = {
      apiVersion: `${GROUP}/${VERSION}`,
      kind: 'ArmadaManifest',
      metadata: { name: 'undone' },
      spec: { release_prefix: 'undone', chart_groups: ['undone'], on_failure: 'rollback' },
    };
    const group = {
      apiVersion: `${GROUP}/${VERSION}`,
      kind: 'ArmadaChartGroup',
      metadata: { name: 'undone' },
      spec: { sequenced: true, chart_group: ['first', 'broken'] },
    };
    const broken = helloChart('broken', teamA, {
      source: { type: 'local', location: 'examples/charts/no-such-chart' },
    });
    // What lists the charts first: a chart seen before its group starts a standalone run, which
    // the manifest must then clear (bridge/standalone.ts) — a path of its own, not this test's.
    await applyObjects(teamA, [manifest, group, helloChart('first', teamA), broken]);
    const reason = await eventually(
      'the manifest failed and rolled back',
      async () => {
        const status = (await json('get', 'amf', 'undone', '-n', teamA)).status;
        return status?.actual_state === 'failed' ? (status.reason as string) : undefined;
      },
      { process: bridge },
    );
    expect(reason).toContain('broken: local chart examples/charts/no-such-chart');
    // The run installed undone-first as team A's deployer; its rollback (before the status above)
    // must uninstall it as the same ServiceAccount: the worker itself may not even list team A's
    // release Secrets, and helm uninstall --ignore-not-found, denied the list, finds nothing.
    expect(JSON.parse(await helm('list', '-n', teamA, '-o', 'json', '--filter', '^undone-first$'))).toEqual(
      [],
    );
  }, 180_000);

  it('a chart deployed on its own, then listed by a manifest with a release_prefix: its own release is uninstalled as its ServiceAccount, and the manifest deploys', async () => {
    const releases = async (filter: string) =>
      (
        JSON.parse(await helm('list', '-n', teamA, '-o', 'json', '--filter', filter)) as {
          name: string;
          status: string;
        }[]
      ).map((r) => `${r.name} ${r.status}`);
    // No service_account_name: its standalone run acts as the bridge's default, `deployer`.
    await applyObjects(teamA, [helloChart('alone', teamA)]);
    await eventually(
      'alone deployed on its own',
      async () => ((await releases('^alone$')).join() === 'alone deployed' ? true : undefined),
      { process: bridge },
    );
    await applyObjects(teamA, [
      armadaObject('ArmadaChartGroup', 'later', { chart_group: ['alone'] }),
      armadaObject('ArmadaManifest', 'later', { release_prefix: 'later', chart_groups: ['later'] }),
    ]);
    // On the code before, the uninstall of `alone` ran as the worker, which may not list team A's
    // release Secrets: it failed, and the bridge started it again every ~150 ms, forever.
    await eventually(
      'the manifest satisfied',
      async () => ((await json('get', 'amf', 'later', '-n', teamA)).status?.satisfied ? true : undefined),
      { process: bridge },
    );
    expect([...(await releases('^alone$')), ...(await releases('^later-alone$'))]).toEqual([
      'later-alone deployed',
    ]);
    const runs = [];
    for await (const info of client.workflow.list({
      query: `WorkflowId = '${objectWorkflowId('ArmadaChart', teamA, 'alone')}'`,
    }))
      runs.push(`${(info.memo as { mode?: string } | undefined)?.mode} ${info.status.name}`);
    expect(runs.sort()).toEqual(['deploy COMPLETED', 'uninstall COMPLETED']);
  }, 180_000);

  it("the worker's own ServiceAccount reads no Secret and writes no workload, in any namespace: runs deploy with their ServiceAccount's rights alone", async () => {
    const asWorker = ['--as', `system:serviceaccount:${operator}:${fullname}-worker`];
    for (const ns of [teamA, teamB, shared, 'kube-system'])
      for (const verb of ['get secrets', 'list secrets', 'create deployments.apps'])
        expect(`${verb} in ${ns}: ${await canI(...asWorker, ...verb.split(' '), '-n', ns)}`).toBe(
          `${verb} in ${ns}: no`,
        );
  });

  it("a tampered chart, signed and then changed on tenant B's own chart server: refused for provenance before any release is touched", async () => {
    const before = await untouched();
    const signer = await signingKey(path.join(dir, 'keys'), 'team-b-signer');
    const www = path.join(dir, 'www');
    await mkdir(www);
    await helm('package', hello, '--destination', www, ...signArgs(signer));
    await appendFile(path.join(www, 'hello-0.1.0.tgz'), Buffer.from([0]));
    const served = await serveFiles(www);
    try {
      await applyObjects(teamB, [await keyringSecret('signers', signer)]);
      const source = {
        type: 'tar',
        location: `${served.url}/hello-0.1.0.tgz`,
        verify: { keyring_secret: 'signers' },
      };
      await applyObjects(teamB, [helloChart('tampered', teamB, { source })]);
      const reason = await failedReason('tampered', teamB);
      expect(reason).toContain(`provenance: ArmadaChart ${teamB}/tampered (release ${teamB}/tampered)`);
      expect(reason).toContain('sha256 sum does not match for hello-0.1.0.tgz');
      expect(await untouched()).toEqual(before);
    } finally {
      served.server.closeAllConnections();
      await new Promise((resolve) => served.server.close(resolve));
    }
  });

  it("runs that bypass the bridge (a Temporal client's start, armadactl apply -f) aim a team-A chart at kube-system: the worker refuses them by the rule before it impersonates, nothing written", async () => {
    // An administrator over-granted team A's ServiceAccount: it may deploy into kube-system. Only
    // the policy (which grants team A `shared`, not kube-system) stands between it and there.
    const overGrant = `${teamA}-over-grant`;
    await kubectl(
      'create',
      'rolebinding',
      overGrant,
      '-n',
      'kube-system',
      `--clusterrole=${fullname}-deploy`,
      `--serviceaccount=${teamA}:deployer`,
    );
    const releaseIn = (release: string) =>
      helm('list', '-n', 'kube-system', '-o', 'json', '--filter', `^${release}$`).then(JSON.parse);
    try {
      // The chart run `armadactl apply` and the bridge start, from a Temporal client of its own.
      const direct = uniqueName('direct');
      const chart = settingsChart(
        direct,
        'kube-system',
        { from: 'team-a' },
        { service_account_name: 'deployer' },
      );
      const spec = armadaChartSpec.parse(chart.spec);
      const run = chartRun({ kind: 'ArmadaChart', namespace: teamA, name: direct, spec });
      const handle = await client.workflow.start(run.workflowType, {
        taskQueue,
        workflowId: run.workflowId,
        args: [run.input],
      });
      const failed = await handle.result().catch((err: unknown) => err);
      expect(failed).toBeInstanceOf(WorkflowFailedError);
      const message = rootMessage(failed);
      expect(message).toContain('namespace boundary');
      expect(message).toContain(`ArmadaChart ${teamA}/${direct}`);
      expect(message).toContain(`release kube-system/${direct}`);
      expect(await releaseIn(direct)).toEqual([]);
      // Refused before anything ran as the ServiceAccount: no activity completed but the run's
      // status writes (the worker's own, to the chart's custom resource, not on the cluster here).
      const { events } = await handle.fetchHistory();
      const typeOf = new Map(
        events!
          .filter((e) => e.activityTaskScheduledEventAttributes)
          .map((e) => [String(e.eventId), e.activityTaskScheduledEventAttributes!.activityType!.name]),
      );
      const completed = events!.flatMap((e) =>
        e.activityTaskCompletedEventAttributes
          ? [typeOf.get(String(e.activityTaskCompletedEventAttributes.scheduledEventId))]
          : [],
      );
      expect(completed.filter((type) => type !== 'reportStatus')).toEqual([]);

      // The reproduction: the same chart in a file, applied with armadactl (no bridge).
      const fromFile = uniqueName('from-file');
      const file = path.join(dir, 'into-kube-system.yaml');
      await writeFile(
        file,
        stringify({
          ...settingsChart(fromFile, 'kube-system', { from: 'team-a' }, { service_account_name: 'deployer' }),
          metadata: { name: fromFile, namespace: teamA },
        }),
      );
      const applied = await promisify(execFile)(
        process.execPath,
        [path.resolve(__dirname, '../../bin/armadactl.js'), 'apply', '-f', file, '--wait'],
        { env: { ...process.env, ...temporalEnv } },
      ).then(
        () => 'exit 0',
        (err: { code: number; stdout: string; stderr: string }) =>
          `exit ${err.code}: ${err.stdout}${err.stderr}`,
      );
      expect(applied).toMatch(/^exit 1: /);
      expect(applied).toContain('namespace boundary');
      expect(await releaseIn(fromFile)).toEqual([]);
    } finally {
      await kubectl('delete', 'rolebinding', overGrant, '-n', 'kube-system', '--ignore-not-found');
    }
  });
  it("a run started directly that claims to be kube-system's, as a kube-system ServiceAccount: the worker may not borrow it (impersonate is granted by name), nothing written", async () => {
    // No policy names kube-system, so the claim passes the policy check: the ServiceAccount is
    // the boundary. The worker may impersonate only rbac.deploy.serviceAccounts (A's and B's deployer).
    const borrowed = uniqueName('borrowed');
    await kubectl('create', 'serviceaccount', borrowed, '-n', 'kube-system');
    try {
      const name = uniqueName('claimed');
      const chart = settingsChart(
        name,
        'kube-system',
        { from: 'nobody' },
        { service_account_name: borrowed },
      );
      const run = chartRun({
        kind: 'ArmadaChart',
        namespace: 'kube-system',
        name,
        spec: armadaChartSpec.parse(chart.spec),
      });
      const handle = await client.workflow.start(run.workflowType, {
        taskQueue,
        workflowId: run.workflowId,
        args: [run.input],
      });
      const message = rootMessage(await handle.result().catch((err: unknown) => err));
      expect(message).toContain(
        `User "system:serviceaccount:${operator}:${fullname}-worker" cannot impersonate resource "serviceaccounts"`,
      );
      expect(
        JSON.parse(await helm('list', '-n', 'kube-system', '-o', 'json', '--filter', `^${name}$`)),
      ).toEqual([]);
    } finally {
      await kubectl('delete', 'serviceaccount', borrowed, '-n', 'kube-system', '--ignore-not-found');
    }
  });

  it("a Deployment hand-labelled into tenant B's Deployer set, named as the Deployer names its own, is neither scaled nor deleted by B's next rollout: a Warning Event names it", async () => {
    // Anyone who may write Deployments in team B (here the admin) can set the label; more
    // replicas than B's own made it the stable side of the canary, scaled down and then deleted.
    await applyObjects(teamB, [handLabelledDeployment('nginx-1.24.0', 'nginx', '1.24.0', 5)]);
    const before = await deploymentState(teamB, 'nginx-1.24.0');
    const next = deployer('nginx', teamB);
    next.spec.deployment.version = '1.26.0';
    await applyObjects(teamB, [next]);
    await eventually(
      "tenant B's Deployer at 1.26.0",
      async () => {
        const status = (await json('get', 'dpl', 'nginx', '-n', teamB)).status;
        return status?.phase === 'Completed' && status.current_version === '1.26.0' ? true : undefined;
      },
      { process: bridge },
    );
    expect(await deploymentState(teamB, 'nginx-1.24.0')).toBe(before);
    expect(await eventMessages(teamB, 'NotOwned')).toEqual([
      `Deployment ${teamB}/nginx-1.24.0 carries armada.airshipit.org/deployer=nginx but Deployer ${teamB}/nginx did not create it (not owned): it is never scaled or deleted`,
    ]);
    // The record of what B's Deployer owns is its status, which B's own ServiceAccount may not write.
    const asB = ['--as', `system:serviceaccount:${teamB}:deployer`];
    expect(
      await canI(...asB, 'patch', 'deployers.armada.airshipit.org', '--subresource=status', '-n', teamB),
    ).toBe('no');
  });

  it("an approval by the spec's author at a not_author gate is refused by name: the gate still waits and nothing past it deploys; another user's passes it", async () => {
    // The admission policies (deploy/admission/, installed by installCrds) record who applied the
    // spec (armada.airshipit.org/author) and who wrote each action (armada.airshipit.org/by).
    const charts = [
      settingsChart('sod-first', teamA, { n: '1' }),
      settingsChart('sod-second', teamA, { n: '2' }),
    ];
    await applyObjects(teamA, [
      armadaObject('ArmadaManifest', 'sod', {
        release_prefix: 'sod',
        chart_groups: ['sod-first', 'sod-second'],
        approval: { before: ['sod-second'], not_author: true },
      }),
      armadaObject('ArmadaChartGroup', 'sod-first', { chart_group: ['sod-first'] }),
      armadaObject('ArmadaChartGroup', 'sod-second', { chart_group: ['sod-second'] }),
      ...charts,
    ]);
    const author = (await json('get', 'amf', 'sod', '-n', teamA)).metadata.annotations?.[
      'armada.airshipit.org/author'
    ];
    expect(author).toEqual(expect.any(String));
    const handle = client.workflow.getHandle(objectWorkflowId('ArmadaManifest', teamA, 'sod'));
    const gateWaits = () =>
      eventually(
        'the manifest waits at its gate',
        async () =>
          (await handle.query(progressQuery)).gate?.name === 'before group sod-second' ? true : undefined,
        { process: bridge },
      );
    await gateWaits();
    /** The bridge's Action Events of the manifest (listed by name, not by time). */
    const actionEvents = async () =>
      (await json('get', 'events', '-n', teamA, '--field-selector', 'involvedObject.name=sod,reason=Action'))
        .items as {
        metadata: { name: string };
        type: string;
        message: string;
      }[];
    /** Annotates an approval (`as`: kubectl's impersonation flags) and returns the bridge's new Event of it. */
    const approve = async (...as: string[]) => {
      const seen = new Set((await actionEvents()).map((e) => e.metadata.name));
      await kubectl(
        ...as,
        'annotate',
        '--overwrite',
        'amf',
        'sod',
        '-n',
        teamA,
        'armada.airshipit.org/action=approve',
      );
      return eventually(
        'the action taken',
        async () => (await actionEvents()).find((e) => !seen.has(e.metadata.name)),
        { process: bridge },
      );
    };
    const refused = await approve();
    expect(refused.type).toBe('Warning');
    expect(refused.message).toContain(
      `not_author: ${author} wrote this spec (ArmadaManifest/sod) and may not approve it`,
    );
    await gateWaits();
    expect(JSON.parse(await helm('list', '-n', teamA, '-o', 'json', '--filter', '^sod-sod-second$'))).toEqual(
      [],
    );
    // Another user (cluster-admin rights, so RBAC lets them annotate) passes it.
    const passed = await approve('--as', 'sod-approver', '--as-group', 'system:masters');
    expect(passed.message).toMatch(/^sod-approver asked to approve: approved before group sod-second/);
    await eventually(
      'the manifest deployed',
      async () =>
        (await json('get', 'amf', 'sod', '-n', teamA)).status?.actual_state === 'deployed' ? true : undefined,
      { process: bridge },
    );
    const { approvals } = await handle.query(progressQuery);
    expect(approvals).toEqual([
      expect.objectContaining({ by: 'sod-approver', gate: 'before group sod-second' }),
    ]);
  }, 120_000);

  it("tenant A's user writes an approval whose armada.airshipit.org/by names someone else: the API server refuses the write, naming the rule, and the gate still waits", async () => {
    // A person of team A who may steer team A's manifests (RBAC patch), as an admin grants it.
    const alice = `alice@${teamA}`;
    await applyObjects(
      teamA,
      grantedRole('steer-gated', { user: alice }, [
        { apiGroups: [GROUP], resources: ['armadamanifests'], verbs: ['get', 'patch'] },
      ]),
    );
    await applyObjects(teamA, [
      helloChart('gated-web', teamA),
      armadaObject('ArmadaChartGroup', 'gated', { chart_group: ['gated-web'] }),
      armadaObject('ArmadaManifest', 'gated', {
        release_prefix: 'gated',
        chart_groups: ['gated'],
        approval: { before: ['gated'] },
      }),
    ]);
    const workflowId = objectWorkflowId('ArmadaManifest', teamA, 'gated');
    await eventually(
      'the manifest waiting at its gate',
      async () =>
        (await json('get', 'amf', 'gated', '-n', teamA)).status?.actual_state === 'waitingapproval'
          ? true
          : undefined,
      { process: bridge },
    );
    const refused = await kubectl(
      'annotate',
      'amf',
      'gated',
      '-n',
      teamA,
      `--as=${alice}`,
      'armada.airshipit.org/action=approve',
      'armada.airshipit.org/by=ops-boss',
    ).catch((err: { stderr?: string }) => err.stderr ?? String(err));
    expect(refused).toContain(
      `ValidatingAdmissionPolicy 'armada-authenticated-annotations' with binding 'armada-authenticated-annotations' denied request: rule by-is-the-writer: armada.airshipit.org/by names ops-boss but the API server authenticated this write as ${alice}`,
    );
    // Nothing changed: no action stored, no message reached the run, the gate still waits.
    const annotations = (await json('get', 'amf', 'gated', '-n', teamA)).metadata.annotations ?? {};
    expect(annotations['armada.airshipit.org/action']).toBeUndefined();
    const history = await client.workflow.getHandle(workflowId).fetchHistory();
    expect(
      (history.events ?? []).filter(
        (e) => e.workflowExecutionSignaledEventAttributes || e.workflowExecutionUpdateAcceptedEventAttributes,
      ),
    ).toEqual([]);
    expect((await json('get', 'amf', 'gated', '-n', teamA)).status.actual_state).toBe('waitingapproval');
  });
});
