import { CoreV1Api } from '@kubernetes/client-node';
import { createPrivateKey } from 'node:crypto';
import { mkdtemp, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import path from 'node:path';
import { parseAllDocuments, stringify } from 'yaml';
import { kubeApi } from '../../kube/client';
import { parseDigestKey } from '../../activities/charts/digest-key';
import { parseKeys } from '../../runs/codec';
import { helm, kubeConfig, uniqueName } from '../helpers/env';
import { kubectl } from '../helpers/kube';

const repo = path.resolve(__dirname, '../..');
const chart = path.join(repo, 'deploy/chart');
const hello = path.join(repo, 'examples/charts/hello');

/** A namespace nobody created: RBAC answers for any name, and cluster-wide rules hold in all. */
const SOME_NAMESPACE = 'some-team';

/**
 * A kubeconfig for the sandbox's API server that authenticates as a ServiceAccount, with a
 * short-lived token from the TokenRequest API (`kubectl create token`), as a pod gets one.
 */
async function serviceAccountKubeconfig(namespace: string, serviceAccount: string): Promise<string> {
  const token = (await kubectl('create', 'token', serviceAccount, '-n', namespace, '--duration=10m')).trim();
  const cluster = kubeConfig().getCurrentCluster();
  if (!cluster) throw new Error('the sandbox kubeconfig names no cluster');
  const file = path.join(await mkdtemp(path.join(tmpdir(), 'armada-sa-')), 'kubeconfig');
  await writeFile(
    file,
    stringify({
      apiVersion: 'v1',
      kind: 'Config',
      clusters: [
        {
          name: 'sandbox',
          cluster: {
            server: cluster.server,
            ...(cluster.caData && { 'certificate-authority-data': cluster.caData }),
            ...(cluster.caFile && { 'certificate-authority': cluster.caFile }),
          },
        },
      ],
      users: [{ name: serviceAccount, user: { token } }],
      contexts: [{ name: serviceAccount, context: { cluster: 'sandbox', user: serviceAccount } }],
      'current-context': serviceAccount,
    }),
    { mode: 0o600 },
  );
  return file;
}

/** `kubectl auth can-i` as that kubeconfig's user: true for "yes", false for "no" (exit 1). */
async function canI(kubeconfig: string, args: string[]): Promise<boolean> {
  try {
    return (await kubectl('--kubeconfig', kubeconfig, 'auth', 'can-i', ...args)).trim() === 'yes';
  } catch (err) {
    const { code, stdout } = err as { code?: number; stdout?: string };
    if (code === 1 && stdout?.trim() === 'no') return false;
    throw err;
  }
}

type Check = [action: string, args: string[]];

/** What the engine itself does, whoever a run acts as (the worker ClusterRole, bound cluster-wide). */
const workerMay: Check[] = [
  [
    'read an ArmadaChart status (reportStatus)',
    ['get', 'armadacharts.armada.airshipit.org', '--subresource=status'],
  ],
  [
    'patch an ArmadaManifest status (reportStatus)',
    ['patch', 'armadamanifests.armada.airshipit.org', '--subresource=status'],
  ],
  [
    'patch a Deployer status (reportStatus)',
    ['patch', 'deployers.armada.airshipit.org', '--subresource=status'],
  ],
  ['create Events (recordEvent)', ['create', 'events']],
  ['list ArmadaPolicies (its own policy check)', ['list', 'armadapolicies.armada.airshipit.org']],
  ['create a namespace (--create-namespace, Deployers)', ['create', 'namespaces']],
  ['apply a namespace server-side (Helm 4 --create-namespace)', ['patch', 'namespaces']],
];

/** What it never needs, or gets only where rbac.deploy binds the deploy role. */
const workerMayNot: Check[] = [
  ['read a Secret', ['get', 'secrets']],
  ['list Secrets', ['list', 'secrets']],
  ['read a ConfigMap', ['get', 'configmaps']],
  ['list pods', ['list', 'pods']],
  ['create a Deployment', ['create', 'deployments.apps']],
  ['delete a Namespace', ['delete', 'namespaces']],
  ['list namespaces', ['list', 'namespaces']],
  ['create a ClusterRoleBinding', ['create', 'clusterrolebindings.rbac.authorization.k8s.io']],
  ['create a Role', ['create', 'roles.rbac.authorization.k8s.io']],
  ['update an ArmadaChart spec', ['update', 'armadacharts.armada.airshipit.org']],
  ['delete an ArmadaManifest', ['delete', 'armadamanifests.armada.airshipit.org']],
  ['list nodes', ['list', 'nodes']],
  ['impersonate a ServiceAccount no one listed', ['impersonate', 'serviceaccounts/deployer']],
  ['delete a CustomResourceDefinition', ['delete', 'customresourcedefinitions.apiextensions.k8s.io']],
];

/** What a run does where the deploy role is bound (rbac.deploy): one or two checks per rule. */
const deployerMay: Check[] = [
  ['list Helm release Secrets', ['list', 'secrets']],
  ['update a Helm release Secret', ['update', 'secrets']],
  ['delete a Helm release Secret', ['delete', 'secrets']],
  ['read a Secret (values_from)', ['get', 'secrets']],
  ['read a ConfigMap (values_from)', ['get', 'configmaps']],
  ['list pods (waits)', ['list', 'pods']],
  ['watch ReplicaSets (helm --wait=watcher)', ['watch', 'replicasets.apps']],
  ['list StatefulSets (waits)', ['list', 'statefulsets.apps']],
  ['delete a collection of Jobs (upgrade.pre.delete)', ['deletecollection', 'jobs.batch']],
  ['delete a collection of pods (upgrade.pre.delete)', ['deletecollection', 'pods']],
  ['replace a Deployment (canary copies)', ['update', 'deployments.apps']],
  ['scale a Deployment (canary steps)', ['patch', 'deployments.apps', '--subresource=scale']],
  ['list HorizontalPodAutoscalers (canary capacity)', ['list', 'horizontalpodautoscalers.autoscaling']],
  ['create a Service (managedResources)', ['create', 'services']],
  ['patch a ConfigMap (managedResources)', ['patch', 'configmaps']],
  ['delete an Ingress (managedResources)', ['delete', 'ingresses.networking.k8s.io']],
  ['create a CronJob (managedResources)', ['create', 'cronjobs.batch']],
];

describe('the operator chart (deploy/chart) on the sandbox cluster', () => {
  const release = uniqueName('armada');
  const namespace = uniqueName('operator');
  /** Where the worker's ServiceAccount deploys the example chart with helm itself (rbac.deploy.workerNamespaces). */
  const target = uniqueName('operator-target');
  /** A tenant's namespace, whose ServiceAccount `deployer` the chart creates and binds (rbac.deploy.serviceAccounts). */
  const tenant = uniqueName('operator-tenant');
  const fullname = `${release}-armada-temporal`;

  beforeAll(async () => {
    await kubectl('create', 'namespace', target);
    await kubectl('create', 'namespace', tenant);
  });
  afterAll(async () => {
    await helm('uninstall', release, '--namespace', namespace, '--ignore-not-found').catch(() => '');
    await kubectl('delete', 'namespace', namespace, target, tenant, '--ignore-not-found', '--wait=false');
  });

  it('passes helm lint --strict', async () => {
    expect(await helm('lint', '--strict', chart)).toContain('1 chart(s) linted, 0 chart(s) failed');
  });

  it('installs into a fresh namespace and its worker and bridge pods become Ready', async () => {
    // The sandbox runs kwok: no container ever starts (the image need not exist, probes are not
    // run); kwok marks scheduled pods Running and Ready. What this proves is that the objects
    // are accepted, the Deployments roll out and the RBAC objects bind; not that the processes
    // start.
    await helm(
      'install',
      release,
      chart,
      '--namespace',
      namespace,
      '--create-namespace',
      // The admission policies may be there already (applied with the CRDs by the tests beside
      // this one): the release takes them over, and keeps them on uninstall.
      '--take-ownership',
      '--set',
      `rbac.deploy.workerNamespaces[0]=${target}`,
      '--set',
      `rbac.deploy.serviceAccounts[0].namespace=${tenant}`,
      '--set',
      'rbac.deploy.serviceAccounts[0].name=deployer',
      '--wait',
      '--timeout',
      '120s',
    );
    const pods = await kubeConfig()
      .makeApiClient(CoreV1Api)
      .listNamespacedPod({ namespace, labelSelector: `app.kubernetes.io/instance=${release}` });
    const seen = pods.items.map((pod) => ({
      component: pod.metadata?.labels?.['app.kubernetes.io/component'],
      serviceAccount: pod.spec?.serviceAccountName,
      runAsNonRoot: pod.spec?.securityContext?.runAsNonRoot,
      ready: pod.status?.conditions?.find((c) => c.type === 'Ready')?.status,
    }));
    expect(seen.sort((a, b) => String(a.component).localeCompare(String(b.component)))).toEqual([
      { component: 'bridge', serviceAccount: `${fullname}-bridge`, runAsNonRoot: true, ready: 'True' },
      { component: 'worker', serviceAccount: `${fullname}-worker`, runAsNonRoot: true, ready: 'True' },
    ]);
  });

  const encryptionSecret = `${fullname}-encryption`;
  const encryptionKeys = async () =>
    kubectl('get', 'secret', encryptionSecret, '-n', namespace, '-o', 'jsonpath={.data.keys}');
  const digestKey = async () =>
    kubectl('get', 'secret', `${fullname}-digest-key`, '-n', namespace, '-o', 'jsonpath={.data.key}');

  const steeringKey = async () =>
    kubectl(
      'get',
      'secret',
      `${fullname}-steering`,
      '-n',
      namespace,
      '-o',
      'jsonpath={.data.steering-key\\.pem}',
    );

  it('generates an encryption key, a release digest key and a steering key at install and keeps them across an upgrade', async () => {
    const installed = await encryptionKeys();
    expect(parseKeys(Buffer.from(installed, 'base64').toString(), 'the Secret')).toHaveLength(1);
    const installedDigestKey = await digestKey();
    expect(parseDigestKey(Buffer.from(installedDigestKey, 'base64').toString(), 'the Secret')).toHaveLength(
      32,
    );
    const steering = await steeringKey();
    expect(createPrivateKey(Buffer.from(steering, 'base64').toString()).asymmetricKeyType).toBe('ed25519');
    await helm(
      'upgrade',
      release,
      chart,
      '--namespace',
      namespace,
      '--reuse-values',
      '--wait',
      '--timeout',
      '120s',
    );
    expect(await encryptionKeys()).toBe(installed);
    expect(await digestKey()).toBe(installedDigestKey);
    // Runs carry the bridge's public key from their start: a new key could not steer them.
    expect(await steeringKey()).toBe(steering);
  });

  describe("the worker's ServiceAccount", () => {
    let asWorker: string;
    beforeAll(async () => {
      asWorker = await serviceAccountKubeconfig(namespace, `${fullname}-worker`);
    });

    it.each(workerMay)('may %s', async (_action, args) => {
      expect(await canI(asWorker, [...args, '--namespace', SOME_NAMESPACE])).toBe(true);
    });

    it.each(workerMayNot)('may not %s', async (_action, args) => {
      expect(await canI(asWorker, [...args, '--namespace', SOME_NAMESPACE])).toBe(false);
    });

    it.each(deployerMay)(
      'may %s in the namespaces of rbac.deploy.workerNamespaces',
      async (_action, args) => {
        expect(await canI(asWorker, [...args, '--namespace', target])).toBe(true);
      },
    );

    it('runs helm install, upgrade, rollback and uninstall by itself where rbac.deploy.workerNamespaces lets it', async () => {
      const asSa = (...args: string[]) => helm('--kubeconfig', asWorker, ...args);
      const deploy = ['upgrade', '--install', 'hello', hello, '--namespace', target];
      await asSa(...deploy, '--create-namespace', '--wait=watcher', '--timeout', '60s');
      await asSa(...deploy, '--set', 'replicaCount=2', '--wait=watcher', '--timeout', '60s');
      await asSa('rollback', 'hello', '1', '--namespace', target, '--wait=watcher', '--timeout', '60s');
      const history = JSON.parse(await asSa('history', 'hello', '--namespace', target, '--output', 'json'));
      expect(history.map((r: { status: string }) => r.status)).toEqual([
        'superseded',
        'superseded',
        'deployed',
      ]);
      await asSa('uninstall', 'hello', '--namespace', target, '--wait=watcher', '--timeout', '60s');
      expect(await asSa('list', '--namespace', target, '--short')).toBe('');
    });

    it('may impersonate the ServiceAccounts of rbac.deploy.serviceAccounts only, each by name in its own namespace', async () => {
      const impersonate = (name: string, ns: string) =>
        canI(asWorker, ['impersonate', `serviceaccounts/${name}`, '--namespace', ns]);
      expect(await impersonate('deployer', tenant)).toBe(true);
      expect(await impersonate('default', tenant)).toBe(false);
      expect(await impersonate('deployer', 'kube-system')).toBe(false);
    });

    it("acting as a tenant's ServiceAccount (rbac.deploy.serviceAccounts), deploys into the tenant's namespace and nowhere else", async () => {
      const asTenant = (...args: string[]) =>
        helm('--kubeconfig', asWorker, '--kube-as-user', `system:serviceaccount:${tenant}:deployer`, ...args);
      await asTenant('install', 'hello', hello, '--namespace', tenant, '--wait=watcher', '--timeout', '60s');
      expect(
        JSON.parse(await helm('status', 'hello', '--namespace', tenant, '--output', 'json')).info.status,
      ).toBe('deployed');
      await expect(asTenant('install', 'hello', hello, '--namespace', target)).rejects.toThrow(
        `User "system:serviceaccount:${tenant}:deployer" cannot`,
      );
      expect(await helm('list', '--namespace', target, '--short')).toBe('');
    });
  });

  describe("a tenant's ServiceAccount (rbac.deploy.serviceAccounts)", () => {
    let asTenant: string;
    beforeAll(async () => {
      asTenant = await serviceAccountKubeconfig(tenant, 'deployer');
    });

    it.each(deployerMay)('may %s in its own namespace', async (_action, args) => {
      expect(await canI(asTenant, [...args, '--namespace', tenant])).toBe(true);
    });

    it.each<Check>([
      ['read a Secret', ['get', 'secrets']],
      ['create a Deployment', ['create', 'deployments.apps']],
      ['create a namespace', ['create', 'namespaces']],
      ['impersonate a ServiceAccount', ['impersonate', 'serviceaccounts']],
    ])('may not %s elsewhere', async (_action, args) => {
      expect(await canI(asTenant, [...args, '--namespace', SOME_NAMESPACE])).toBe(false);
      expect(await canI(asTenant, [...args, '--namespace', target])).toBe(false);
    });
  });

  describe("the bridge's ServiceAccount", () => {
    let asBridge: string;
    beforeAll(async () => {
      asBridge = await serviceAccountKubeconfig(namespace, `${fullname}-bridge`);
    });

    it.each<Check>([
      [
        'watch ArmadaManifests in every namespace',
        ['watch', 'armadamanifests.armada.airshipit.org', '--all-namespaces'],
      ],
      [
        'patch an ArmadaChart (finalizer, action annotations)',
        ['patch', 'armadacharts.armada.airshipit.org'],
      ],
      [
        'patch an ArmadaChartGroup status (Invalid)',
        ['patch', 'armadachartgroups.armada.airshipit.org', '--subresource=status'],
      ],
      ['create Events', ['create', 'events']],
      ['watch Deployments (drift)', ['watch', 'deployments.apps']],
      ['list ConfigMaps (drift)', ['list', 'configmaps']],
    ])('may %s', async (_action, args) => {
      expect(await canI(asBridge, [...args, '--namespace', SOME_NAMESPACE])).toBe(true);
    });

    it('may create its Lease and renew it, in the release namespace only', async () => {
      const lease = 'leases.coordination.k8s.io';
      expect(await canI(asBridge, ['create', lease, '--namespace', namespace])).toBe(true);
      expect(await canI(asBridge, ['update', `${lease}/armada-bridge`, '--namespace', namespace])).toBe(true);
      expect(await canI(asBridge, ['update', `${lease}/another`, '--namespace', namespace])).toBe(false);
      expect(await canI(asBridge, ['create', lease, '--namespace', SOME_NAMESPACE])).toBe(false);
    });

    it.each<Check>([
      ['read Secrets (it never runs helm)', ['get', 'secrets']],
      ['create a Deployment', ['create', 'deployments.apps']],
      ['delete a Namespace', ['delete', 'namespaces']],
      ['update an ArmadaChart', ['update', 'armadacharts.armada.airshipit.org']],
    ])('may not %s', async (_action, args) => {
      expect(await canI(asBridge, [...args, '--namespace', SOME_NAMESPACE])).toBe(false);
    });
  });

  it('installs the admission policies of deploy/admission/, unless told not to', async () => {
    const rendered = await helm('template', release, chart);
    for (const policy of [
      'MutatingAdmissionPolicy\nmetadata:\n  name: armada-action-by',
      'MutatingAdmissionPolicy\nmetadata:\n  name: armada-spec-author',
      'ValidatingAdmissionPolicy\nmetadata:\n  name: armada-authenticated-annotations',
    ])
      expect(rendered).toContain(`kind: ${policy}`);
    expect(await helm('template', release, chart, '--set', 'admissionPolicies.install=false')).not.toContain(
      'AdmissionPolicy',
    );
  });

  it('uninstalls, leaving the CRDs (and so every ArmadaChart), the admission policies and the encryption key in place', async () => {
    const keys = await encryptionKeys();
    await helm('uninstall', release, '--namespace', namespace, '--wait', '--timeout', '60s');
    for (const role of ['worker', 'deploy'])
      expect(await kubectl('get', 'clusterrole', `${fullname}-${role}`, '--ignore-not-found')).toBe('');
    expect(await kubectl('get', 'serviceaccount', 'deployer', '-n', tenant, '--ignore-not-found')).toBe('');
    expect(await kubectl('get', 'crd', 'armadacharts.armada.airshipit.org', '-o', 'name')).toContain(
      'armadacharts.armada.airshipit.org',
    );
    expect(
      await kubectl('get', 'validatingadmissionpolicy', 'armada-authenticated-annotations', '-o', 'name'),
    ).toContain('armada-authenticated-annotations');
    expect(await encryptionKeys()).toBe(keys);
  });
});

describe('the operator chart with Worker Versioning (helm template)', () => {
  const versions = (...builds: string[]) =>
    builds.flatMap((b, i) => [
      '--set',
      `worker.versions[${i}].buildId=${b}`,
      '--set',
      `worker.versions[${i}].tag=${b}`,
    ]);
  const render = (...args: string[]) =>
    helm('template', 'r', chart, '--show-only', 'templates/worker.yaml', ...args);

  it('renders one worker Deployment per build, each with its build ID, image and selector', async () => {
    const rendered = await render('--set', 'worker.deploymentName=armada', ...versions('0.1.0', '0.2.0'));
    const deployments = rendered
      .split(/^---$/m)
      .filter((doc) => doc.includes('kind: Deployment'))
      .map((doc) => ({
        name: /^ {2}name: (\S+)$/m.exec(doc)?.[1],
        image: /image: (\S+)/.exec(doc)?.[1],
        build: /name: ARMADA_BUILD_ID\n\s+value: "([^"]+)"/.exec(doc)?.[1],
        deployment: /name: ARMADA_WORKER_DEPLOYMENT\n\s+value: "([^"]+)"/.exec(doc)?.[1],
        selector: /matchLabels:[\s\S]*?armada.airshipit.org\/build-id: "([^"]+)"/.exec(doc)?.[1],
      }));
    expect(deployments).toEqual(
      ['0.1.0', '0.2.0'].map((b) => ({
        name: `r-armada-temporal-worker-${b}`,
        image: `armada-temporal:${b}`,
        build: b,
        deployment: 'armada',
        selector: b,
      })),
    );
  });

  it('refuses versioning without a build, and a build ID that cannot name a Deployment', async () => {
    await expect(render('--set', 'worker.deploymentName=armada')).rejects.toThrow(
      'worker.versions must list at least one build',
    );
    await expect(render('--set', 'worker.deploymentName=armada', ...versions('Bad_ID'))).rejects.toThrow(
      'buildId "Bad_ID" must be lower case letters',
    );
  });
});

