import { KeyedTimers } from './keyed-timers';
import { ownedKeys, parseKey, type ObjectView, type Views } from './view';

/** The default of ARMADA_SETTLE_SECONDS, in ms. */
export const SETTLE_MS = 1000;

/**
 * Spec changes applied together start one run. `kubectl apply` of a List or a directory writes
 * its objects one at a time, so a manifest's run started at its first changed chart deployed the
 * old specs of the rest, and took the newer ones as a re-plan only once its running group had
 * ended: a lockstep set stepped without the members changed a moment later, and the others
 * stepped twice. The bridge starts a manifest's or a group's run once it and everything it lists
 * have had no spec change (a new object, a new generation) for `settleMs`
 * (ARMADA_SETTLE_SECONDS: a tool that applies a large set slowly needs more). A re-plan of a run
 * already going is sent at once.
 */
export class SpecChanges {
  private readonly changedAt = new Map<string, number>();
  private readonly timers = new KeyedTimers();

  constructor(private readonly settleMs = SETTLE_MS) {}

  /** Notes a spec change of the object `key` (it was created, or its generation grew). */
  changed(key: string, now = Date.now()): void {
    this.changedAt.set(key, now);
  }

  /** Forgets an object that is gone. */
  forget(key: string): void {
    this.changedAt.delete(key);
    this.timers.cancel(key);
  }

  /**
   * When (epoch ms) the run of `view` may start: `settleMs` after the latest spec change of it
   * and of what it lists, through its groups; undefined once they have settled.
   */
  settlesAt(objects: Views, view: ObjectView, now = Date.now()): number | undefined {
    const latest = Math.max(
      -Infinity,
      ...planKeys(objects, view).map((key) => this.changedAt.get(key) ?? -Infinity),
    );
    return latest + this.settleMs > now ? latest + this.settleMs : undefined;
  }

  /** Calls `due` at `at`, in place of an earlier wait of `key`. */
  wake(key: string, at: number, due: () => void): void {
    this.timers.at(key, at, due);
  }
}

/** The keys of `view` and of everything it lists, through a manifest's groups. */
export function planKeys(objects: Views, view: ObjectView): string[] {
  return [
    view.key,
    ...ownedKeys(view).flatMap((key) => {
      const { kind, namespace, name } = parseKey(key);
      const listed = objects(kind).get(namespace, name);
      return listed ? planKeys(objects, listed) : [key];
    }),
  ];
}
