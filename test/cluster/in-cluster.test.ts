import { execFile } from 'node:child_process';
import { mkdtemp, readFile, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import path from 'node:path';
import { promisify } from 'node:util';
import { Client, Connection } from '@temporalio/client';
import { temporal as temporalProto } from '@temporalio/proto';
import { parseAllDocuments, stringify } from 'yaml';
import { toolPath } from '../../activities/tools';
import { helm, kubeConfig, uniqueName } from '../helpers/env';
import { applyPolicy, dropFinalizers, installCrds, kubectl } from '../helpers/kube';
import { eventually } from '../helpers/processes';
import { REAL_NODE, REAL_NODE_TAINT, nodeSettings } from '../helpers/real-node';

/**
 * The in-cluster lane: the operator installed as users install it (docs/how-to/install.md, "Installing into a
 * cluster"): `helm install` of deploy/chart with the image deploy/Dockerfile builds, its worker
 * and bridge as pods on the sandbox's real node (deploy/sandbox/node.sh: a kubelet on containerd
 * and runc), Ready through their own probes and talking to the API server as their own
 * ServiceAccounts with the token the kubelet mounts, polling the Temporal cluster on PostgreSQL
 * (ARMADA_TEST_CLUSTER_TEMPORAL). The example manifest is then applied with kubectl and deployed
 * by those pods, and its podinfo pods become Ready for real on the same node. Then the pods are
 * disturbed as a cluster disturbs them: the worker's pod is deleted inside a canary hold (the run
 * finishes on the replacement), the bridge leader's pod is deleted (bridge.replicas 2: the other
 * takes the Lease, and a change starts each run once), and `helm uninstall` of the operator
 * leaves the releases and objects it deployed in place.
 *
 * Decisions (see also test/run.sh and deploy/sandbox/cluster.sh):
 * - Network path. A pod's 127.0.0.1 is its own; no kube-proxy runs, so the kubernetes Service's
 *   ClusterIP leads nowhere. The node's IP (the pod bridge's gateway, on this machine) does:
 *   kube-apiserver binds 0.0.0.0 (kwokctl), and cluster.sh puts that IP in its serving
 *   certificate (kubeApiserverCertSANs). The pods get KUBERNETES_SERVICE_HOST/PORT pointing there
 *   through worker.extraEnv/bridge.extraEnv (explicit env wins over the kubelet's Service env),
 *   the in-cluster config every client (ours, helm's) reads. The Temporal cluster binds 0.0.0.0
 *   (TEMPORAL_BIND_IP, set by test/run.sh) and the pods dial it at the node's IP too.
 * - The image. test/run.sh already builds localhost/armada-temporal:local from this tree for the
 *   compose lane (podman's layer cache); it saves it once as a docker-archive and names it in
 *   ARMADA_TEST_APP_IMAGE; this file imports it into the node's containerd (`ctr images import`,
 *   idempotent) and the chart runs it with pullPolicy Never.
 * - Example pods on the real node, examples unedited: the API server runs the PodNodeSelector and
 *   PodTolerationRestriction admission plugins (cluster.sh), and the namespace the example
 *   releases go to carries scheduler.alpha.kubernetes.io/node-selector and defaultTolerations
 *   annotations, so every pod created there selects and tolerates the real node.
 * - Isolation on the shared sandbox: the example's text is applied with its release namespace
 *   (`demo`) replaced by one of this run's, in a namespace of this run's, allowed by an
 *   ArmadaPolicy of its own (examples/policy's, for these namespaces; the example policy itself
 *   names `default`, which other files use); the bridge watches only that namespace, the worker
 *   polls a task queue of its own, and may deploy only into the release namespace
 *   (rbac.deploy.workerNamespaces: the examples name no ServiceAccount, so runs act as the worker).
 */

const TEMPORAL = process.env.ARMADA_TEST_CLUSTER_TEMPORAL;
const IMAGE_ARCHIVE = process.env.ARMADA_TEST_APP_IMAGE;
const IMAGE = 'localhost/armada-temporal';
const IMAGE_TAG = process.env.ARMADA_TEST_APP_IMAGE_TAG ?? 'local';
/** The shop canary's hold, long enough to delete the worker pod inside it. */
const HOLD_SECONDS = 20;
const repo = path.resolve(__dirname, '../..');

interface Pod {
  metadata: { name: string; namespace: string; labels?: Record<string, string> };
  spec: { nodeName?: string; serviceAccountName?: string };
  status: {
    phase?: string;
    podIP?: string;
    conditions?: { type: string; status: string }[];
    containerStatuses?: { ready: boolean; restartCount: number }[];
  };
}

const ready = (p: Pod) =>
  p.status.conditions?.some((c) => c.type === 'Ready' && c.status === 'True') ?? false;

async function pods(namespace: string, selector?: string): Promise<Pod[]> {
  const args = ['get', 'pods', '-n', namespace, '-o', 'json', ...(selector ? ['-l', selector] : [])];
  return (JSON.parse(await kubectl(...args)) as { items: Pod[] }).items;
}

describe('in-cluster lane: the operator chart on the real node, deploying the examples', () => {
  const operatorNs = uniqueName('incluster-op');
  const crs = uniqueName('incluster-crs');
  const releases = uniqueName('incluster-demo');
  const release = uniqueName('armada');
  const fullname = `${release}-armada-temporal`;
  const policy = uniqueName('incluster');
  const taskQueue = uniqueName('incluster');
  const started = Date.now();
  let uninstalled = false;
  let connection: Connection | undefined;
  let temporal: Client;

  beforeAll(async () => {
    if (!TEMPORAL) throw new Error('ARMADA_TEST_CLUSTER_TEMPORAL is not set: run the suite with `npm test`');
    if (!IMAGE_ARCHIVE)
      throw new Error(
        'ARMADA_TEST_APP_IMAGE (the app image archive) is not set: run the suite with `npm test`',
      );
    // The image, into the real node's containerd (node.sh's socket); nothing is pulled.
    const t = Date.now();
    await ctr('images', 'import', IMAGE_ARCHIVE);
    console.log(`imported ${IMAGE_ARCHIVE} into ${REAL_NODE}'s containerd in ${Date.now() - t} ms`);
    connection = await Connection.connect({ address: TEMPORAL });
    temporal = new Client({ connection });
    await installCrds();
    await kubectl('create', 'namespace', crs);
    // Every pod of the release namespace selects and tolerates the real node (cluster.sh's
    // PodNodeSelector and PodTolerationRestriction admission plugins read these).
    await kubectl(
      'apply',
      '-f',
      await tempFile(
        'ns.json',
        JSON.stringify({
          apiVersion: 'v1',
          kind: 'Namespace',
          metadata: {
            name: releases,
            annotations: {
              'scheduler.alpha.kubernetes.io/node-selector': `${REAL_NODE_TAINT}=true`,
              'scheduler.alpha.kubernetes.io/defaultTolerations': JSON.stringify([
                { key: REAL_NODE_TAINT, operator: 'Exists', effect: 'NoSchedule' },
              ]),
            },
          },
        }),
      ),
    );
    // examples/policy/default-namespace.yaml, for this run's namespaces.
    await applyPolicy(policy, { namespaces: [crs], target_namespaces: [releases] });
  }, 120_000);

  afterAll(async () => {
    console.log(await kubectl('get', 'pods', '-o', 'wide', '-A').catch((e: Error) => e.message));
    // Each build's worker Deployment when worker versioning is on: by label, each pod's lines prefixed.
    for (const component of ['worker', 'bridge'])
      console.log(
        await kubectl(
          'logs',
          '-n',
          operatorNs,
          '-l',
          `app.kubernetes.io/component=${component}`,
          '--prefix',
          '--tail=30',
        ).catch((e: Error) => e.message),
      );
    if (!uninstalled)
      await helm('uninstall', release, '-n', operatorNs, '--wait', '--timeout', '60s').catch(() => '');
    // The operator is gone: its finalizers would keep the objects (and their namespace) forever.
    for (const kind of ['amf', 'acg', 'act'])
      for (const name of (await kubectl('get', kind, '-n', crs, '-o', 'name').catch(() => ''))
        .split('\n')
        .filter(Boolean))
        await dropFinalizers(name, crs).catch(() => '');
    await kubectl('delete', 'armadapolicy', policy, '--ignore-not-found').catch(() => '');
    await kubectl('delete', 'namespace', crs, releases, operatorNs, '--wait=false').catch(() => '');
    await connection?.close();
    console.log(`in-cluster lane: ${Math.round((Date.now() - started) / 1000)} s`);
  }, 180_000);

  /** The chart's values for this lane: pods on the real node, reaching the API server and Temporal at its IP. */
  function operatorValues(worker: Record<string, unknown> = {}) {
    const { NODE_IP } = nodeSettings();
    const apiServer = new URL(kubeConfig().getCurrentCluster()?.server ?? '');
    const temporalPort = TEMPORAL!.split(':').pop();
    // The pods reach the API server and Temporal at the node's IP (see the header).
    const env = [
      { name: 'KUBERNETES_SERVICE_HOST', value: NODE_IP },
      { name: 'KUBERNETES_SERVICE_PORT', value: apiServer.port },
    ];
    const onRealNode = {
      nodeSelector: { [REAL_NODE_TAINT]: 'true' },
      tolerations: [{ key: REAL_NODE_TAINT, operator: 'Exists', effect: 'NoSchedule' }],
      extraEnv: env,
    };
    const values = {
      image: { repository: IMAGE, tag: IMAGE_TAG, pullPolicy: 'Never' },
      temporal: { address: `${NODE_IP}:${temporalPort}`, taskQueue },
      watchNamespaces: [crs],
      driftNamespaces: [releases],
      rbac: { deploy: { workerNamespaces: [releases] } },
      // The suite's installCrds has installed them, cluster-wide, beside the CRDs.
      admissionPolicies: { install: false },
      worker: onRealNode,
      bridge: { ...onRealNode, replicas: 2 },
    };
    return { ...values, worker: { ...onRealNode, ...worker } };
  }

  /** Installs or upgrades the operator chart with `values`, and waits for its pods to be Ready. */
  const installOperator = async (values: object) =>
    helm(
      'upgrade',
      '--install',
      release,
      path.join(repo, 'deploy/chart'),
      '--namespace',
      operatorNs,
      '--create-namespace',
      '-f',
      await tempFile('values.yaml', stringify(values)),
      '--wait',
      '--timeout',
      '240s',
    );

  it('helm install: worker and bridge Ready on the real node through their own probes, as their own ServiceAccounts', async () => {
    const t = Date.now();
    const out = await installOperator(operatorValues());
    console.log(`helm install --wait: ${Date.now() - t} ms\n${out}`);

    const operator = await pods(operatorNs);
    expect(operator).toHaveLength(3);
    for (const p of operator) {
      expect([p.metadata.name, p.spec.nodeName, p.status.phase, ready(p)]).toEqual([
        p.metadata.name,
        REAL_NODE,
        'Running',
        true,
      ]);
      expect(p.status.podIP?.startsWith(nodeSettings().SUBNET.replace(/0\/24$/, ''))).toBe(true);
      const component = p.metadata.labels?.['app.kubernetes.io/component'];
      expect(p.spec.serviceAccountName).toBe(`${fullname}-${component}`);
      // The token the kubelet mounted in the pod is its ServiceAccount's, as the API server says.
      const token = (
        await kubectl(
          'exec',
          '-n',
          operatorNs,
          p.metadata.name,
          '--',
          'cat',
          '/var/run/secrets/kubernetes.io/serviceaccount/token',
        )
      ).trim();
      // A TokenReview: the API server authenticates the token as it does the pod's requests.
      const review = JSON.parse(
        await kubectl(
          'create',
          '-o',
          'json',
          '-f',
          await tempFile(
            'review.json',
            JSON.stringify({ apiVersion: 'authentication.k8s.io/v1', kind: 'TokenReview', spec: { token } }),
          ),
        ),
      ) as { status: { authenticated?: boolean; user?: { username?: string } } };
      expect(review.status.authenticated).toBe(true);
      expect(review.status.user?.username).toBe(
        `system:serviceaccount:${operatorNs}:${fullname}-${component}`,
      );
      // PID 1 is the image's tini (the chart sets args, not command), node its child.
      const init = await kubectl('exec', '-n', operatorNs, p.metadata.name, '--', 'cat', '/proc/1/cmdline');
      expect(init.split('\0').filter(Boolean)).toEqual([
        '/usr/bin/tini',
        '--',
        'node',
        `dist/${component}/main.js`,
      ]);
    }
    // The bridge used it: one of its pods holds the leader Lease (the bridge's Role, in this namespace alone).
    const holder = await eventually('a bridge pod to hold the Lease', async () => {
      const lease = JSON.parse(
        await kubectl('get', 'lease', 'armada-bridge', '-n', operatorNs, '-o', 'json'),
      ) as {
        spec: { holderIdentity?: string };
      };
      return lease.spec.holderIdentity || undefined;
    });
    // holderIdentity is `${hostname}-${pid}`, the hostname the pod's name.
    expect(
      operator.some(
        (p) =>
          holder.startsWith(`${p.metadata.name}-`) &&
          p.metadata.labels?.['app.kubernetes.io/component'] === 'bridge',
      ),
    ).toBe(true);
  }, 300_000);

  it('kubectl apply of the example manifest: the in-cluster operator deploys it, podinfo Ready on the real node', async () => {
    const text = (await readFile(path.join(repo, 'examples/sequenced-manifest.yaml'), 'utf8')).replaceAll(
      'namespace: demo',
      `namespace: ${releases}`,
    );
    const t = Date.now();
    await kubectl('apply', '-n', crs, '-f', await tempFile('manifest.yaml', text));
    const manifest = await eventually(
      'the example manifest satisfied',
      async () => {
        const m = JSON.parse(await kubectl('get', 'amf', 'demo', '-n', crs, '-o', 'json')) as {
          status?: { satisfied?: boolean; actual_state?: string };
        };
        return m.status?.satisfied ? m : undefined;
      },
      { timeoutMs: 240_000 },
    );
    console.log(`example manifest satisfied ${Date.now() - t} ms after kubectl apply`);
    expect(manifest.status?.actual_state).toBe('deployed');
    const list = JSON.parse(await helm('list', '-n', releases, '-o', 'json')) as {
      name: string;
      status: string;
    }[];
    expect(list.map((r) => `${r.name} ${r.status}`).sort()).toEqual([
      'demo-admin deployed',
      'demo-backend deployed',
      'demo-settings deployed',
      'demo-web deployed',
    ]);
    // backend 2, web 3, admin 1: podinfo really running, Ready through its /readyz probe.
    const podinfo = await pods(releases);
    expect(podinfo).toHaveLength(6);
    for (const p of podinfo) {
      expect([p.metadata.name, p.spec.nodeName, p.status.phase, ready(p)]).toEqual([
        p.metadata.name,
        REAL_NODE,
        'Running',
        true,
      ]);
      const res = await fetch(`http://${p.status.podIP}:9898/version`);
      expect(res.status).toBe(200);
    }
    console.log(await kubectl('get', 'pods', '-o', 'wide', '-A'));
  }, 300_000);

  /** The shop canary of examples/canary-chart.yaml, its release in this run's namespace, short holds. */
  async function applyShop(message: string, name = 'shop', holdSeconds = HOLD_SECONDS): Promise<void> {
    const shop = parseAllDocuments(
      await readFile(path.join(repo, 'examples/canary-chart.yaml'), 'utf8'),
    )[0].toJS() as {
      metadata: Record<string, unknown>;
      spec: Record<string, unknown>;
    };
    Object.assign(shop.metadata, { name });
    Object.assign(shop.spec, {
      release: name,
      namespace: releases,
      values: { replicaCount: 2, message },
      wait: { timeout: 120 },
      canary: { steps: [{ percent: 50, sleep: holdSeconds }, { percent: 100 }] },
    });
    await kubectl('apply', '-n', crs, '-f', await tempFile('shop.json', JSON.stringify(shop)));
  }

  interface Chart {
    metadata: { generation: number };
    status?: {
      satisfied?: boolean;
      actual_state?: string;
      observedGeneration?: number;
      progress?: { percent?: number; next_step_at?: string };
    };
  }
  const chart = async (name: string) =>
    JSON.parse(await kubectl('get', 'act', name, '-n', crs, '-o', 'json')) as Chart;
  const settled = (name: string) =>
    eventually(
      `ArmadaChart ${name} satisfied with its spec`,
      async () => {
        const c = await chart(name);
        return c.status?.satisfied && c.status.observedGeneration === c.metadata.generation ? c : undefined;
      },
      { timeoutMs: 240_000 },
    );

  /**
   * Every run on this lane's task queue, by workflow ID: [runId, status]. Raw from the
   * WorkflowService: the memos are encrypted (the chart's key), which the client would decode.
   */
  async function runs(): Promise<Map<string, [string, string][]>> {
    const byId = new Map<string, [string, string][]>();
    let nextPageToken: Uint8Array | undefined;
    do {
      const page = await temporal.workflowService.listWorkflowExecutions({
        namespace: 'default',
        query: `TaskQueue = '${taskQueue}'`,
        nextPageToken,
      });
      for (const r of page.executions ?? []) {
        const id = r.execution?.workflowId ?? '';
        const status = temporalProto.api.enums.v1.WorkflowExecutionStatus[r.status ?? 0];
        byId.set(id, [...(byId.get(id) ?? []), [r.execution?.runId ?? '', status]]);
      }
      nextPageToken = page.nextPageToken?.length ? page.nextPageToken : undefined;
    } while (nextPageToken);
    return byId;
  }

  it('deleting the worker pod mid-canary: the run finishes on the replacement', async () => {
    await applyShop('shop v1');
    await settled('shop');
    await applyShop('shop v2');
    // In the hold at 50 %: the canary copies run v2 beside the release's v1.
    await eventually(
      'the shop canary in its 50 % hold',
      async () => {
        const c = await chart('shop');
        return c.status?.progress?.percent === 50 && c.status.progress.next_step_at ? c : undefined;
      },
      { timeoutMs: 120_000 },
    );
    const [old] = await pods(operatorNs, 'app.kubernetes.io/component=worker');
    const t = Date.now();
    await kubectl('delete', 'pod', old.metadata.name, '-n', operatorNs, '--wait=false');
    const replacement = await eventually(
      'a replacement worker Ready',
      async () =>
        (await pods(operatorNs, 'app.kubernetes.io/component=worker')).find(
          (p) => p.metadata.name !== old.metadata.name && ready(p),
        ),
      { timeoutMs: 180_000 },
    );
    console.log(
      `worker ${old.metadata.name} deleted mid-canary; ${replacement.metadata.name} Ready ${Date.now() - t} ms later`,
    );
    const done = await settled('shop');
    expect(done.status?.actual_state).toBe('deployed');
    expect(JSON.parse(await helm('get', 'values', 'shop', '-n', releases, '-o', 'json'))).toMatchObject({
      message: 'shop v2',
    });
    // The canary's activities after the hold ran on the replacement (identity pid@hostname).
    const shopRuns = [...(await runs())].filter(([id]) => id.includes(`${crs}/shop`));
    const identities = new Set<string>();
    for (const [id, rs] of shopRuns)
      for (const [runId, status] of rs) {
        expect([id, status]).toEqual([id, 'WORKFLOW_EXECUTION_STATUS_COMPLETED']);
        for (const e of (await temporal.workflow.getHandle(id, runId).fetchHistory()).events ?? []) {
          const who = e.activityTaskStartedEventAttributes?.identity;
          if (who) identities.add(who.split('@').pop()!);
        }
      }
    expect([...identities]).toEqual(expect.arrayContaining([old.metadata.name, replacement.metadata.name]));
  }, 420_000);

  it("deleting the bridge leader's pod: the other replica takes the Lease, and starts no duplicate run", async () => {
    const lease = async () =>
      (
        JSON.parse(await kubectl('get', 'lease', 'armada-bridge', '-n', operatorNs, '-o', 'json')) as {
          spec: { holderIdentity?: string };
        }
      ).spec.holderIdentity ?? '';
    const holder = await lease();
    const bridges = await pods(operatorNs, 'app.kubernetes.io/component=bridge');
    const leader = bridges.find((p) => holder.startsWith(`${p.metadata.name}-`));
    expect(leader).toBeDefined();
    const before = await runs();
    const t = Date.now();
    await kubectl('delete', 'pod', leader!.metadata.name, '-n', operatorNs, '--wait=false');
    const next = await eventually(
      'another bridge pod holding the Lease',
      async () => {
        const h = await lease();
        return h && !h.startsWith(`${leader!.metadata.name}-`) ? h : undefined;
      },
      { timeoutMs: 120_000 },
    );
    console.log(
      `bridge leader ${leader!.metadata.name} deleted; ${next} took the Lease ${Date.now() - t} ms later`,
    );
    // The new leader lists every object again: a change starts one run, the rest none.
    const text = (await readFile(path.join(repo, 'examples/sequenced-manifest.yaml'), 'utf8'))
      .replaceAll('namespace: demo', `namespace: ${releases}`)
      .replace('replicaCount: 1', 'replicaCount: 2');
    await kubectl('apply', '-n', crs, '-f', await tempFile('manifest-v2.yaml', text));
    await settled('admin');
    await eventually(
      'the manifest satisfied again',
      async () => {
        const m = JSON.parse(await kubectl('get', 'amf', 'demo', '-n', crs, '-o', 'json')) as Chart;
        return m.status?.satisfied && m.status.observedGeneration === m.metadata.generation ? m : undefined;
      },
      { timeoutMs: 240_000 },
    );
    const after = await runs();
    const added = [...after]
      .map(([id, rs]) => [id, rs.length - (before.get(id)?.length ?? 0)] as const)
      .filter(([, n]) => n);
    console.log(`runs started after the hand-over: ${JSON.stringify(added)}`);
    // Only the manifest's run (and what it starts for its charts), once each.
    expect(added.every(([, n]) => n === 1)).toBe(true);
    expect(added.map(([id]) => id)).toContain(`ArmadaManifest:${crs}/demo`);
    expect(added.some(([id]) => id.includes('/shop'))).toBe(false);
    expect((await pods(releases, 'app.kubernetes.io/instance=demo-admin')).filter(ready)).toHaveLength(2);
  }, 420_000);

  it('helm upgrade to a second build while a canary holds: the run finishes on the old build, new runs start on the new one, the old build drains and goes (Worker Versioning)', async () => {
    const deploymentName = uniqueName('armada-workers');
    // Build b2: the same image content under a second tag (building a second image takes too
    // long here); the chart runs image.repository:<tag> per build, ARMADA_BUILD_ID set apart.
    await ctr('images', 'tag', '--force', `${IMAGE}:${IMAGE_TAG}`, `${IMAGE}:b2`);
    const versions = (...builds: { buildId: string; tag: string }[]) =>
      operatorValues({ deploymentName, versions: builds.map((b) => ({ ...b, replicas: 1 })) });
    const b1 = { buildId: 'b1', tag: IMAGE_TAG };
    const b2 = { buildId: 'b2', tag: 'b2' };
    const helmUpgrade = async (values: object) => {
      const t = Date.now();
      await installOperator(values);
      return Date.now() - t;
    };
    const temporalCli = async (...args: string[]) =>
      (
        await promisify(execFile)(toolPath('temporal'), [
          'worker',
          'deployment',
          ...args,
          '--address',
          TEMPORAL!,
          '--deployment-name',
          deploymentName,
        ])
      ).stdout;
    // docs/how-to/scale-and-upgrade.md, "Worker upgrades", step 2: once its pods poll (a version exists from its first poll).
    const makeCurrent = (buildId: string) =>
      eventually(
        `build ${buildId} current`,
        async () => {
          await temporalCli('set-current-version', '--build-id', buildId, '--yes');
          return true;
        },
        { timeoutMs: 120_000 },
      );
    const workerPods = async (buildId: string) =>
      pods(operatorNs, `app.kubernetes.io/component=worker,armada.airshipit.org/build-id=${buildId}`);
    /** Every run of the chart `name` (release `name`) and its canary: [workflow ID, status, pinned build]. */
    const pinned = async (name: string) => {
      const out: [string, string, string | undefined][] = [];
      for (const [id, rs] of await runs())
        // ArmadaChart:<namespace>/<name> (an older build: helm:<namespace>/<release>), its canary …/<name>/canary.
        if (new RegExp(`/${name}(/|$)`).test(id))
          for (const [runId, status] of rs) {
            const d = await temporal.workflowService.describeWorkflowExecution({
              namespace: 'default',
              execution: { workflowId: id, runId },
            });
            const v = d.workflowExecutionInfo?.versioningInfo;
            out.push([id, status, v?.deploymentVersion?.buildId ?? undefined]);
          }
      return out.sort();
    };

    // The operator with build b1 alone, b1 current (docs/how-to/scale-and-upgrade.md, "Worker upgrades").
    console.log(`helm upgrade --install with build b1: ${await helmUpgrade(versions(b1))} ms`);
    await eventually(
      'the unversioned worker gone',
      async () =>
        (await pods(operatorNs, 'app.kubernetes.io/component=worker')).every(
          (p) => p.metadata.labels?.['armada.airshipit.org/build-id'] === 'b1',
        ) || undefined,
      { timeoutMs: 180_000 },
    );
    await makeCurrent('b1');
    await applyShop('cart v1', 'cart');
    await settled('cart');
    // A canary holding on b1, long enough for a helm upgrade and its pods to come up inside it.
    await applyShop('cart v2', 'cart', 90);
    await eventually(
      'the cart canary in its 50 % hold',
      async () => {
        const c = await chart('cart');
        return c.status?.progress?.percent === 50 && c.status.progress.next_step_at ? c : undefined;
      },
      { timeoutMs: 120_000 },
    );

    // Step 1: b2 beside b1, each its own Deployment running its own tag.
    console.log(`helm upgrade adding build b2: ${await helmUpgrade(versions(b1, b2))} ms`);
    const [podB1] = await workerPods('b1');
    const [podB2] = await workerPods('b2');
    expect([podB1, podB2].map((p) => [p.metadata.name.startsWith(`${fullname}-worker-b`), ready(p)])).toEqual(
      [
        [true, true],
        [true, true],
      ],
    );
    const images = JSON.parse(
      await kubectl(
        'get',
        'deployment',
        '-n',
        operatorNs,
        '-l',
        'app.kubernetes.io/component=worker',
        '-o',
        'json',
      ),
    ) as {
      items: {
        metadata: { name: string };
        spec: { template: { spec: { containers: { image: string }[] } } };
      }[];
    };
    expect(
      images.items.map((d) => [d.metadata.name, d.spec.template.spec.containers[0].image]).sort(),
    ).toEqual([
      [`${fullname}-worker-b1`, `${IMAGE}:${IMAGE_TAG}`],
      [`${fullname}-worker-b2`, `${IMAGE}:b2`],
    ]);
    // Step 2: b2 current, while the canary still holds.
    await makeCurrent('b2');
    expect((await chart('cart')).status?.progress?.percent).toBe(50);
    const switched = Date.now();
    // A new run goes to b2 (a new chart's first apply installs at once), as the old one holds.
    await applyShop('till v1', 'till');
    expect((await settled('till')).status?.actual_state).toBe('deployed');

    // The run in flight finishes on b1, the build it started on (every workflow type is pinned).
    const done = await settled('cart');
    expect(done.status?.actual_state).toBe('deployed');
    expect(JSON.parse(await helm('get', 'values', 'cart', '-n', releases, '-o', 'json'))).toMatchObject({
      message: 'cart v2',
    });
    const cartRuns = await pinned('cart');
    console.log(`cart runs: ${JSON.stringify(cartRuns)}`);
    expect(cartRuns.length).toBeGreaterThanOrEqual(2);
    for (const [id, status, build] of cartRuns)
      expect([id, status, build]).toEqual([id, 'WORKFLOW_EXECUTION_STATUS_COMPLETED', 'b1']);
    const tillRuns = await pinned('till');
    console.log(`till runs: ${JSON.stringify(tillRuns)}`);
    expect(tillRuns.length).toBeGreaterThanOrEqual(1);
    for (const [id, status, build] of tillRuns)
      expect([id, status, build]).toEqual([id, 'WORKFLOW_EXECUTION_STATUS_COMPLETED', 'b2']);

    // Step 3: describe-version shows b1 drained (the server checks visibility some minutes after
    // the version stopped being current), then helm upgrade removes it.
    const drained = await eventually(
      'build b1 drained',
      async () => {
        const v = JSON.parse(await temporalCli('describe-version', '--build-id', 'b1', '-o', 'json')) as {
          drainageInfo?: { drainageStatus?: string };
        };
        return /drained/i.test(v.drainageInfo?.drainageStatus ?? '') ? v : undefined;
      },
      { timeoutMs: 600_000, pauseMs: 5_000 },
    );
    console.log(
      `build b1 drained ${Date.now() - switched} ms after b2 became current: ${JSON.stringify(drained)}`,
    );
    console.log(`helm upgrade removing build b1: ${await helmUpgrade(versions(b2))} ms`);
    await eventually('the b1 worker gone', async () => ((await workerPods('b1')).length ? undefined : true), {
      timeoutMs: 180_000,
    });
    expect((await workerPods('b2')).map(ready)).toEqual([true]);
    expect(
      (
        JSON.parse(await kubectl('get', 'deployment', '-n', operatorNs, '-o', 'json')) as {
          items: { metadata: { name: string } }[];
        }
      ).items
        .map((d) => d.metadata.name)
        .sort(),
    ).toEqual([`${fullname}-bridge`, `${fullname}-worker-b2`]);
  }, 1_200_000);

  it('helm uninstall of the operator leaves the releases it deployed alone', async () => {
    const before = await pods(releases);
    const releaseList = async () =>
      (
        JSON.parse(await helm('list', '-n', releases, '-o', 'json')) as {
          name: string;
          status: string;
          revision: string;
        }[]
      )
        .map((r) => `${r.name} ${r.status} ${r.revision}`)
        .sort();
    const releasesBefore = await releaseList();
    // The four example releases, the shop, and the worker upgrade's cart and till.
    expect(releasesBefore.filter((r) => r.includes(' deployed '))).toHaveLength(7);
    const objectsBefore = await kubectl('get', 'amf,acg,act', '-n', crs, '-o', 'name');
    await helm('uninstall', release, '-n', operatorNs, '--wait', '--timeout', '120s');
    uninstalled = true;
    // The pods end (a bridge exits 0 on SIGTERM: Completed) and go with their ReplicaSets.
    await eventually(
      'the operator pods gone',
      async () => ((await pods(operatorNs)).length ? undefined : true),
      {
        timeoutMs: 120_000,
      },
    );
    expect(await releaseList()).toEqual(releasesBefore);
    const after = await pods(releases);
    expect(after.map((p) => p.metadata.name).sort()).toEqual(before.map((p) => p.metadata.name).sort());
    expect(after.every(ready)).toBe(true);
    // The objects stay too (CRDs are never removed by helm uninstall).
    expect(await kubectl('get', 'amf,acg,act', '-n', crs, '-o', 'name')).toBe(objectsBefore);
  }, 180_000);
});

/** ctr on the real node's containerd (node.sh's socket), in the kubelet's namespace. */
async function ctr(...args: string[]): Promise<string> {
  const socket = path.join(
    path.dirname(process.env.KUBECONFIG ?? ''),
    'node',
    'containerd',
    'containerd.sock',
  );
  const { stdout } = await promisify(execFile)(
    toolPath('ctr'),
    ['--address', socket, '-n', 'k8s.io', ...args],
    {
      maxBuffer: 16 * 1024 * 1024,
    },
  );
  return stdout;
}

async function tempFile(name: string, text: string): Promise<string> {
  const file = path.join(await mkdtemp(path.join(tmpdir(), 'armada-incluster-')), name);
  await writeFile(file, text);
  return file;
}