describe('payload encryption in the operator chart (helm template)', () => {
  interface Rendered {
    kind: string;
    metadata: { name: string };
    data?: Record<string, string>;
    spec?: { template: { spec: PodSpec } };
  }
  interface PodSpec {
    containers: {
      env: { name: string; value?: string }[];
      volumeMounts: { name: string; mountPath: string }[];
    }[];
    volumes: { name: string; secret?: { secretName: string; items: { key: string; path: string }[] } }[];
  }
  const isEncryptionSecret = (doc: Rendered) =>
    doc.kind === 'Secret' && doc.metadata.name.endsWith('-encryption');
  const render = async (...args: string[]) =>
    parseAllDocuments(await helm('template', 'r', chart, ...args))
      .map((doc) => doc.toJS() as Rendered | null)
      .filter((doc): doc is Rendered => doc !== null);
  /**
   * How each Deployment's container finds a key file: the variable, the mount, the Secret and its
   * key (the payload encryption keys unless told otherwise).
   */
  const keysOf = (
    docs: Rendered[],
    volumeName = 'encryption-keys',
    variable = 'ARMADA_ENCRYPTION_KEYS_FILE',
  ) =>
    docs
      .filter((doc) => doc.kind === 'Deployment')
      .map((doc) => {
        const pod = doc.spec!.template.spec;
        const [container] = pod.containers;
        const volume = pod.volumes.find((v) => v.name === volumeName);
        return {
          deployment: doc.metadata.name,
          file: container.env.find((e) => e.name === variable)?.value,
          mountPath: container.volumeMounts.find((m) => m.name === volumeName)?.mountPath,
          secret: volume?.secret?.secretName,
          items: volume?.secret?.items,
        };
      });
  const secretNamed = (docs: Rendered[], name: string) =>
    docs.find((doc) => doc.kind === 'Secret' && doc.metadata.name === name);

  it('is on by default: one random 32-byte key in a Secret of its own, mounted into the worker and the bridge', async () => {
    const docs = await render();
    const secret = secretNamed(docs, 'r-armada-temporal-encryption');
    const keys = parseKeys(Buffer.from(secret!.data!.keys, 'base64').toString(), 'the rendered Secret');
    expect(keys).toHaveLength(1);
    expect(keys[0].id).toMatch(/^\d{4}-\d{2}-\d{2}$/);
    const [again] = parseKeys(
      Buffer.from(
        secretNamed(await render(), 'r-armada-temporal-encryption')!.data!.keys,
        'base64',
      ).toString(),
      'another render',
    );
    expect(again.key.equals(keys[0].key)).toBe(false);
    expect(keysOf(docs)).toEqual(
      ['r-armada-temporal-bridge', 'r-armada-temporal-worker'].map((deployment) => ({
        deployment,
        file: '/etc/armada/encryption/keys',
        mountPath: '/etc/armada/encryption',
        secret: 'r-armada-temporal-encryption',
        items: [{ key: 'keys', path: 'keys' }],
      })),
    );
  });

  it("generates the bridge's steering key (Ed25519) into a Secret of its own, mounted into the bridge alone; or mounts the operator's", async () => {
    const steeringOf = (docs: Rendered[]) =>
      docs
        .filter((doc) => doc.kind === 'Deployment')
        .map((doc) => {
          const pod = doc.spec!.template.spec;
          const [container] = pod.containers;
          return {
            file: container.env.find((e) => e.name === 'ARMADA_STEERING_KEY_FILE')?.value,
            secret: pod.volumes.find((v) => v.name === 'steering-key')?.secret,
          };
        });
    const docs = await render();
    const secret = docs.find(
      (doc) => doc.kind === 'Secret' && doc.metadata.name === 'r-armada-temporal-steering',
    )!;
    const pem = Buffer.from(secret.data!['steering-key.pem'], 'base64').toString();
    expect(createPrivateKey(pem).asymmetricKeyType).toBe('ed25519');
    const secretOf = (name: string) => ({
      secretName: name,
      items: [{ key: 'steering-key.pem', path: 'key.pem' }],
    });
    expect(steeringOf(docs)).toEqual([
      { file: '/etc/armada/steering/key.pem', secret: secretOf('r-armada-temporal-steering') },
      { file: undefined, secret: undefined },
    ]);
    const own = await render('--set', 'steering.existingSecret=my-steering');
    expect(own.filter((doc) => doc.kind === 'Secret' && doc.metadata.name.endsWith('-steering'))).toEqual([]);
    expect(steeringOf(own)[0]).toEqual({
      file: '/etc/armada/steering/key.pem',
      secret: secretOf('my-steering'),
    });
  });

  it("mounts the operator's own Secret instead, and renders none", async () => {
    const docs = await render(
      '--set',
      'encryption.existingSecret=my-keys',
      '--set',
      'encryption.secretKey=current',
    );
    expect(docs.filter(isEncryptionSecret)).toEqual([]);
    expect(keysOf(docs).map(({ secret, items }) => ({ secret, items }))).toEqual(
      Array(2).fill({ secret: 'my-keys', items: [{ key: 'current', path: 'keys' }] }),
    );
  });

  it('can be turned off: no Secret, no variable, no mount', async () => {
    const docs = await render('--set', 'encryption.enabled=false');
    expect(docs.filter(isEncryptionSecret)).toEqual([]);
    expect(keysOf(docs).map(({ file, mountPath, secret }) => ({ file, mountPath, secret }))).toEqual(
      Array(2).fill({ file: undefined, mountPath: undefined, secret: undefined }),
    );
  });

  it('generates a release digest key of 32 random bytes in a Secret of its own, mounted into the worker only', async () => {
    const docs = await render();
    const key = (rendered: Rendered[]) =>
      parseDigestKey(
        Buffer.from(secretNamed(rendered, 'r-armada-temporal-digest-key')!.data!.key, 'base64').toString(),
        'the rendered Secret',
      );
    expect(key(docs)).toHaveLength(32);
    expect(key(await render()).equals(key(docs))).toBe(false);
    expect(keysOf(docs, 'digest-key', 'ARMADA_DIGEST_KEY_FILE')).toEqual([
      {
        deployment: 'r-armada-temporal-bridge',
        file: undefined,
        mountPath: undefined,
        secret: undefined,
        items: undefined,
      },
      {
        deployment: 'r-armada-temporal-worker',
        file: '/etc/armada/digest-key/key',
        mountPath: '/etc/armada/digest-key',
        secret: 'r-armada-temporal-digest-key',
        items: [{ key: 'key', path: 'key' }],
      },
    ]);
  });

  it("mounts the operator's own digest key Secret instead, and renders none", async () => {
    const docs = await render(
      '--set',
      'digestKey.existingSecret=my-digest-key',
      '--set',
      'digestKey.secretKey=hmac',
    );
    expect(secretNamed(docs, 'r-armada-temporal-digest-key')).toBeUndefined();
    expect(keysOf(docs, 'digest-key', 'ARMADA_DIGEST_KEY_FILE')[1]).toMatchObject({
      secret: 'my-digest-key',
      items: [{ key: 'hmac', path: 'key' }],
    });
  });
});

