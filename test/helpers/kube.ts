import {
  ApiException,
  AppsV1Api,
  CustomObjectsApi,
  Watch,
  type V1DeploymentSpec,
} from '@kubernetes/client-node';
import { execFile } from 'node:child_process';
import { mkdtemp, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import path from 'node:path';
import { promisify } from 'node:util';
import { toolPath } from '../../activities/tools';
import { GROUP, VERSION } from '../../api/common';
import { crdKinds } from '../../api/crd';
import { kinds, type KindName } from '../../api/kinds';
import type { ArmadaPolicySpec } from '../../api/policy';
import { DEPLOYER_LABEL, VERSION_LABEL } from '../../core/labels';
import { ACTION_ANNOTATION, AUTHOR_ANNOTATION, BY_ANNOTATION } from '../../runs/annotations';
import { kubeConfig } from './env';
import { eventually } from './processes';

// The repository root, from test/helpers/ or from dist/test/helpers/ (the benchmarks run compiled).
const repo = path.resolve(__dirname, __dirname.includes(`${path.sep}dist${path.sep}`) ? '../../..' : '../..');

/** The real kubectl against the test sandbox, as a user would run it. */
export async function kubectl(...args: string[]): Promise<string> {
  const { stdout } = await promisify(execFile)(toolPath('kubectl'), args, { cwd: repo, env: process.env });
  return stdout;
}

/**
 * `kubectl apply` of objects in `namespace`, as a user applies a file of them (a List, in JSON);
 * `serverSide`: `kubectl apply --server-side`.
 */
export async function applyObjects(
  namespace: string,
  objects: object[],
  opts: { serverSide?: boolean } = {},
): Promise<string> {
  const file = path.join(await mkdtemp(path.join(tmpdir(), 'armada-apply-')), 'objects.json');
  await writeFile(file, JSON.stringify({ apiVersion: 'v1', kind: 'List', items: objects }));
  return kubectl('apply', ...(opts.serverSide ? ['--server-side'] : []), '-n', namespace, '-f', file);
}

/** One event a watch delivered: its type (ADDED, MODIFIED, DELETED), the object's name and uid, and the object. */
export interface WatchedEvent {
  type: string;
  name: string;
  uid: string;
  object: WatchedObject;
}

/** An object as a watch delivers it. */
export interface WatchedObject {
  kind?: string;
  metadata?: { name?: string; uid?: string };
  spec?: unknown;
}

/**
 * Watches collections of the sandbox (API paths such as `/api/v1/namespaces/NS/secrets`, each
 * with a label selector) and records every event in the order this process receives them; each
 * watch first delivers the objects it finds as ADDED. `stop()` ends every watch.
 */
export async function recordEvents(
  watches: { path: string; labelSelector: string }[],
): Promise<{ events: WatchedEvent[]; stop(): void }> {
  const events: WatchedEvent[] = [];
  const watch = new Watch(kubeConfig());
  const aborts = await Promise.all(
    watches.map(({ path: collection, labelSelector }) =>
      watch.watch(
        collection,
        { labelSelector },
        (type, obj: WatchedObject) =>
          events.push({ type, name: obj.metadata?.name ?? '', uid: obj.metadata?.uid ?? '', object: obj }),
        // A watch that ends early records nothing more: what the caller looks for is then missing.
        () => undefined,
      ),
    ),
  );
  return { events, stop: () => aborts.forEach((a) => a.abort()) };
}

/** An object's key and value as watchedChanges shows them: a Deployment's name and replicas. */
export type Describe = (event: WatchedEvent) => [key: string, value: string];

/** What recordChanges gives: every event, the first `listed` of them the listing of what existed. */
export interface Recording {
  events: WatchedEvent[];
  listed: number;
  /** Waits until `done` holds for the events (`what` names it on timeout), stops the watches, resolves to every event. */
  until(what: string, done: (events: WatchedEvent[]) => boolean): Promise<WatchedEvent[]>;
  /** Waits until the watches see `name` deleted, stops them, and resolves to what changed since the listing (watchedChanges). */
  changesUntilDeleted(name: string, describe: Describe): Promise<string[]>;
}

/**
 * Records the watches' events (recordEvents); resolves once they have listed the `present`
 * objects that exist, so every event after those is a change made since.
 */
export async function recordChanges(
  watches: { path: string; labelSelector: string }[],
  present: number,
): Promise<Recording> {
  const recorded = await recordEvents(watches);
  await eventually('the watches to list what exists', async () =>
    recorded.events.length >= present ? true : undefined,
  );
  const listed = recorded.events.length;
  const until: Recording['until'] = async (what, done) => {
    try {
      await eventually(`${what}, as the watches see it`, async () =>
        done(recorded.events) ? true : undefined,
      );
    } finally {
      recorded.stop();
    }
    return recorded.events;
  };
  return {
    events: recorded.events,
    listed,
    until,
    changesUntilDeleted: async (name, describe) =>
      watchedChanges(await until(`${name} deleted`, sawDeleted(name)), listed, describe),
  };
}

/** The watch of every Deployment in `namespace`, for recordChanges. */
export function deploymentsWatch(namespace: string): { path: string; labelSelector: string } {
  return { path: `/apis/apps/v1/namespaces/${namespace}/deployments`, labelSelector: '' };
}

/** Whether the events include the deletion of every object named in `names`: an end for Recording.until. */
export function sawDeleted(...names: string[]): (events: WatchedEvent[]) => boolean {
  return (events) => names.every((name) => events.some((e) => e.type === 'DELETED' && e.name === name));
}

/**
 * What changed after the first `listed` events, in the order the watches delivered it: `KEY VALUE`
 * whenever the value `describe` gives an event's object (`deleted` once it is gone) differs from
 * the last one of its key. An update that leaves the value as it was (a status write) adds nothing.
 */
function watchedChanges(events: readonly WatchedEvent[], listed: number, describe: Describe): string[] {
  const last = new Map<string, string>();
  const lines: string[] = [];
  events.forEach((event, i) => {
    const [key, shown] = describe(event);
    const value = event.type === 'DELETED' ? 'deleted' : shown;
    if (last.get(key) === value) return;
    last.set(key, value);
    if (i >= listed) lines.push(`${key} ${value}`);
  });
  return lines;
}

/** A watched Deployment's name and replicas, for `watchedChanges`: `web-2 3`. */
export function replicasOf(event: WatchedEvent): [string, string] {
  return [event.name, String((event.object.spec as V1DeploymentSpec).replicas)];
}

/** A watched Deployment's name and `replicas image`, for `watchedChanges`: `web 3 registry.local/web:2`. */
export function replicasAndImageOf(event: WatchedEvent): [string, string] {
  return [event.name, replicasAndImage(event.object.spec as V1DeploymentSpec)];
}

/**
 * The Deployments after each change a watch of them delivered, as deploymentImages shows them
 * (`name → replicas image`); an event that changes neither adds no state.
 */
export function deploymentStates(events: readonly WatchedEvent[]): Record<string, string>[] {
  const now = new Map<string, string>();
  const states: Record<string, string>[] = [];
  for (const event of events) {
    const [name, value] = replicasAndImageOf(event);
    if (event.type === 'DELETED' ? !now.delete(name) : now.get(name) === value) continue;
    if (event.type !== 'DELETED') now.set(name, value);
    states.push(Object.fromEntries(now));
  }
  return states;
}

/** An armada object of `kind` named `name`, for applyObjects. */
export function armadaObject<S extends object>(kind: string, name: string, spec: S) {
  return { apiVersion: `${GROUP}/${VERSION}`, kind, metadata: { name }, spec };
}

/**
 * A standalone ArmadaChart of one of the example charts (examples/charts/`example`): release
 * `name` in `releases`; `spec` adds or replaces fields.
 */
function exampleChart(example: 'hello' | 'settings', name: string, releases: string, spec: object) {
  return armadaObject('ArmadaChart', name, {
    release: name,
    namespace: releases,
    source: { type: 'local', location: `examples/charts/${example}` },
    ...spec,
  });
}

/**
 * A standalone ArmadaChart of the example chart examples/charts/hello at one replica: release
 * `name` in `releases`, its Deployment and Service named `name`; `spec` adds or replaces fields.
 */
export function helloChart(name: string, releases: string, spec: object = {}) {
  return exampleChart('hello', name, releases, { values: { replicaCount: 1 }, ...spec });
}

/**
 * The cheapest chart there is (examples/charts/settings: one ConfigMap holding `settings`), with
 * no Armada wait (`resources: []`) and a short timeout; `spec` adds or replaces fields.
 */
export function settingsChart(
  name: string,
  releases: string,
  settings: Record<string, string>,
  spec: object = {},
) {
  return exampleChart('settings', name, releases, {
    values: { settings },
    wait: { timeout: 60, resources: [] },
    ...spec,
  });
}

/**
 * Applies the generated CRDs (server-side, as docs/reference/resources.md says) and waits until they serve:
 * Established, then listed by discovery, which the API server updates a moment later (kubectl
 * resolves `act` through it).
 */
export async function installCrds(): Promise<string> {
  const out = await kubectl('apply', '--server-side', '--force-conflicts', '-f', 'deploy/crds/');
  await kubectl('wait', '--for=condition=Established', '--timeout=60s', '-f', 'deploy/crds/');
  await installAdmissionPolicies();
  const wanted = crdKinds.map((k) => `${k.plural}.${GROUP}`);
  await eventually(
    'the CRDs in discovery',
    async () => {
      const listed = (await kubectl('api-resources', `--api-group=${GROUP}`, '-o', 'name')).split('\n');
      return wanted.every((name) => listed.includes(name)) ? true : undefined;
    },
    { timeoutMs: 60_000 },
  );
  return out;
}

/**
 * Applies the admission policies installed with the CRDs (deploy/admission/) and waits until the
 * API server enforces them, which it does a moment after they are stored: a dry-run create with
 * an action gets `by` and `author` filled in (both MutatingAdmissionPolicies), and one whose `by`
 * names someone else is refused (the ValidatingAdmissionPolicy).
 */
export async function installAdmissionPolicies(): Promise<void> {
  await kubectl('apply', '--server-side', '--force-conflicts', '-f', 'deploy/admission/');
  const api = kubeConfig().makeApiClient(CustomObjectsApi);
  const probe = (annotations: Record<string, string>) => ({
    ...armadaObject('ArmadaChartGroup', 'admission-probe', { chart_group: ['none'] }),
    metadata: { name: 'admission-probe', annotations },
  });
  await eventually(
    'the admission policies enforced',
    async () => {
      const created = (await api.createNamespacedCustomObject({
        group: GROUP,
        version: VERSION,
        namespace: 'default',
        plural: kinds.ArmadaChartGroup.plural,
        body: probe({ [ACTION_ANNOTATION]: 'pause' }),
        dryRun: 'All',
      })) as { metadata: { annotations?: Record<string, string> } };
      const filled = created.metadata.annotations ?? {};
      if (!filled[BY_ANNOTATION] || !filled[AUTHOR_ANNOTATION]) return undefined;
      const forged = await dryRunCreate({
        ...probe({ [ACTION_ANNOTATION]: 'pause', [BY_ANNOTATION]: 'someone-else' }),
        kind: 'ArmadaChartGroup',
      });
      return forged?.includes('by-is-the-writer') ? true : undefined;
    },
    { timeoutMs: 60_000 },
  );
}

/** The username the API server authenticates the test's own kubeconfig as (`kubectl auth whoami`). */
export async function whoAmI(): Promise<string> {
  return JSON.parse(await kubectl('auth', 'whoami', '-o', 'json')).status.userInfo.username as string;
}

/** Creates or replaces the ArmadaPolicy `name` (cluster-scoped). */
export async function applyPolicy(name: string, spec: ArmadaPolicySpec): Promise<void> {
  // Cluster-scoped: kubectl ignores the namespace.
  await applyObjects('default', [
    { apiVersion: `${GROUP}/${VERSION}`, kind: 'ArmadaPolicy', metadata: { name }, spec },
  ]);
}

/**
 * Creates a custom resource as `kubectl create` would (strict field validation): null when the
 * API server takes it, else its message. `dryRun` stops short of storing it (and of etcd's
 * limits, which only a real create meets).
 */
export async function createObject(
  obj: { kind: KindName },
  namespace = 'default',
  opts: { dryRun?: boolean } = {},
): Promise<string | null> {
  const api = kubeConfig().makeApiClient(CustomObjectsApi);
  try {
    await api.createNamespacedCustomObject({
      group: GROUP,
      version: VERSION,
      namespace,
      plural: kinds[obj.kind].plural,
      body: obj,
      ...(opts.dryRun && { dryRun: 'All' }),
      fieldValidation: 'Strict',
    });
    return null;
  } catch (err) {
    if (!(err instanceof ApiException)) throw err;
    const body = typeof err.body === 'string' ? err.body : JSON.stringify(err.body);
    try {
      return (JSON.parse(body) as { message?: string }).message ?? body;
    } catch {
      return body;
    }
  }
}

/** Asks the API server whether it would take an object (a dry run): null when so, else why not. */
export function dryRunCreate(obj: { kind: KindName }, namespace = 'default'): Promise<string | null> {
  return createObject(obj, namespace, { dryRun: true });
}

/**
 * A Role of `rules` and its RoleBinding to `subject` (a ServiceAccount, or a user), both named `name`:
 * objects for applyObjects in the namespace the Role grants.
 */
export function grantedRole(
  name: string,
  subject: { namespace: string; name: string } | { user: string },
  rules: object[],
): object[] {
  return [
    { apiVersion: 'rbac.authorization.k8s.io/v1', kind: 'Role', metadata: { name }, rules },
    {
      apiVersion: 'rbac.authorization.k8s.io/v1',
      kind: 'RoleBinding',
      metadata: { name },
      roleRef: { apiGroup: 'rbac.authorization.k8s.io', kind: 'Role', name },
      subjects: [
        'user' in subject
          ? { apiGroup: 'rbac.authorization.k8s.io', kind: 'User', name: subject.user }
          : { kind: 'ServiceAccount', ...subject },
      ],
    },
  ];
}

/** Each Deployment of `namespace` as `replicas image`: what a canary test compares. */
export async function deploymentImages(namespace: string): Promise<Record<string, string>> {
  const { items } = await kubeConfig().makeApiClient(AppsV1Api).listNamespacedDeployment({ namespace });
  return Object.fromEntries(items.map((d) => [d.metadata!.name!, replicasAndImage(d.spec!)]));
}

function replicasAndImage(spec: V1DeploymentSpec): string {
  return `${spec.replicas} ${spec.template.spec!.containers[0].image}`;
}

/** Removes an object's finalizers (`resource` as kubectl names it: `act/web`), so it can go with no bridge watching. */
export async function dropFinalizers(resource: string, namespace: string): Promise<void> {
  await kubectl('patch', resource, '-n', namespace, '--type=merge', '-p', '{"metadata":{"finalizers":null}}');
}

/**
 * A Deployment made by hand that carries a Deployer's labels (`deployment.name` `deployer`, and
 * `version`), as anyone who may write Deployments in the namespace can make one: never the
 * Deployer's own.
 */
export function handLabelledDeployment(name: string, deployer: string, version: string, replicas: number) {
  const labels = { [DEPLOYER_LABEL]: deployer, [VERSION_LABEL]: version, hand: name };
  return {
    apiVersion: 'apps/v1',
    kind: 'Deployment',
    metadata: { name, labels },
    spec: {
      replicas,
      selector: { matchLabels: { hand: name } },
      template: { metadata: { labels }, spec: { containers: [{ name: 'hand', image: 'nginx:hand' }] } },
    },
  };
}

/**
 * What a Deployment is now, as a write to it would change it: `name uid generation replicas`
 * (a scale or any spec write bumps the generation; the controller's status writes, which move the
 * resourceVersion on their own, do not), or `name deleted`.
 */
export async function deploymentState(namespace: string, name: string): Promise<string> {
  const apps = kubeConfig().makeApiClient(AppsV1Api);
  const d = await apps.readNamespacedDeployment({ name, namespace }).catch((err: unknown) => {
    if ((err as { code?: number }).code === 404) return undefined;
    throw err;
  });
  return d
    ? `${name} ${d.metadata!.uid} generation ${d.metadata!.generation} replicas ${d.spec!.replicas}`
    : `${name} deleted`;
}

/** The messages of the Events with `reason` in `namespace`, sorted. */
export async function eventMessages(namespace: string, reason: string): Promise<string[]> {
  const { items } = JSON.parse(
    await kubectl('get', 'events', '-n', namespace, '--field-selector', `reason=${reason}`, '-o', 'json'),
  ) as { items: { message: string }[] };
  return items.map((e) => e.message).sort();
}
