import type { Client } from '@temporalio/client';
import { setTimeout as sleep } from 'node:timers/promises';
import { deployerOutcomeOf } from '../core/plan/finished-runs';
import { latestRun } from '../runs/control';
import { routeOf, type Target } from '../runs/targets';
import type {
  ChartOutcome,
  DeployerOutcome,
  GroupOutcome,
  ManifestOutcome,
} from '../core/contracts/workflows';
import { authorizedSteerer } from './caller';
import { deleteObject, describeRef, listObjects, placeAmong, readObject } from './cluster';
import type { Print } from './command';

/** What an uninstall run removed: a release (its revision before; null: it was not installed), or a Deployer's Deployments. */
export type Uninstalled = { release: string; revision: number | null } | { deployer: string };

/**
 * What an uninstall run's outcome says it removed: each chart's release (a manifest's, in the
 * order its groups uninstalled; a group's; a chart's), or a Deployer's Deployments. Empty for
 * any other outcome.
 */
export function uninstalledBy(outcome: unknown, deployer: string): Uninstalled[] {
  const o = (outcome ?? {}) as Partial<ManifestOutcome & GroupOutcome & ChartOutcome & DeployerOutcome>;
  if (deployerOutcomeOf(outcome)?.result === 'uninstalled') return [{ deployer }];
  const charts: ChartOutcome[] = o.groups
    ? o.groups.flatMap((g) => g.outcomes)
    : (o.outcomes ?? (o.action ? [o as ChartOutcome] : []));
  return charts
    .filter((c) => c.action === 'uninstalled')
    .map((c) => ({ release: `${c.namespace}/${c.release}`, revision: c.before }));
}

/** A line for each thing uninstalled: `uninstalled release apps/web (was revision 2)`. */
export function formatUninstalled(uninstalled: readonly Uninstalled[]): string[] {
  if (!uninstalled.length) return ['nothing was installed to uninstall'];
  return uninstalled.map((u) =>
    'deployer' in u
      ? `deleted the Deployments of Deployer ${u.deployer}`
      : u.revision === null
        ? `release ${u.release}: was not installed`
        : `uninstalled release ${u.release} (was revision ${u.revision})`,
  );
}

/** What `armadactl delete -o json` prints. */
export interface DeleteReport {
  deleted: string;
  by: string;
  /** With --wait: what the uninstall run removed; null without --wait, or when no uninstall ran. */
  uninstalled: Uninstalled[] | null;
}

/** How often --wait looks whether the object is gone. */
const POLL_MS = 1000;

/**
 * Deletes an object from the cluster as the person running armadactl: first the same check as
 * the steering verbs, for `delete` (authorizedSteerer), then a delete with their kubeconfig
 * (run it inside asCaller). The bridge then runs its deletion path: it cancels a deploy still
 * running (a clean stop), runs the uninstall, and removes its finalizer. A group or chart that a
 * manifest or group lists is refused: it is uninstalled with what lists it.
 *
 * With `wait`: follows until the object is gone (at most `timeoutMs`), then reads what the
 * uninstall run removed from its outcome (`connectTemporal` is asked only then).
 */
export async function deleteAndFollow(
  target: Target,
  opts: { wait: boolean; timeoutMs: number; print: Print },
  connectTemporal: () => Promise<{ client: Client; close: () => Promise<void> }>,
): Promise<DeleteReport> {
  const what = describeRef(target);
  const by = await authorizedSteerer(target, 'delete');
  const object = await readObject(target);
  if (!object) throw new Error(`${what} is not on the cluster`);
  const place = placeAmong(
    object,
    await listObjects(target.namespace, ['ArmadaManifest', 'ArmadaChartGroup']),
  );
  const route = routeOf(place, 'cancel');
  // The object's own run is also its uninstall's workflow ID; a listed object has none of its own.
  if ('refused' in route || !route.workflowIds.length)
    throw new Error(
      `${what} is listed by ${place.manifest ? `amf/${place.manifest}` : `acg/${place.group}`}: it is uninstalled with it (delete that), or remove it from the list first`,
    );
  await deleteObject(target);
  opts.print(`deleted ${what} as ${by}: the bridge uninstalls it, then removes its finalizer`);
  if (!opts.wait) return { deleted: what, by, uninstalled: null };
  const deadline = Date.now() + opts.timeoutMs;
  while (await readObject(target)) {
    if (Date.now() > deadline)
      throw new Error(
        `${what} is still on the cluster after ${opts.timeoutMs / 1000} s, held by its finalizer: is the bridge running? ` +
          `(kubectl describe -n ${target.namespace} ${target.kind.toLowerCase()}/${target.name} shows its Events)`,
      );
    await sleep(POLL_MS);
  }
  const { client, close } = await connectTemporal();
  try {
    const workflowId = route.workflowIds.at(-1)!;
    const run = await latestRun(client, workflowId);
    if (run?.memo.mode !== 'uninstall' || run.status !== 'COMPLETED') {
      opts.print(`${what} is gone; it ran no uninstall (it never deployed, or its spec was invalid)`);
      return { deleted: what, by, uninstalled: null };
    }
    const outcome: unknown = await client.workflow.getHandle(workflowId, run.runId).result();
    const uninstalled = uninstalledBy(outcome, `${target.namespace}/${target.name}`);
    formatUninstalled(uninstalled).forEach((line) => opts.print(line));
    return { deleted: what, by, uninstalled };
  } finally {
    await close();
  }
}