describe('the operator chart with an empty managedResources, the worker deploying anywhere (rbac.deploy.workerClusterWide)', () => {
  const release = uniqueName('armada-bare');
  const namespace = uniqueName('operator-bare');
  let asWorker: string;

  beforeAll(async () => {
    await helm(
      'install',
      release,
      chart,
      '--namespace',
      namespace,
      '--create-namespace',
      '--skip-crds',
      '--set',
      'admissionPolicies.install=false',
      '--set-json',
      'managedResources=[]',
      '--set',
      'rbac.deploy.workerClusterWide=true',
      '--set',
      'worker.replicas=0',
      '--set',
      'bridge.replicas=0',
    );
    asWorker = await serviceAccountKubeconfig(namespace, `${release}-armada-temporal-worker`);
  });
  afterAll(async () => {
    await helm('uninstall', release, '--namespace', namespace, '--ignore-not-found').catch(() => '');
    await kubectl('delete', 'namespace', namespace, '--ignore-not-found', '--wait=false');
  });

  // The worker's own code needs these whatever charts it deploys.
  it.each<Check>([
    ['list HorizontalPodAutoscalers (canary capacity)', ['list', 'horizontalpodautoscalers.autoscaling']],
    ['replace a Deployment (canary copies)', ['update', 'deployments.apps']],
    ['scale a Deployment (canary steps)', ['patch', 'deployments.apps', '--subresource=scale']],
    ['list Helm release Secrets', ['list', 'secrets']],
  ])('still lets the worker %s', async (_action, args) => {
    expect(await canI(asWorker, [...args, '--namespace', SOME_NAMESPACE])).toBe(true);
  });

  it.each<Check>([
    ['create a HorizontalPodAutoscaler', ['create', 'horizontalpodautoscalers.autoscaling']],
    ['create a Service', ['create', 'services']],
  ])('no longer lets the worker %s (only managedResources grants it)', async (_action, args) => {
    expect(await canI(asWorker, [...args, '--namespace', SOME_NAMESPACE])).toBe(false);
  });
});

