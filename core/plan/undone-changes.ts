/**
 * Which undos `rollback --previous` of a group or chart a manifest lists (or of a chart a group
 * standing alone lists) counts as having taken back its change of the run they undid (docs/how-to/operate-runs.md,
 * "Undo a finished deploy"). Its deploys are the runs of what lists it, and the undos of that object and of
 * everything it lists run under its ID (core/plan/release-lock.ts): an undo of another of its
 * groups or charts undid none of its changes.
 */

import type { UndoRun } from '../contracts/workflows';
import { listedChanges } from './finished-runs';

/** A group or chart a manifest lists, or a chart a group lists (runs/targets.ts ObjectPlace). */
export interface ListedObject {
  kind: 'ArmadaChartGroup' | 'ArmadaChart';
  name: string;
  /** The manifest that lists it (a group) or its group (a chart); none for a standalone group's chart. */
  manifest?: string;
  /** The group that lists it (a chart). */
  group?: string;
}

/** The objects whose undos may have taken `object`'s change back: itself, its manifest, a chart's group. */
export function undoersOf(object: ListedObject): Pick<UndoRun, 'kind' | 'name'>[] {
  return [
    { kind: object.kind, name: object.name },
    ...(object.manifest ? [{ kind: 'ArmadaManifest' as const, name: object.manifest }] : []),
    ...(object.kind === 'ArmadaChart' && object.group
      ? [{ kind: 'ArmadaChartGroup' as const, name: object.group }]
      : []),
  ];
}

/**
 * Whether `undo` took back `object`'s change of the run it undid: an undo of the object or of one
 * that holds it (undoersOf); for a chart, only one whose changes hold its release's (an undo of
 * its group or manifest holds the changes of each chart the run changed, listedChanges). An undo
 * of one chart does not count for its group: the group's other charts kept their changes.
 */
export function undidChangeOf(
  object: ListedObject,
  undo: Pick<UndoRun, 'kind' | 'name' | 'changes'>,
): boolean {
  if (!undoersOf(object).some((u) => u.kind === undo.kind && u.name === undo.name)) return false;
  return object.kind !== 'ArmadaChart' || listedChanges(object, undo.changes, undefined).length > 0;
}
