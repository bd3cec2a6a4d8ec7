import { HttpMethod, KubeConfig, RequestContext } from '@kubernetes/client-node';
import { mkdtemp, writeFile } from 'node:fs/promises';
import https from 'node:https';
import { tmpdir } from 'node:os';
import path from 'node:path';
import { armadaKubeconfig, asCaller, kubeConfig, kubeconfigEnv, reusingConnections } from '../../kube/client';

/** A kubeconfig naming one cluster, so which file was loaded shows in its server. */
async function kubeconfigFile(dir: string, name: string): Promise<string> {
  const file = path.join(dir, `${name}.kubeconfig`);
  await writeFile(
    file,
    JSON.stringify({
      apiVersion: 'v1',
      kind: 'Config',
      clusters: [{ name, cluster: { server: `https://${name}.example:6443` } }],
      users: [{ name, user: { token: name } }],
      contexts: [{ name, context: { cluster: name, user: name } }],
      'current-context': name,
    }),
  );
  return file;
}

describe('asCaller: code shared with the worker talks to the cluster as the person running armadactl', () => {
  const saved = { ...process.env };
  let person: string;
  let worker: string;

  beforeAll(async () => {
    const dir = await mkdtemp(path.join(tmpdir(), 'kube-client-'));
    person = await kubeconfigFile(dir, 'person');
    worker = await kubeconfigFile(dir, 'worker');
    process.env.KUBECONFIG = person;
    process.env.ARMADA_KUBECONFIG = worker;
  });
  afterAll(() => {
    process.env.KUBECONFIG = saved.KUBECONFIG;
    process.env.ARMADA_KUBECONFIG = saved.ARMADA_KUBECONFIG;
    if (saved.KUBECONFIG === undefined) delete process.env.KUBECONFIG;
    if (saved.ARMADA_KUBECONFIG === undefined) delete process.env.ARMADA_KUBECONFIG;
  });

  it('outside it, the product follows ARMADA_KUBECONFIG, helm included', () => {
    expect(armadaKubeconfig()).toBe(worker);
    expect(kubeConfig().getCurrentCluster()?.server).toBe('https://worker.example:6443');
    expect(kubeconfigEnv().KUBECONFIG).toBe(worker);
  });

  it("inside it, the caller's own kubeconfig, however deep the call, and never ARMADA_KUBECONFIG", async () => {
    const seen = await asCaller(async () => {
      await new Promise((resolve) => setImmediate(resolve));
      return {
        file: armadaKubeconfig(),
        server: kubeConfig().getCurrentCluster()?.server,
        helm: kubeconfigEnv().KUBECONFIG,
      };
    });
    expect(seen).toEqual({ file: undefined, server: 'https://person.example:6443', helm: person });
  });

  it('leaves work running beside it (a worker in the same process) as it was', async () => {
    let release!: () => void;
    const gate = new Promise<void>((resolve) => (release = resolve));
    const inside = asCaller(async () => {
      await gate;
      return armadaKubeconfig();
    });
    expect(kubeConfig().getCurrentCluster()?.server).toBe('https://worker.example:6443');
    release();
    expect(await inside).toBeUndefined();
  });
});

describe('reusingConnections: one keep-alive pool per kubeconfig', () => {
  const config = (server: string) => {
    const kc = new KubeConfig();
    kc.loadFromOptions({
      clusters: [{ name: 'c', server, skipTLSVerify: false }],
      users: [{ name: 'u', token: 'secret-token' }],
      contexts: [{ name: 'x', cluster: 'c', user: 'u' }],
      currentContext: 'x',
    });
    return reusingConnections(kc);
  };
  const authenticate = async (kc: KubeConfig) => {
    const context = new RequestContext('https://api.example:6443/api/v1/namespaces', HttpMethod.GET);
    await kc.applySecurityAuthentication(context);
    return context;
  };

  it('gives every request of a config the same keep-alive agent, and still sets its credentials on each', async () => {
    const kc = config('https://api.example:6443');
    const [a, b] = [await authenticate(kc), await authenticate(kc)];
    expect(a.getAgent()).toBe(b.getAgent());
    expect(a.getAgent()).toBeInstanceOf(https.Agent);
    expect((a.getAgent() as https.Agent & { keepAlive: boolean }).keepAlive).toBe(true);
    expect(b.getHeaders().Authorization).toBe('Bearer secret-token');
  });

  it('keeps the pools of two configs apart', async () => {
    const [one, two] = [config('https://one.example'), config('https://two.example')];
    expect((await authenticate(one)).getAgent()).not.toBe((await authenticate(two)).getAgent());
  });
});
