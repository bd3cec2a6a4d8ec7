import { AppsV1Api, CoreV1Api, type V1Deployment } from '@kubernetes/client-node';
import { apiFailure, isStatus, kubeApi, type ActingAs } from '../../kube/client';
import { DEPLOYER_LABEL, VERSION_LABEL, deployerVersionLabels } from '../../kube/labels';
import { deployerDeploymentName } from '../../workflows/plan/names';
import { labelSelector } from './readiness';

export interface DeployerRef extends ActingAs {
  /** The Deployer's `deployment.name` and `deployment.namespace`. */
  name: string;
  namespace: string;
}

export interface DeployedVersion {
  /** Deployment name, `<name>-<version>`. */
  deployment: string;
  version: string;
  replicas: number;
}

export interface DeployerDeploymentRequest extends DeployerRef {
  image: string;
  version: string;
  labels?: Record<string, string>;
  replicas: number;
}

/**
 * The Deployment of one version: pods carry the user's labels (what Services select, so both
 * versions get traffic in proportion to replicas) plus the Deployer and version labels, and the
 * selector includes the version, so each version's Deployment owns only its own pods.
 */
export function deployerDeployment(req: DeployerDeploymentRequest): V1Deployment {
  const own = deployerVersionLabels(req.name, req.version);
  const podLabels = { ...req.labels, ...own };
  return {
    apiVersion: 'apps/v1',
    kind: 'Deployment',
    metadata: {
      name: deployerDeploymentName(req.name, req.version),
      namespace: req.namespace,
      labels: podLabels,
    },
    spec: {
      replicas: req.replicas,
      selector: { matchLabels: own },
      template: {
        metadata: { labels: podLabels },
        spec: { containers: [{ name: req.name, image: `${req.image}:${req.version}` }] },
      },
    },
  };
}

/**
 * Activity: the Deployments a Deployer runs now, one per version, found by its label.
 * Reads only. Returns them sorted by replicas, most first (the stable one leads).
 */
export async function observeDeployer(ref: DeployerRef): Promise<DeployedVersion[]> {
  const list = await kubeApi(AppsV1Api, ref.actAs).listNamespacedDeployment({
    namespace: ref.namespace,
    labelSelector: labelSelector({ [DEPLOYER_LABEL]: ref.name }),
  });
  return list.items
    .map((d) => ({
      deployment: d.metadata?.name ?? '',
      version: d.metadata?.labels?.[VERSION_LABEL] ?? '',
      replicas: d.spec?.replicas ?? 1,
    }))
    .sort((a, b) => b.replicas - a.replicas || a.deployment.localeCompare(b.deployment));
}

/**
 * Activity: creates the Deployment of one version at `replicas`. Idempotent: when it exists
 * already (a retried attempt, a resumed run) it is left as it is, replicas included, since the
 * canary steps set those. Writes: the namespace when missing, one Deployment. Returns: its name.
 */
export async function createDeployerDeployment(req: DeployerDeploymentRequest): Promise<string> {
  const body = deployerDeployment(req);
  const name = body.metadata!.name!;
  // Acting as a ServiceAccount, a run creates no namespace (as helm gets no --create-namespace):
  // a namespace-bound tenant could otherwise have the worker create any name it likes.
  if (!req.actAs) await ensureNamespace(req.namespace);
  try {
    await kubeApi(AppsV1Api, req.actAs).createNamespacedDeployment({ namespace: req.namespace, body });
  } catch (err) {
    if (!isStatus(err, 409)) throw apiFailure(`create Deployment ${req.namespace}/${name}`, err);
  }
  return name;
}

/** Creates the namespace when it is missing, as `helm --create-namespace` does for charts. */
async function ensureNamespace(namespace: string): Promise<void> {
  try {
    await kubeApi(CoreV1Api).createNamespace({ body: { metadata: { name: namespace } } });
  } catch (err) {
    if (!isStatus(err, 409)) throw apiFailure(`create namespace ${namespace}`, err);
  }
}
