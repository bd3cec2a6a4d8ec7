import {
  claimOrder,
  claimsAnything,
  claimsOf,
  describeObject,
  listedObjects,
  rivalProblems,
  sameObject,
  type ClaimDocument,
  type ClaimKey,
} from '../core/plan/manifest';
import { claimOf, gone, type ObjectView } from './view';
import type { Change } from './watch';

/**
 * The release claims of every cached manifest, group, chart and Deployer, kept current one change
 * at a time, so that asking for an object's rivals costs what that object claims, not what the
 * cluster holds. Answers exactly as `rivalClaims(target, everyDocument)` (core/plan/
 * manifest.ts) does, which rebuilt and sorted every claim on each call.
 *
 * A change to one object can change the claims of only a few others: the objects it lists (they
 * stop or start running on their own), the objects that list it (a group's claims name its
 * charts' releases) and, for a chart, the manifests that list those groups. Only those are
 * recomputed, each from the documents it lists.
 *
 * The same bookkeeping answers who drives an object (`owner`): the `listers` map the claims need
 * is exactly "who lists it", so one map kept by one set of events serves both, rather than a
 * second copy that could drift from it.
 */
export class ClaimIndex {
  /** Every document, by describeObject. */
  private readonly docs = new Map<string, ClaimDocument>();
  /** Who lists each object (by describeObject): a group's manifests, a chart's groups. */
  private readonly listers = new Map<string, Set<string>>();
  /** What each document that runs on its own claims (absent: it claims nothing). */
  private readonly claimsByDoc = new Map<string, string[]>();
  /** Who claims each claim; its holder is the first of them in claimOrder. */
  private readonly claimants = new Map<string, Set<string>>();

  /** An index of `docs`. */
  static of(docs: Iterable<ClaimDocument>): ClaimIndex {
    const index = new ClaimIndex();
    for (const doc of docs) index.set(doc);
    return index;
  }

  /** Adds a document, or replaces the one of the same object. */
  set(doc: ClaimDocument): void {
    this.change(describeObject(doc), doc);
  }

  /** Forgets an object (deleted, or done with: its finalizer removed). */
  delete(key: ClaimKey): void {
    this.change(describeObject(key), undefined);
  }

  /**
   * Follows one watch event of a cached object: an object deleted or done with (gone: its
   * finalizer removed) claims and lists nothing, so it no longer drives what it lists; one being
   * deleted that still has its finalizer keeps both until its uninstall has finished.
   */
  observe(view: ObjectView, change: Change): void {
    if (change === 'delete' || gone(view)) this.delete(view);
    else if (change !== 'resync') this.set(claimOf(view));
  }

  /**
   * The manifest or group that lists `target` and so drives it: a group for a chart (through its
   * `chart_group`) or a Deployer (through its `deployers`: a chart of the same name is another
   * object), a manifest for a group; undefined when nothing indexed lists it. Costs what lists
   * `target`, not what the cluster holds.
   *
   * Of several (rivals), the one through which the holder of `target`'s claim deploys it: that
   * holder itself, or the group it lists (a manifest holds its groups' charts), the oldest in
   * claimOrder if it lists two; the others are refused as rivals (see rivals). When nothing holds
   * that claim (they are all uninitialized), the oldest lister in claimOrder.
   *
   * Example: group `a` (10:01) and group `b` (10:02) both list chart web, and manifest `m`
   * (10:00) lists `b`: `m` holds `ArmadaChart default/web`, so web's owner is `b`; `a` is the rival.
   */
  owner(target: ClaimKey): ClaimDocument | undefined {
    const listers = [...(this.listers.get(describeObject(target)) ?? [])].map((key) => this.docs.get(key)!);
    if (listers.length < 2) return listers[0];
    const holder = this.holderOf(describeObject(target));
    const throughHolder = holder
      ? listers.filter(
          (lister) =>
            sameObject(lister, holder) ||
            this.listers.get(describeObject(lister))?.has(describeObject(holder)),
        )
      : [];
    return oldest(throughHolder.length ? throughHolder : listers);
  }

  /**
   * What stops `target` from running: one problem per claim an older object holds (see
   * rivalClaims). Empty when it holds all it claims, or claims nothing (listed by another,
   * uninitialized, or not indexed).
   */
  rivals(target: ClaimKey): string[] {
    const mine = this.claimsByDoc.get(describeObject(target)) ?? [];
    return rivalProblems(target, mine, (claim) => this.holderOf(claim));
  }

  private holderOf(claim: string): ClaimDocument | undefined {
    return oldest([...(this.claimants.get(claim) ?? [])].map((key) => this.docs.get(key)!));
  }

  private change(key: string, doc: ClaimDocument | undefined): void {
    const affected = this.dependents(key);
    const previous = this.docs.get(key);
    if (previous) for (const listed of listedObjects(previous)) this.unlink(this.listers, listed, key);
    if (doc) {
      this.docs.set(key, doc);
      for (const listed of listedObjects(doc)) this.link(this.listers, listed, key);
    } else this.docs.delete(key);
    for (const dependent of this.dependents(key)) affected.add(dependent);
    for (const dependent of affected) this.recompute(dependent);
  }

  /** The object and those whose claims read it: what it lists, what lists it, and theirs. */
  private dependents(key: string): Set<string> {
    const doc = this.docs.get(key);
    const listers = [...(this.listers.get(key) ?? [])];
    const listersOfListers = listers.flatMap((lister) => [...(this.listers.get(lister) ?? [])]);
    return new Set([key, ...(doc ? listedObjects(doc) : []), ...listers, ...listersOfListers]);
  }

  /** Brings one object's claims in line with the documents it reads. */
  private recompute(key: string): void {
    for (const claim of this.claimsByDoc.get(key) ?? []) this.unlink(this.claimants, claim, key);
    this.claimsByDoc.delete(key);
    const doc = this.docs.get(key);
    if (!doc || !claimsAnything(doc) || this.listers.has(key)) return;
    const claims = claimsOf(doc, (described) => this.docs.get(described));
    this.claimsByDoc.set(key, claims);
    for (const claim of claims) this.link(this.claimants, claim, key);
  }

  private link(index: Map<string, Set<string>>, entry: string, key: string): void {
    let keys = index.get(entry);
    if (!keys) index.set(entry, (keys = new Set()));
    keys.add(key);
  }

  private unlink(index: Map<string, Set<string>>, entry: string, key: string): void {
    const keys = index.get(entry);
    if (!keys?.delete(key)) return;
    if (keys.size === 0) index.delete(entry);
  }
}

/** The first of `docs` in claimOrder (the oldest); undefined when there are none. */
function oldest(docs: readonly ClaimDocument[]): ClaimDocument | undefined {
  return docs.reduce<ClaimDocument | undefined>(
    (first, doc) => (!first || claimOrder(doc, first) < 0 ? doc : first),
    undefined,
  );
}
