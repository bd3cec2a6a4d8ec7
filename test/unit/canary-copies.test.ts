import type { V1Deployment, V2HorizontalPodAutoscaler } from '@kubernetes/client-node';
import { ApplicationFailure } from '@temporalio/common';
import {
  canaryCopy,
  hpaMinReplicas,
  renderedDeployments,
  templateArgs,
} from '../../activities/kube/canary-copies';
import { CANARY_LABEL, CANARY_OF_LABEL } from '../../core/labels';
import { NonRetryable } from '../../core/failures';

const stableLabels = { 'app.kubernetes.io/name': 'hello', 'app.kubernetes.io/instance': 'web' };

/** A Deployment as `helm template` renders it, with Helm's ownership written in by the chart. */
function rendered(): V1Deployment {
  return {
    apiVersion: 'apps/v1',
    kind: 'Deployment',
    metadata: {
      name: 'web',
      namespace: 'elsewhere',
      labels: { ...stableLabels, 'app.kubernetes.io/managed-by': 'Helm', tier: 'front' },
      annotations: {
        'meta.helm.sh/release-name': 'web',
        'meta.helm.sh/release-namespace': 'apps',
        'checksum/config': 'abc',
      },
    },
    spec: {
      replicas: 4,
      selector: {
        matchLabels: stableLabels,
        matchExpressions: [{ key: 'track', operator: 'NotIn', values: ['old'] }],
      },
      template: {
        metadata: {
          labels: { ...stableLabels, 'app.kubernetes.io/managed-by': 'Helm' },
          annotations: { a: 'b' },
        },
        spec: { containers: [{ name: 'web', image: 'registry.local/hello:2.0.0' }] },
      },
    },
  };
}

describe('canaryCopy', () => {
  const copy = canaryCopy(rendered(), 'web');

  it('is named after the stable Deployment with a -canary suffix', () => {
    expect(copy.metadata?.name).toBe('web-canary');
    expect(copy).toMatchObject({ apiVersion: 'apps/v1', kind: 'Deployment' });
  });

  it('keeps the rendered labels, adds the canary labels and drops managed-by Helm', () => {
    expect(copy.metadata?.labels).toEqual({
      ...stableLabels,
      tier: 'front',
      [CANARY_LABEL]: 'true',
      [CANARY_OF_LABEL]: 'web',
    });
  });

  it('drops the meta.helm.sh annotations and keeps the others', () => {
    expect(copy.metadata?.annotations).toEqual({ 'checksum/config': 'abc' });
  });

  it('has no annotations at all when Helm’s were the only ones', () => {
    const onlyHelm = rendered();
    onlyHelm.metadata!.annotations = { 'meta.helm.sh/release-name': 'web' };
    expect(canaryCopy(onlyHelm, 'web').metadata).not.toHaveProperty('annotations');
  });

  it('leaves the namespace to the caller, not to what the chart wrote', () => {
    expect(copy.metadata).not.toHaveProperty('namespace');
  });

  it('starts at 0 replicas', () => {
    expect(copy.spec?.replicas).toBe(0);
  });

  it('selects the stable labels plus the canary label, keeping the expressions', () => {
    expect(copy.spec?.selector).toEqual({
      matchLabels: { ...stableLabels, [CANARY_LABEL]: 'true' },
      matchExpressions: [{ key: 'track', operator: 'NotIn', values: ['old'] }],
    });
  });

  it('labels its pods with every rendered pod label plus the canary label, so Services select them', () => {
    expect(copy.spec?.template.metadata).toEqual({
      labels: { ...stableLabels, 'app.kubernetes.io/managed-by': 'Helm', [CANARY_LABEL]: 'true' },
      annotations: { a: 'b' },
    });
    const podLabels = copy.spec!.template.metadata!.labels!;
    for (const [key, value] of Object.entries(rendered().spec!.selector.matchLabels!)) {
      expect(podLabels[key]).toBe(value);
    }
  });

  it('keeps the rendered pod spec', () => {
    expect(copy.spec?.template.spec).toEqual(rendered().spec?.template.spec);
  });

  it('does not change the rendered object', () => {
    const original = rendered();
    const copyOf = canaryCopy(original, 'web');
    expect(original).toEqual(rendered());
    copyOf.spec!.template.spec!.containers[0].image = 'changed';
    expect(original.spec?.template.spec?.containers[0].image).toBe('registry.local/hello:2.0.0');
  });

  it('selects the canary label alone when the chart selects by expressions only', () => {
    const byExpressions = rendered();
    byExpressions.spec!.selector = { matchExpressions: [{ key: 'app', operator: 'In', values: ['web'] }] };
    expect(canaryCopy(byExpressions, 'web').spec?.selector.matchLabels).toEqual({ [CANARY_LABEL]: 'true' });
  });

  it('refuses a Deployment without a name', () => {
    const nameless = rendered();
    delete nameless.metadata!.name;
    expect(() => canaryCopy(nameless, 'web')).toThrow('release web');
  });
});