describe("the suite's product processes run as the chart's ServiceAccounts (global-setup.ts)", () => {
  const worker = process.env.ARMADA_TEST_WORKER_KUBECONFIG;

  it("the worker's kubeconfig, in this process too, is the worker ServiceAccount's", async () => {
    expect(worker).toBeDefined();
    // The in-process workers and the activities tests call directly read ARMADA_KUBECONFIG.
    expect(process.env.ARMADA_KUBECONFIG).toBe(worker);
    const review = JSON.parse(await kubectl('--kubeconfig', worker!, 'auth', 'whoami', '--output', 'json'));
    expect(review.status.userInfo.username).toMatch(
      /^system:serviceaccount:armada-system:armada-[0-9a-f]{8}-armada-temporal-worker$/,
    );
  });

  it("the product's own client may not delete a Namespace", async () => {
    const victim = uniqueName('operator-victim');
    await kubectl('create', 'namespace', victim);
    try {
      await expect(kubeApi(CoreV1Api).deleteNamespace({ name: victim })).rejects.toMatchObject({ code: 403 });
      expect(await kubectl('get', 'namespace', victim, '--output', 'name')).toBe(`namespace/${victim}\n`);
    } finally {
      await kubectl('delete', 'namespace', victim, '--wait=false');
    }
  });
});

