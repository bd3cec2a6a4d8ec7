import { execFile } from 'node:child_process';
import { readFileSync } from 'node:fs';
import path from 'node:path';
import { promisify } from 'node:util';
import { uniqueName } from '../helpers/env';
import { applyObjects, kubectl } from '../helpers/kube';
import { eventually } from '../helpers/processes';
import { REAL_NODE, REAL_NODE_TAINT, nodeSettings } from '../helpers/real-node';

/**
 * The sandbox's real node (deploy/sandbox/node.sh, started by `cluster.sh up` with
 * SANDBOX_REAL_NODE=1): a kubelet on containerd and runc beside kwok's fake nodes. A podinfo pod
 * really runs there (its readiness probe, its log, its address on the CNI bridge), and only pods
 * that tolerate the node's taint land on it.
 */

const repo = path.resolve(__dirname, '../..');

/** A value of deploy/tools/versions.env (the pins the images are built from). */
function pinned(name: string): string {
  const line = readFileSync(path.join(repo, 'deploy/tools/versions.env'), 'utf8')
    .split('\n')
    .find((l) => l.startsWith(`${name}=`));
  if (!line) throw new Error(`${name} is not pinned in deploy/tools/versions.env`);
  return line.slice(name.length + 1).trim();
}

interface Pod {
  spec: { nodeName?: string };
  status: {
    phase?: string;
    podIP?: string;
    conditions?: { type: string; status: string; reason?: string; message?: string }[];
  };
}

async function getPod(namespace: string, name: string): Promise<Pod> {
  return JSON.parse(await kubectl('get', 'pod', name, '-n', namespace, '-o', 'json')) as Pod;
}