describe('renderedDeployments', () => {
  const manifest = `---
# Source: hello/templates/service.yaml
apiVersion: v1
kind: Service
metadata:
  name: web
---
# Source: hello/templates/empty.yaml
---
# Source: hello/templates/deployment.yaml
apiVersion: apps/v1
kind: Deployment
metadata:
  name: web
spec:
  template:
    spec:
      volumes:
        - name: config
          configMap:
            name: web
            defaultMode: 0644
      containers:
        - name: web
          image: "registry.local/hello:2.0.0"
          args: [1:30, 2024-01-02]
---
apiVersion: extensions/v1beta1
kind: Deployment
metadata:
  name: ancient
---
apiVersion: apps/v1
kind: Deployment
metadata:
  name: worker
`;

  it('keeps the apps/v1 Deployments in rendered order and skips everything else', () => {
    expect(renderedDeployments(manifest).map((d) => d.metadata?.name)).toEqual(['web', 'worker']);
  });

  it('reads YAML as Kubernetes does: 0644 is octal, times and dates stay strings', () => {
    const [web] = renderedDeployments(manifest);
    expect(web.spec?.template.spec?.volumes?.[0].configMap?.defaultMode).toBe(0o644);
    expect(web.spec?.template.spec?.containers[0].args).toEqual(['1:30', '2024-01-02']);
  });

  it('finds nothing in a chart without Deployments', () => {
    expect(
      renderedDeployments('---\n# Source: x/templates/cm.yaml\napiVersion: v1\nkind: ConfigMap\n'),
    ).toEqual([]);
    expect(renderedDeployments('')).toEqual([]);
  });

  it('fails as InvalidChart, not retried, on output that is not YAML', () => {
    let error: unknown;
    try {
      renderedDeployments('kind: Deployment\n  name: [unclosed\n');
    } catch (err) {
      error = err;
    }
    expect(error).toBeInstanceOf(ApplicationFailure);
    expect(error).toMatchObject({ type: NonRetryable.InvalidChart, nonRetryable: true });
  });
});

describe('templateArgs', () => {
  it('renders the release from the chart in its namespace, values from a file only', () => {
    const args = templateArgs(
      {
        release: 'web',
        namespace: 'apps',
        chart: { source: { type: 'local', location: 'charts/web' } },
        values: { password: 's3cret' },
      },
      './charts/web',
      '/tmp/v.json',
    );
    expect(args).toEqual([
      'template',
      'web',
      './charts/web',
      '--namespace',
      'apps',
      '--values',
      '/tmp/v.json',
    ]);
    expect(args.join(' ')).not.toContain('s3cret');
  });
});

describe('hpaMinReplicas', () => {
  /** An HPA named `name` of `kind`/`target`, with `minReplicas` when given. */
  const hpa = (
    name: string,
    kind: string,
    target: string,
    minReplicas?: number,
  ): V2HorizontalPodAutoscaler => ({
    metadata: { name },
    spec: {
      scaleTargetRef: { apiVersion: 'apps/v1', kind, name: target },
      maxReplicas: 20,
      ...(minReplicas !== undefined && { minReplicas }),
    },
  });
  const others = [hpa('api', 'Deployment', 'api', 8), hpa('web-sts', 'StatefulSet', 'web', 9)];

  it.each([
    [
      'is the minReplicas of the HPA that targets the Deployment',
      [...others, hpa('web', 'Deployment', 'web', 6)],
      6,
    ],
    ['is 1, the API’s default, for an HPA without minReplicas', [hpa('web', 'Deployment', 'web')], 1],
    [
      'is the largest when several HPAs target it',
      [hpa('a', 'Deployment', 'web', 3), hpa('b', 'Deployment', 'web', 5)],
      5,
    ],
    ['is undefined when only other Deployments and kinds have HPAs', others, undefined],
    ['is undefined without HPAs', [], undefined],
  ])('%s', (_case, hpas, min) => {
    expect(hpaMinReplicas(hpas, 'web')).toBe(min);
  });
});