describe('tenancy settings in the operator chart (helm template)', () => {
  const bridgeEnv = async (...args: string[]) => {
    const rendered = await helm('template', 'r', chart, '--show-only', 'templates/bridge.yaml', ...args);
    const deployment = parseAllDocuments(rendered)[0].toJS() as {
      spec: { template: { spec: { containers: { env: { name: string; value?: string }[] }[] } } };
    };
    return Object.fromEntries(
      deployment.spec.template.spec.containers[0].env
        .filter((e) => ['ARMADA_LOCKDOWN', 'ARMADA_DEFAULT_SERVICE_ACCOUNT'].includes(e.name))
        .map((e) => [e.name, e.value]),
    );
  };

  it("sets the bridge's default ServiceAccount and lockdown, and neither by default", async () => {
    expect(await bridgeEnv()).toEqual({ ARMADA_LOCKDOWN: 'false' });
    expect(
      await bridgeEnv('--set', 'tenancy.defaultServiceAccount=deployer', '--set', 'tenancy.lockdown=true'),
    ).toEqual({ ARMADA_LOCKDOWN: 'true', ARMADA_DEFAULT_SERVICE_ACCOUNT: 'deployer' });
  });

  it('refuses a tenant ServiceAccount without a namespace', async () => {
    await expect(
      helm('template', 'r', chart, '--set', 'rbac.deploy.serviceAccounts[0].name=deployer'),
    ).rejects.toThrow('rbac.deploy.serviceAccounts: every entry needs a namespace and a name');
  });
});
