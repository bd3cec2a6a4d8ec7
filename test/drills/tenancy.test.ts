import { Client, Connection, WorkflowNotFoundError } from '@temporalio/client';
import { mkdtemp } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import path from 'node:path';
import { GROUP, VERSION } from '../../api/common';
import { objectWorkflowId, releaseWorkflowId } from '../../workflows/plan/names';
import { helm, uniqueName } from '../helpers/env';
import { historyText } from '../helpers/histories';
import {
  applyObjects,
  applyPolicy,
  armadaObject,
  grantedRole,
  helloChart,
  installCrds,
  kubectl,
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
 * was. See test/DRILLS.md.
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

  /** Why a chart of tenant A failed (status.reason), once it has. */
  const failedReason = (name: string) =>
    eventually(
      `${name} failed`,
      async () => {
        const status = (await json('get', 'act', name, '-n', teamA)).status;
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
    expect(await invalid(kind, teamA, obj.metadata.name)).toContain(rule);
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
      await client.workflow.getHandle(releaseWorkflowId(teamA, 'good')).fetchHistory(),
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
      query: `WorkflowId = '${releaseWorkflowId(teamA, 'alone')}'`,
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
