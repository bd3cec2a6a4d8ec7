/**
 * Names of approval gates, as the progress query shows them and `armadactl approve --gate`
 * takes them. An approval that names a gate passes that gate only.
 */

/** The gate before a manifest's group: `before group apps`. */
export function gateBefore(group: string): string {
  return `before group ${group}`;
}

/** The gate of a canary step with `approval: true`: `step 2 (50 %)` (1-based step). */
export function stepGate(index: number, percent: number): string {
  return `step ${index + 1} (${percent} %)`;
}
