import { CoreV1Api } from '@kubernetes/client-node';
import path from 'node:path';
import { chartWorkflow } from '../../workflows';
import { helm, kubeConfig, temporalHarness, uniqueName } from '../helpers/env';

const chart = path.resolve(__dirname, '../../examples/charts/hello');

describe('a chart workflow on the real stack (dev server, sandbox cluster, helm CLI)', () => {
  it('installs the example chart and its pods become Ready', async () => {
    const release = uniqueName('hello');
    const namespace = uniqueName('e2e');
    const harness = await temporalHarness();
    try {
      const result = await harness.worker.runUntil(
        harness.client.workflow.execute(chartWorkflow, {
          taskQueue: harness.taskQueue,
          workflowId: `test-${release}`,
          args: [{ release, namespace, chart, values: { replicaCount: 3 }, waitTimeoutSeconds: 120 }],
        }),
      );
      expect(result).toMatchObject({ release, namespace, revision: 1, status: 'deployed' });

      const status = JSON.parse(await helm('status', release, '--namespace', namespace, '--output', 'json'));
      expect(status.info.status).toBe('deployed');

      const pods = await kubeConfig()
        .makeApiClient(CoreV1Api)
        .listNamespacedPod({ namespace, labelSelector: `app.kubernetes.io/instance=${release}` });
      expect(pods.items).toHaveLength(3);
      for (const pod of pods.items) {
        const ready = pod.status?.conditions?.find((c) => c.type === 'Ready');
        expect({ pod: pod.metadata?.name, ready: ready?.status }).toEqual({
          pod: pod.metadata?.name,
          ready: 'True',
        });
      }
    } finally {
      await harness.close();
    }
  });
});
