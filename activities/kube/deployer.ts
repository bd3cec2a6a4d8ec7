import { Context } from '@temporalio/activity';
import { ApplicationFailure } from '@temporalio/common';
import {
  AppsV1Api,
  CoreV1Api,
  CustomObjectsApi,
  PatchStrategy,
  setHeaderOptions,
  type V1Deployment,
} from '@kubernetes/client-node';
import { GROUP, VERSION } from '../../api/common';
import { kinds } from '../../api/kinds';
import type { DeployerStatus } from '../../api/deployer';
import { apiFailure, isStatus, kubeApi } from '../../kube/client';
import { DEPLOYER_LABEL, VERSION_LABEL, deployerVersionLabels } from '../../core/labels';
import { recordEvent } from '../../kube/status';
import { NonRetryable } from '../../core/failures';
import { deployerDeploymentName } from '../../core/plan/names';
import { labelSelector } from './readiness';
import type { DeployerRef, DeployedVersion, DeployerObject } from '../../core/contracts/kube';

export interface DeployerDeploymentRequest extends DeployerRef {
  image: string;
  version: string;
  labels?: Record<string, string>;
  replicas: number;
  /** Records the created Deployment's UID in this Deployer's status. */
  deployer?: DeployerObject;
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

async function labelledDeployments(ref: DeployerRef): Promise<V1Deployment[]> {
  const list = await kubeApi(AppsV1Api, ref.actAs).listNamespacedDeployment({
    namespace: ref.namespace,
    labelSelector: labelSelector({ [DEPLOYER_LABEL]: ref.name }),
  });
  return list.items;
}

function deployedVersions(deployments: V1Deployment[]): DeployedVersion[] {
  return deployments
    .map((d) => ({
      deployment: d.metadata?.name ?? '',
      version: d.metadata?.labels?.[VERSION_LABEL] ?? '',
      replicas: d.spec?.replicas ?? 1,
    }))
    .sort((a, b) => b.replicas - a.replicas || a.deployment.localeCompare(b.deployment));
}

/** The Deployments a Deployer owns, and the ones carrying its label that it does not. */
export interface Ownership {
  owned: V1Deployment[];
  strangers: V1Deployment[];
  /** The record to keep (name to UID): the owned ones, once the Deployer has a status to keep it in. */
  record?: Record<string, string>;
}

/**
 * Which of the Deployments carrying a Deployer's label (`labelled`) are its own
 * (docs/how-to/progressive-delivery.md, "Canaries", the Deployer's ownership):
 * - its status records their UIDs (`owned_deployments`, written by the worker alone: tenants do
 *   not write a Deployer's status): exactly those, by name and UID;
 * - a Deployer without a record yet (its runs began before the record): once, the one its status
 *   says serves (`<name>-<current_version>`, with that version's label), which is recorded then;
 * - no Deployer on the cluster (a file a Temporal administrator runs): no status can hold a
 *   record, so the names it would have created, `<name>-<version label>`.
 */
export function ownership(
  name: string,
  labelled: V1Deployment[],
  status: DeployerStatus | undefined | null,
): Ownership {
  const versionOf = (d: V1Deployment) => d.metadata?.labels?.[VERSION_LABEL] ?? '';
  const isNamed = (d: V1Deployment, version: string) =>
    versionOf(d) === version && d.metadata?.name === deployerDeploymentName(name, version);
  const record = status?.owned_deployments;
  const owns = (d: V1Deployment) =>
    status === null
      ? isNamed(d, versionOf(d))
      : record
        ? record[d.metadata?.name ?? ''] === d.metadata?.uid
        : !!status?.current_version && isNamed(d, status.current_version);
  const owned = labelled.filter(owns);
  return {
    owned,
    strangers: labelled.filter((d) => !owns(d)),
    ...(status !== null && {
      record: Object.fromEntries(owned.map((d) => [d.metadata!.name!, d.metadata!.uid!])),
    }),
  };
}

/**
 * Activity: the Deployments a Deployer owns (see `ownership`), one per version, sorted by
 * replicas, most first (the stable one leads). Writes: the Deployer's record when it changes (adopted once, or
 * Deployments gone since), and a Warning Event on the Deployer naming each Deployment that
 * carries its label but is not its own, which the run leaves alone. Reads the Deployer's status
 * and writes its record and Events with the worker's own rights, never the run's ServiceAccount.
 */
export async function observeOwnedDeployments(
  ref: DeployerRef & { deployer: DeployerObject },
): Promise<DeployedVersion[]> {
  const [labelled, deployer] = await Promise.all([labelledDeployments(ref), readDeployer(ref.deployer)]);
  const status = deployer && deployer.status;
  const { owned, strangers, record } = ownership(ref.name, labelled, status);
  if (record && !sameRecord(record, status?.owned_deployments)) {
    const gone = Object.keys(status?.owned_deployments ?? {}).filter((n) => !(n in record));
    await patchOwned(ref.deployer, { ...record, ...Object.fromEntries(gone.map((n) => [n, null])) });
  }
  for (const d of strangers) {
    const message = `Deployment ${ref.namespace}/${d.metadata?.name} carries ${DEPLOYER_LABEL}=${ref.name} but Deployer ${ref.deployer.namespace}/${ref.deployer.name} did not create it (not owned): it is never scaled or deleted`;
    if (status === null) console.warn(JSON.stringify({ level: 'warn', message }));
    else
      await recordEvent({ kind: 'Deployer', ...ref.deployer }, deployer?.uid, {
        type: 'Warning',
        reason: 'NotOwned',
        message,
      });
  }
  return deployedVersions(owned);
}

function sameRecord(a: Record<string, string>, b: Record<string, string> | undefined): boolean {
  return (
    !!b && Object.keys(a).length === Object.keys(b).length && Object.entries(a).every(([k, v]) => b[k] === v)
  );
}

/** A Deployer's status and UID; null when it is not on the cluster. Read with the worker's own rights. */
async function readDeployer(
  deployer: DeployerObject,
): Promise<{ status: DeployerStatus; uid?: string } | null> {
  try {
    const object = (await kubeApi(CustomObjectsApi).getNamespacedCustomObjectStatus(
      deployerTarget(deployer),
    )) as { metadata?: { uid?: string }; status?: DeployerStatus };
    return { status: object.status ?? {}, uid: object.metadata?.uid };
  } catch (err) {
    if (isStatus(err, 404)) return null;
    throw apiFailure(`read the status of Deployer ${deployer.namespace}/${deployer.name}`, err);
  }
}

/** Merges entries into a Deployer's record (null removes one); nothing when it is not on the cluster. */
async function patchOwned(deployer: DeployerObject, entries: Record<string, string | null>): Promise<void> {
  try {
    await kubeApi(CustomObjectsApi).patchNamespacedCustomObjectStatus(
      { ...deployerTarget(deployer), body: { status: { owned_deployments: entries } } },
      setHeaderOptions('Content-Type', PatchStrategy.MergePatch),
    );
  } catch (err) {
    if (!isStatus(err, 404))
      throw apiFailure(`record the Deployments of Deployer ${deployer.namespace}/${deployer.name}`, err);
  }
}

/** Removes Deployments from a Deployer's record (they were deleted). */
export async function forgetOwned(deployer: DeployerObject, names: string[]): Promise<void> {
  await patchOwned(deployer, Object.fromEntries(names.map((n) => [n, null])));
}

function deployerTarget({ namespace, name }: DeployerObject) {
  return { group: GROUP, version: VERSION, namespace, plural: kinds.Deployer.plural, name };
}

/**
 * Activity: creates the Deployment of one version at `replicas`. Idempotent: when it exists
 * already (a retried attempt, a resumed run) it is left as it is, replicas included, since the
 * canary steps set those. Writes: the namespace when missing, one Deployment, and with `deployer`
 * its UID in the Deployer's record (recordOwned). Returns: its name.
 */
export async function createDeployerDeployment(req: DeployerDeploymentRequest): Promise<string> {
  const body = deployerDeployment(req);
  const name = body.metadata!.name!;
  const apps = kubeApi(AppsV1Api, req.actAs);
  // Acting as a ServiceAccount, a run creates no namespace (as helm gets no --create-namespace):
  // a namespace-bound tenant could otherwise have the worker create any name it likes.
  if (!req.actAs) await ensureNamespace(req.namespace);
  let created: V1Deployment | undefined;
  try {
    created = await apps.createNamespacedDeployment({ namespace: req.namespace, body });
  } catch (err) {
    if (!isStatus(err, 409)) throw apiFailure(`create Deployment ${req.namespace}/${name}`, err);
  }
  if (req.deployer)
    await recordOwned(
      { ...req, deployer: req.deployer },
      created ?? (await apps.readNamespacedDeployment({ name, namespace: req.namespace })),
      !created,
    );
  return name;
}

/** creationTimestamp has whole seconds: one created in the second the activity was scheduled in counts. */
const TIMESTAMP_SECOND = 1000;

/**
 * Records a Deployer's new Deployment in its status (`owned_deployments`). One that existed
 * already (`found`: the version runs already, or a retried create) must be the Deployer's (see
 * `ownership`), or have been created by an earlier attempt of this very activity (a create whose
 * answer was lost, or whose record write failed) after the activity was first scheduled. Anything
 * else is someone else's: never taken over, the run fails naming it.
 */
async function recordOwned(
  req: DeployerDeploymentRequest & { deployer: DeployerObject },
  deployment: V1Deployment,
  found: boolean,
): Promise<void> {
  const { deployer } = req;
  const { name, uid, creationTimestamp } = deployment.metadata ?? {};
  const object = await readDeployer(deployer);
  if (found && !ownership(req.name, [deployment], object && object.status).owned.length) {
    const { attempt, scheduledTimestampMs } = Context.current().info;
    const ours =
      attempt > 1 &&
      !!creationTimestamp &&
      new Date(creationTimestamp).getTime() >= scheduledTimestampMs - TIMESTAMP_SECOND;
    if (!ours)
      throw ApplicationFailure.nonRetryable(
        `Deployment ${req.namespace}/${name} exists and Deployer ${deployer.namespace}/${deployer.name} did not create it (not owned): it is left as it is; delete or rename it to deploy this version`,
        NonRetryable.DeploymentNotOwned,
      );
  }
  if (object) await patchOwned(deployer, { [name!]: uid! });
}

/** Creates the namespace when it is missing, as `helm --create-namespace` does for charts. */
async function ensureNamespace(namespace: string): Promise<void> {
  try {
    await kubeApi(CoreV1Api).createNamespace({ body: { metadata: { name: namespace } } });
  } catch (err) {
    if (!isStatus(err, 409)) throw apiFailure(`create namespace ${namespace}`, err);
  }
}
