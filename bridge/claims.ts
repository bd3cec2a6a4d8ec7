import {
  claimOrder,
  claimsAnything,
  claimsOf,
  describeObject,
  listedObjects,
  rivalProblems,
  type ClaimDocument,
  type ClaimKey,
} from '../workflows/plan/manifest';

/**
 * The release claims of every cached manifest, group, chart and Deployer, kept current one change
 * at a time, so that asking for an object's rivals costs what that object claims, not what the
 * cluster holds. Answers exactly as `rivalClaims(target, everyDocument)` (workflows/plan/
 * manifest.ts) does, which rebuilt and sorted every claim on each call.
 *
 * A change to one object can change the claims of only a few others: the objects it lists (they
 * stop or start running on their own), the objects that list it (a group's claims name its
 * charts' releases) and, for a chart, the manifests that list those groups. Only those are
 * recomputed, each from the documents it lists.
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
   * What stops `target` from running: one problem per claim an older object holds (see
   * rivalClaims). Empty when it holds all it claims, or claims nothing (listed by another,
   * uninitialized, or not indexed).
   */
  rivals(target: ClaimKey): string[] {
    const mine = this.claimsByDoc.get(describeObject(target)) ?? [];
    return rivalProblems(target, mine, (claim) => this.holderOf(claim));
  }

  private holderOf(claim: string): ClaimDocument | undefined {
    let holder: ClaimDocument | undefined;
    for (const key of this.claimants.get(claim) ?? []) {
      const doc = this.docs.get(key)!;
      if (!holder || claimOrder(doc, holder) < 0) holder = doc;
    }
    return holder;
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