describe('real node: a kubelet on containerd beside the kwok nodes', () => {
  const ns = uniqueName('real-node');
  const podinfoVersion = pinned('PODINFO_VERSION');
  const podinfo = {
    apiVersion: 'v1',
    kind: 'Pod',
    metadata: { name: 'podinfo', labels: { app: 'podinfo' } },
    spec: {
      nodeSelector: { [REAL_NODE_TAINT]: 'true' },
      tolerations: [{ key: REAL_NODE_TAINT, operator: 'Exists', effect: 'NoSchedule' }],
      terminationGracePeriodSeconds: 5,
      containers: [
        {
          name: 'podinfo',
          image: `ghcr.io/stefanprodan/podinfo:${podinfoVersion}`,
          // Imported into the node's containerd by node.sh; nothing is pulled.
          imagePullPolicy: 'Never',
          command: ['./podinfo', '--port=9898', '--level=info'],
          ports: [{ name: 'http', containerPort: 9898 }],
          readinessProbe: { httpGet: { path: '/readyz', port: 9898 }, periodSeconds: 1 },
        },
      ],
    },
  };

  beforeAll(async () => {
    await kubectl('create', 'namespace', ns);
  });
  afterAll(async () => {
    console.log(await kubectl('get', 'pods', '-n', ns, '-o', 'wide').catch((e: Error) => e.message));
    await kubectl('delete', 'namespace', ns, '--wait=false').catch(() => '');
  });

  it('is Ready, runs the pinned kubelet on containerd, and keeps the InternalIP its kubelet set (kwok leaves it alone)', async () => {
    await kubectl('wait', '--for=condition=Ready', `node/${REAL_NODE}`, '--timeout=60s');
    const node = JSON.parse(await kubectl('get', 'node', REAL_NODE, '-o', 'json')) as {
      metadata: { annotations?: Record<string, string>; labels: Record<string, string> };
      spec: { taints?: { key: string; value?: string; effect: string }[] };
      status: {
        addresses: { type: string; address: string }[];
        nodeInfo: { kubeletVersion: string; containerRuntimeVersion: string };
      };
    };
    const settings = nodeSettings();
    expect(node.status.nodeInfo.kubeletVersion).toBe(pinned('KUBERNETES_VERSION'));
    expect(node.status.nodeInfo.containerRuntimeVersion).toBe(
      `containerd://${pinned('CONTAINERD_VERSION').replace(/^v/, '')}`,
    );
    expect(node.metadata.annotations?.['kwok.x-k8s.io/node']).toBeUndefined();
    expect(node.spec.taints).toContainEqual({ key: REAL_NODE_TAINT, value: 'true', effect: 'NoSchedule' });
    const internal = node.status.addresses.find((a) => a.type === 'InternalIP')?.address;
    expect(internal).toBe(settings.NODE_IP);
    // ... the address of the pod bridge on this machine, where the kubelet serves (`ip`, as Node's
    // networkInterfaces() leaves out a bridge without ports: no carrier, not RUNNING).
    const { stdout } = await promisify(execFile)('ip', ['-o', '-4', 'addr', 'show', 'dev', settings.BRIDGE]);
    expect(stdout).toContain(` ${internal}/24 `);

    // kwok's own nodes still are kwok's.
    const kwokNodes = (await kubectl('get', 'nodes', '-l', 'type=kwok', '-o', 'name')).trim().split('\n');
    expect(kwokNodes.length).toBeGreaterThan(0);
  });

  it('runs podinfo: Ready through its /readyz probe, its log through kubectl logs, /version from this process over the CNI bridge', async () => {
    const started = Date.now();
    await applyObjects(ns, [podinfo]);
    await kubectl('wait', '--for=condition=Ready', 'pod/podinfo', '-n', ns, '--timeout=120s');
    console.log(`podinfo Ready on ${REAL_NODE} ${Date.now() - started} ms after it was created`);
    const pod = await getPod(ns, 'podinfo');
    expect(pod.spec.nodeName).toBe(REAL_NODE);
    expect(pod.status.phase).toBe('Running');

    // The pod's address comes from the bridge's host-local range (kwok's fake pods get 10.0.x.y).
    const settings = nodeSettings();
    const prefix = settings.SUBNET.replace(/\.0\/24$/, '.');
    expect(pod.status.podIP?.startsWith(prefix)).toBe(true);

    const logs = await eventually('podinfo to log its start', async () => {
      const out = await kubectl('logs', 'podinfo', '-n', ns);
      return out.includes('Starting podinfo') ? out : undefined;
    });
    expect(logs).toContain(podinfoVersion);

    const response = await fetch(`http://${pod.status.podIP}:9898/version`);
    expect(response.status).toBe(200);
    expect(await response.json()).toMatchObject({ version: podinfoVersion });

    console.log(await kubectl('get', 'pods', '-n', ns, '-o', 'wide'));
  });

  it('never places a pod without the toleration on the real node', async () => {
    const base = podinfo.spec.containers[0];
    const plain = (name: string, spec: object) => ({
      apiVersion: 'v1',
      kind: 'Pod',
      metadata: { name },
      spec: {
        containers: [{ name: 'c', image: base.image, imagePullPolicy: 'Never' }],
        terminationGracePeriodSeconds: 0,
        ...spec,
      },
    });
    await applyObjects(ns, [
      // Asks for the real node but does not tolerate its taint: the scheduler leaves it Pending.
      plain('untolerated', { nodeSelector: { [REAL_NODE_TAINT]: 'true' } }),
      // Asks for nothing: it goes to one of kwok's nodes, as every other pod of the suite does.
      plain('anywhere', {}),
    ]);

    const anywhere = await eventually('the plain pod to be scheduled', async () => {
      const pod = await getPod(ns, 'anywhere');
      return pod.spec.nodeName ? pod : undefined;
    });
    expect(anywhere.spec.nodeName).not.toBe(REAL_NODE);
    expect(
      await kubectl('get', 'node', anywhere.spec.nodeName ?? '', '-o', 'jsonpath={.metadata.labels.type}'),
    ).toBe('kwok');

    const untolerated = await eventually('the untolerating pod to be refused', async () => {
      const pod = await getPod(ns, 'untolerated');
      const scheduled = pod.status.conditions?.find((c) => c.type === 'PodScheduled');
      return scheduled?.status === 'False' && scheduled.reason === 'Unschedulable'
        ? { pod, scheduled }
        : undefined;
    });
    expect(untolerated.pod.spec.nodeName).toBeUndefined();
    expect(untolerated.scheduled.message).toContain('1 node(s) had untolerated taint');
    console.log(`untolerated: ${untolerated.scheduled.reason}: ${untolerated.scheduled.message}`);
  });
});
