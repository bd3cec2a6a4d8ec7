/**
 * Which specs a run deploys, as the bridge names them in the run's memo:
 * `ArmadaChart/web@2 ArmadaManifest/demo@1 ...`, each object with its metadata.generation.
 * The bridge starts (or re-plans) a run only when they differ from the running one's; status
 * reports take their observedGeneration from them.
 */

/** What a run was started for, kept in its memo; children inherit their parent's. */
export interface RunMemo {
  specs?: string;
  mode: 'deploy' | 'uninstall';
  /** Specs a re-plan signal brought: the run starts over with them at its next safe point. */
  next?: string;
  /** The object the run is for (its metadata.uid), when the bridge started it. */
  uid?: string;
}

export interface SpecRef {
  kind: string;
  name: string;
  generation?: number;
}

/** The memo's `specs`: sorted, so the same objects always give the same text. */
export function formatSpecs(refs: readonly SpecRef[]): string {
  return refs
    .map((r) => `${r.kind}/${r.name}@${r.generation ?? 0}`)
    .sort()
    .join(' ');
}

/** The generation of `kind/name` a run deploys, if its specs name it. */
export function generationIn(specs: string | undefined, kind: string, name: string): number | undefined {
  const prefix = `${kind}/${name}@`;
  const entry = specs?.split(' ').find((s) => s.startsWith(prefix));
  if (entry === undefined) return undefined;
  const generation = Number(entry.slice(prefix.length));
  return Number.isInteger(generation) ? generation : undefined;
}
