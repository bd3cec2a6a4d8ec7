import { execFile } from 'node:child_process';
import { mkdtemp, readFile, writeFile } from 'node:fs/promises';
import { readFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import path from 'node:path';
import { promisify } from 'node:util';
import { stringify } from 'yaml';
import { toolPath } from '../../activities/tools';
import { helm, kubeConfig, uniqueName } from '../helpers/env';
import { applyPolicy, installCrds, kubectl } from '../helpers/kube';
import { eventually } from '../helpers/processes';

/**
 * The in-cluster lane: the operator installed as users install it (README, "Installing into a
 * cluster"): `helm install` of deploy/chart with the image deploy/Dockerfile builds, its worker
 * and bridge as pods on the sandbox's real node (deploy/sandbox/node.sh: a kubelet on containerd
 * and runc), Ready through their own probes and talking to the API server as their own
 * ServiceAccounts with the token the kubelet mounts, polling the Temporal cluster on PostgreSQL
 * (ARMADA_TEST_CLUSTER_TEMPORAL). The example manifest is then applied with kubectl and deployed
 * by those pods, and its podinfo pods become Ready for real on the same node.
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
const REAL_NODE = 'real-node';
const TAINT = 'armada.airshipit.org/real-node';
const repo = path.resolve(__dirname, '../..');

/** What node.sh chose for the real node (its node.env, beside the sandbox's kubeconfig). */
function nodeSettings(): Record<string, string> {
  const file = path.join(path.dirname(process.env.KUBECONFIG ?? ''), 'node', 'node.env');
  return Object.fromEntries(
    readFileSync(file, 'utf8')
      .split('\n')
      .filter(Boolean)
      .map((l) => l.split('=', 2) as [string, string]),
  );
}

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

  beforeAll(async () => {
    if (!TEMPORAL) throw new Error('ARMADA_TEST_CLUSTER_TEMPORAL is not set: run the suite with `npm test`');
    if (!IMAGE_ARCHIVE)
      throw new Error(
        'ARMADA_TEST_APP_IMAGE (the app image archive) is not set: run the suite with `npm test`',
      );
    // The image, into the real node's containerd (node.sh's socket); nothing is pulled.
    const socket = path.join(
      path.dirname(process.env.KUBECONFIG ?? ''),
      'node',
      'containerd',
      'containerd.sock',
    );
    const t = Date.now();
    await promisify(execFile)(
      toolPath('ctr'),
      ['--address', socket, '-n', 'k8s.io', 'images', 'import', IMAGE_ARCHIVE],
      {
        maxBuffer: 16 * 1024 * 1024,
      },
    );
    console.log(`imported ${IMAGE_ARCHIVE} into ${REAL_NODE}'s containerd in ${Date.now() - t} ms`);
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
              'scheduler.alpha.kubernetes.io/node-selector': `${TAINT}=true`,
              'scheduler.alpha.kubernetes.io/defaultTolerations': JSON.stringify([
                { key: TAINT, operator: 'Exists', effect: 'NoSchedule' },
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
    for (const name of [`${fullname}-worker`, `${fullname}-bridge`])
      console.log(
        await kubectl('logs', '-n', operatorNs, `deployment/${name}`, '--tail=30').catch(
          (e: Error) => e.message,
        ),
      );
    if (!uninstalled)
      await helm('uninstall', release, '-n', operatorNs, '--wait', '--timeout', '60s').catch(() => '');
    // The operator is gone: its finalizers would keep the objects (and their namespace) forever.
    for (const kind of ['amf', 'acg', 'act'])
      for (const name of (await kubectl('get', kind, '-n', crs, '-o', 'name').catch(() => ''))
        .split('\n')
        .filter(Boolean))
        await kubectl(
          'patch',
          name,
          '-n',
          crs,
          '--type=merge',
          '-p',
          '{"metadata":{"finalizers":null}}',
        ).catch(() => '');
    await kubectl('delete', 'armadapolicy', policy, '--ignore-not-found').catch(() => '');
    await kubectl('delete', 'namespace', crs, releases, operatorNs, '--wait=false').catch(() => '');
    console.log(`in-cluster lane: ${Math.round((Date.now() - started) / 1000)} s`);
  }, 180_000);

  it('helm install: worker and bridge Ready on the real node through their own probes, as their own ServiceAccounts', async () => {
    const { NODE_IP } = nodeSettings();
    const apiServer = new URL(kubeConfig().getCurrentCluster()?.server ?? '');
    const temporalPort = TEMPORAL!.split(':').pop();
    // The pods reach the API server and Temporal at the node's IP (see the header).
    const env = [
      { name: 'KUBERNETES_SERVICE_HOST', value: NODE_IP },
      { name: 'KUBERNETES_SERVICE_PORT', value: apiServer.port },
    ];
    const onRealNode = {
      nodeSelector: { [TAINT]: 'true' },
      tolerations: [{ key: TAINT, operator: 'Exists', effect: 'NoSchedule' }],
      extraEnv: env,
    };
    const values = {
      image: { repository: IMAGE, tag: IMAGE_TAG, pullPolicy: 'Never' },
      temporal: { address: `${NODE_IP}:${temporalPort}`, taskQueue },
      watchNamespaces: [crs],
      driftNamespaces: [releases],
      rbac: { deploy: { workerNamespaces: [releases] } },
      worker: onRealNode,
      bridge: { ...onRealNode, replicas: 2 },
    };
    const t = Date.now();
    const out = await helm(
      'install',
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

  it('helm uninstall of the operator leaves the releases it deployed alone', async () => {
    const before = await pods(releases);
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
    const after = await pods(releases);
    expect(after.map((p) => p.metadata.name).sort()).toEqual(before.map((p) => p.metadata.name).sort());
    expect(after.every(ready)).toBe(true);
    // The objects stay too (CRDs are never removed by helm uninstall).
    expect((await kubectl('get', 'act', '-n', crs, '-o', 'name')).trim().split('\n')).toHaveLength(4);
  }, 180_000);
});

async function tempFile(name: string, text: string): Promise<string> {
  const file = path.join(await mkdtemp(path.join(tmpdir(), 'armada-incluster-')), name);
  await writeFile(file, text);
  return file;
}
