import { AppsV1Api, BatchV1Api, CoreV1Api, type V1PodSpec } from '@kubernetes/client-node';
import { ApplicationFailure } from '@temporalio/common';
import { execFile } from 'node:child_process';
import { mkdtemp, rm, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import path from 'node:path';
import { promisify } from 'node:util';
import { waitForResources } from '../../activities/kube/wait';
import type { WaitRequest } from '../../core/contracts/kube';
import { NonRetryable } from '../../core/failures';
import { kubeConfig, uniqueName } from '../helpers/env';

/** kwok's fake nodes may carry this taint; the sandbox's do not, but the pods tolerate it either way. */
const kwokToleration = { key: 'kwok.x-k8s.io/node', operator: 'Exists', effect: 'NoSchedule' };
/** A node selector no node matches: such pods stay Pending (Unschedulable) for ever. */
const nowhere = { 'armada-test/nowhere': 'true' };

const namespace = uniqueName('wait');
const kc = kubeConfig();
const apps = kc.makeApiClient(AppsV1Api);
const batch = kc.makeApiClient(BatchV1Api);
const core = kc.makeApiClient(CoreV1Api);

function podSpec(extra: Partial<V1PodSpec> = {}): V1PodSpec {
  return {
    containers: [{ name: 'app', image: 'registry.invalid/app:1' }],
    tolerations: [kwokToleration],
    ...extra,
  };
}

async function createDeployment(
  name: string,
  replicas: number,
  labels: Record<string, string>,
  extra?: Partial<V1PodSpec>,
) {
  await apps.createNamespacedDeployment({
    namespace,
    body: {
      metadata: { name, labels },
      spec: {
        replicas,
        selector: { matchLabels: { deployment: name } },
        template: { metadata: { labels: { ...labels, deployment: name } }, spec: podSpec(extra) },
      },
    },
  });
}

async function createJob(
  name: string,
  labels: Record<string, string>,
  spec: { activeDeadlineSeconds?: number },
  extra?: Partial<V1PodSpec>,
) {
  await batch.createNamespacedJob({
    namespace,
    body: {
      metadata: { name, labels },
      spec: {
        backoffLimit: 0,
        ...spec,
        template: { metadata: { labels }, spec: podSpec({ restartPolicy: 'Never', ...extra }) },
      },
    },
  });
}

/** Polls the API server until `count` pods match, so a wait sees every pod it will ever see. */
async function untilPodsExist(labelSelector: string, count: number): Promise<void> {
  for (let i = 0; i < 60; i++) {
    const pods = await core.listNamespacedPod({ namespace, labelSelector });
    if (pods.items.length >= count) return;
    await new Promise((resolve) => setTimeout(resolve, 500));
  }
  throw new Error(`fewer than ${count} pods match ${labelSelector}`);
}

/**
 * The PID of this sandbox's kube-controller-manager: kwokctl runs it from the sandbox's work dir,
 * `<SANDBOX_DIR>/kwok/clusters/<name>/bin/`, and the kubeconfig lies in SANDBOX_DIR.
 */
async function controllerManagerPid(): Promise<number> {
  const dir = path.dirname(process.env.KUBECONFIG ?? '');
  const { stdout } = await promisify(execFile)('pgrep', [
    '-f',
    '--',
    `^${dir}/kwok/clusters/[^/]+/bin/kube-controller-manager `,
  ]).catch(() => ({ stdout: '' }));
  const pids = stdout.split('\n').filter(Boolean);
  if (pids.length !== 1)
    throw new Error(`expected one kube-controller-manager of the sandbox in ${dir}, found ${pids.length}`);
  return Number(pids[0]);
}

/** The failure `waitForResources` rejects with (a test fails when it resolves). */
async function failureOf(req: WaitRequest): Promise<ApplicationFailure> {
  const outcome = await waitForResources(req).then(
    (result) => result,
    (err: unknown) => err,
  );
  if (!(outcome instanceof ApplicationFailure))
    throw new Error(`expected an ApplicationFailure, got ${JSON.stringify(outcome)}`);
  return outcome;
}

beforeAll(async () => {
  await core.createNamespace({ body: { metadata: { name: namespace } } });
  // Pods need the namespace's default service account, which the controller-manager creates.
  for (let i = 0; i < 60; i++) {
    const accounts = await core.listNamespacedServiceAccount({ namespace });
    if (accounts.items.some((a) => a.metadata?.name === 'default')) return;
    await new Promise((resolve) => setTimeout(resolve, 500));
  }
});

afterAll(async () => {
  await core.deleteNamespace({ name: namespace });
});

describe('waitForResources on the real sandbox cluster', () => {
  it('returns once a Deployment of 3 replicas and its pods are all ready', async () => {
    await createDeployment('web', 3, { app: 'web' });
    const started = Date.now();
    const result = await waitForResources({
      release: 'web',
      namespace,
      wait: {
        resources: [
          { type: 'deployment', labels: { app: 'web' } },
          { type: 'pod', labels: { app: 'web' } },
        ],
      },
      timeoutSeconds: 60,
    });
    expect(Date.now() - started).toBeLessThan(30_000);
    expect(result.summary).toBe('deployment app=web 1/1 ready, pod app=web 3/3 ready');
    expect(result.resources.filter((r) => r.type === 'deployment')).toEqual([
      { type: 'deployment', name: 'web', ready: true, reason: '3/3 available' },
    ]);
    const pods = result.resources.filter((r) => r.type === 'pod');
    expect(pods).toHaveLength(3);
    expect(pods.every((p) => p.ready && p.reason === 'ready')).toBe(true);
  });

  it("waits for Armada's default (jobs and pods) under wait.labels when no resources are listed", async () => {
    const result = await waitForResources({
      release: 'web',
      namespace,
      wait: { labels: { app: 'web' } },
      timeoutSeconds: 60,
    });
    expect(result.summary).toBe('job app=web 0/0 ready, pod app=web 3/3 ready');
  });

  it('fails with WaitTimeout naming a Deployment whose pods can never be scheduled', async () => {
    await createDeployment('stuck', 2, { app: 'stuck' }, { nodeSelector: nowhere });
    const started = Date.now();
    const failure = await failureOf({
      release: 'stuck-release',
      namespace,
      wait: { resources: [{ type: 'deployment', labels: { app: 'stuck' } }] },
      timeoutSeconds: 3,
    });
    expect(Date.now() - started).toBeLessThan(10_000);
    expect(failure.type).toBe(NonRetryable.WaitTimeout);
    expect(failure.nonRetryable).toBe(true);
    expect(failure.message).toContain('release stuck-release');
    expect(failure.message).toContain(`namespace ${namespace}`);
    expect(failure.message).toMatch(/deployment\/stuck \((0\/2 available|0\/2 updated|generation)/);
  });

  describe('min_ready on pods: 2 of 4 pods can become Ready', () => {
    beforeAll(async () => {
      await createDeployment('half-ok', 2, { group: 'half' });
      await createDeployment('half-stuck', 2, { group: 'half' }, { nodeSelector: nowhere });
      await untilPodsExist('group=half', 4);
    });

    it.each([
      ['"50%" of 4 pods is met by 2 ready pods', '50%'],
      ['a count of 2 is met by 2 ready pods', 2],
    ])('%s', async (_name, minReady) => {
      const result = await waitForResources({
        release: 'half',
        namespace,
        wait: { resources: [{ type: 'pod', labels: { group: 'half' }, min_ready: minReady }] },
        timeoutSeconds: 60,
      });
      expect(result.resources).toHaveLength(4);
      expect(result.resources.filter((r) => r.ready)).toHaveLength(2);
      expect(result.summary).toBe(`pod group=half (min_ready ${minReady}) 2/4 ready`);
    });

    it('"75%" of 4 pods needs 3 and times out, naming the unschedulable pods', async () => {
      const failure = await failureOf({
        release: 'half',
        namespace,
        wait: { resources: [{ type: 'pod', labels: { group: 'half' }, min_ready: '75%' }] },
        timeoutSeconds: 3,
      });
      expect(failure.type).toBe(NonRetryable.WaitTimeout);
      expect(failure.message).toContain('pod group=half (min_ready 75%): 2/4 ready, 3 needed');
      expect(failure.message.match(/pod\/half-stuck-[a-z0-9]+-[a-z0-9]+ \(unschedulable: /g)).toHaveLength(2);
      expect(failure.message).not.toContain('half-ok');
    });
  });

  it('counts a Job that completes as ready, and its Succeeded pod too (kwok completes Job pods)', async () => {
    await createJob('migrate', { app: 'migrate' }, {});
    const result = await waitForResources({
      release: 'migrate',
      namespace,
      wait: { labels: { app: 'migrate' } },
      timeoutSeconds: 60,
    });
    expect(result.summary).toBe('job app=migrate 1/1 ready, pod app=migrate 1/1 ready');
    expect(result.resources).toEqual([
      {
        type: 'job',
        name: 'migrate',
        ready: true,
        reason: expect.stringMatching(/^complete, 1\/1 succeeded/),
      },
      { type: 'pod', name: expect.stringMatching(/^migrate-/), ready: true, reason: 'succeeded' },
    ]);
  });

  it('fails at once with JobFailed when a Job fails (deadline exceeded before it could be scheduled)', async () => {
    await createJob('doomed', { app: 'doomed' }, { activeDeadlineSeconds: 1 }, { nodeSelector: nowhere });
    const started = Date.now();
    const failure = await failureOf({
      release: 'doomed',
      namespace,
      wait: { resources: [{ type: 'job', labels: { app: 'doomed' } }] },
      timeoutSeconds: 60,
    });
    expect(Date.now() - started).toBeLessThan(20_000);
    expect(failure.type).toBe(NonRetryable.JobFailed);
    expect(failure.nonRetryable).toBe(true);
    expect(failure.message).toContain('job/doomed failed: DeadlineExceeded');
  });

  it("does not pass on the old revision's Ready pods before the controller rolled out a new pod template", async () => {
    const labels = { app: 'rolling' };
    await createDeployment('rolling', 2, labels);
    await waitForResources({ release: 'rolling', namespace, wait: { labels }, timeoutSeconds: 60 });
    // With the controller-manager stopped, the upgrade's write lands but no new ReplicaSet or pod
    // is created: the old revision's 2 pods stay Ready and match the labels. Stopped briefly, so
    // that it keeps its leader lease (10 s renew deadline) and carries on when continued.
    const controllerManager = await controllerManagerPid();
    process.kill(controllerManager, 'SIGSTOP');
    try {
      // Read with the controller stopped, so that no status update of it conflicts with the write.
      const deployment = await apps.readNamespacedDeployment({ name: 'rolling', namespace });
      deployment.spec!.template.spec!.containers[0].image = 'registry.invalid/app:2';
      await apps.replaceNamespacedDeployment({ name: 'rolling', namespace, body: deployment });
      const failure = await failureOf({ release: 'rolling', namespace, wait: { labels }, timeoutSeconds: 2 });
      expect(failure.type).toBe(NonRetryable.WaitTimeout);
      expect(failure.message).toContain(
        'pod app=rolling: 2/2 ready, 2 needed, rollout of Deployment rolling: generation 2 not observed yet (observed 1)',
      );
    } finally {
      process.kill(controllerManager, 'SIGCONT');
    }

    const result = await waitForResources({
      release: 'rolling',
      namespace,
      wait: { labels },
      timeoutSeconds: 60,
    });
    const pods = result.resources.filter((r) => r.type === 'pod');
    expect(pods).toHaveLength(2);
    const images = await Promise.all(
      pods.map(
        async ({ name }) => (await core.readNamespacedPod({ name, namespace })).spec?.containers[0].image,
      ),
    );
    expect(images).toEqual(['registry.invalid/app:2', 'registry.invalid/app:2']);
  });

  it('fails with Forbidden, non-retryable, for a user RBAC allows nothing', async () => {
    await core.createNamespacedServiceAccount({ namespace, body: { metadata: { name: 'nobody' } } });
    const token = await core.createNamespacedServiceAccountToken({
      name: 'nobody',
      namespace,
      body: { spec: { audiences: [], expirationSeconds: 600 } },
    });
    const cluster = kc.getCurrentCluster();
    if (!cluster) throw new Error('the test kubeconfig has no current cluster');
    const dir = await mkdtemp(path.join(tmpdir(), 'armada-wait-'));
    const file = path.join(dir, 'kubeconfig');
    await writeFile(
      file,
      JSON.stringify({
        apiVersion: 'v1',
        kind: 'Config',
        clusters: [
          {
            name: 'sandbox',
            cluster: {
              server: cluster.server,
              'certificate-authority-data': cluster.caData,
              'certificate-authority': cluster.caFile,
              'insecure-skip-tls-verify': cluster.skipTLSVerify || undefined,
            },
          },
        ],
        users: [{ name: 'nobody', user: { token: token.status?.token } }],
        contexts: [{ name: 'nobody', context: { cluster: 'sandbox', user: 'nobody' } }],
        'current-context': 'nobody',
      }),
    );
    // The product reads ARMADA_KUBECONFIG first (the suite points it at the worker's
    // ServiceAccount): point it at nobody instead.
    const previous = process.env.ARMADA_KUBECONFIG;
    process.env.ARMADA_KUBECONFIG = file;
    try {
      const failure = await failureOf({ release: 'web', namespace, timeoutSeconds: 30 });
      expect(failure.type).toBe('Forbidden');
      expect(failure.nonRetryable).toBe(true);
      expect(failure.message).toMatch(
        /HTTP 403: (jobs\.batch|pods|(deployments|statefulsets|daemonsets)\.apps) is forbidden: User "system:serviceaccount:.*:nobody" cannot list/,
      );
    } finally {
      if (previous === undefined) delete process.env.ARMADA_KUBECONFIG;
      else process.env.ARMADA_KUBECONFIG = previous;
      await rm(dir, { recursive: true, force: true });
    }
  });
});
