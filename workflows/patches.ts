import { patched } from '@temporalio/workflow';

/**
 * The behaviour changes of this release behind patches (the policy is at the top of
 * test/workflows/replay.test.ts). Each is asked once per run, first thing (decidePatches, at the
 * top of every workflow that takes one): a patch first asked after a local activity, in the same
 * workflow task, failed to replay ("patch marker encountered ... no corresponding change command").
 */
const PATCHES = [
  /** A cancelled helm write is waited for (helm killed) before the run goes on. */
  'helm-write-waits-for-cancellation',
  /** A chart run fetches its chart while it observes the release. */
  'observe-and-prepare-together',
  /** A group starts its next chart without waiting for the manifest to take the last one's progress signal. */
  'chart-done-signal-off-path',
  /** A manifest's and a group's status at a group's or chart's start, and a chart's final status in a group, are written off the path. */
  'status-off-path',
  /** A manifest writes its groups' final status, off its path, as it starts the next group. */
  'group-status-by-manifest',
  /** A run holds at its safe points for a cluster freeze (and outside its deploy windows): workflows/holds.ts. */
  'windows-and-freeze',
  /** A lockstep group in a manifest tells it where its set can be approved or promoted: workflows/lockstep.ts. */
  'lockstep-steered-from-manifest',
  /** A manifest's or standalone group's rollback also undoes the Deployers the run rolled out: workflows/saga.ts. */
  'rollback-undoes-deployers',
  /** A chart run a group starts waits while a drift repair holds its release (the repair runs under the release's lock). */
  'deploy-waits-for-drift-repair',
  /** A manifest's, group's or undo's rollback writes each release as a child under the release's lock: workflows/saga.ts. */
  'undo-under-release-lock',
  /** A Deployer scales and deletes only the Deployments it created (their UIDs in its status), not any carrying its label. */
  'deployer-owns-its-deployments',
] as const;

export type Patch = (typeof PATCHES)[number];

// Per run: the workflow sandbox gives every run its own module state.
let decided: Map<Patch, boolean> | undefined;

/** Asks every patch, once per run; the first call must come before the run's first local activity. */
export function decidePatches(): void {
  decided ??= new Map(PATCHES.map((id) => [id, patched(id)]));
}

/**
 * Whether the run checks steering against the bridge's key, and its gates take distinct_approvers
 * and not_author (workflows/plan/steering.ts). Asked apart from PATCHES, by RunControl as every
 * workflow starts: canary and Deployer runs ask no other patch, and asking them all would put
 * ten more markers into each of their bounded histories.
 */
export function checksSteering(): boolean {
  return patched('signed-steering');
}

/** Whether this run takes the patched behaviour. */
export function hasPatch(id: Patch): boolean {
  decidePatches();
  return decided!.get(id)!;
}
