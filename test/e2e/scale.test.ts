import { AppsV1Api, CoreV1Api } from '@kubernetes/client-node';
import { scaleDeployment } from '../../activities/kube/scale';
import { kubeConfig, uniqueName } from '../helpers/env';

describe('scaleDeployment on the real sandbox cluster', () => {
  const namespace = uniqueName('scale');
  const kc = kubeConfig();
  const apps = kc.makeApiClient(AppsV1Api);
  const core = kc.makeApiClient(CoreV1Api);

  beforeAll(async () => {
    await core.createNamespace({ body: { metadata: { name: namespace } } });
    await apps.createNamespacedDeployment({
      namespace,
      body: {
        metadata: { name: 'web', annotations: { keep: 'me' } },
        spec: {
          replicas: 10,
          selector: { matchLabels: { app: 'web' } },
          template: {
            metadata: { labels: { app: 'web' } },
            spec: { containers: [{ name: 'web', image: 'web:1' }] },
          },
        },
      },
    });
  });
  afterAll(() => core.deleteNamespace({ name: namespace }));

  it('sets replicas through the scale subresource and touches nothing else', async () => {
    expect(await scaleDeployment({ namespace, name: 'web', replicas: 3 })).toBe(3);
    const web = await apps.readNamespacedDeployment({ namespace, name: 'web' });
    expect(web.spec?.replicas).toBe(3);
    expect(web.metadata?.annotations?.keep).toBe('me');
    expect(web.spec?.template.spec?.containers[0].image).toBe('web:1');
  });

  it('is idempotent and takes 0', async () => {
    expect(await scaleDeployment({ namespace, name: 'web', replicas: 0 })).toBe(0);
    expect(await scaleDeployment({ namespace, name: 'web', replicas: 0 })).toBe(0);
  });
});
