/**
 * Canary step maths, as argo-rollouts computes it: the replica split of a step is a pure
 * function of the total and the step's percent.
 */
export interface Split {
  percent: number;
  canary: number;
  stable: number;
}

/**
 * Replicas on the new version at `percent` of `total`: ceil(total × percent / 100), at least 1
 * once percent > 0, never more than total; the stable side keeps the rest.
 *
 * Worked examples (total 10): 10 % → 1 canary / 9 stable, 30 % → 3/7, 60 % → 6/4, 100 % → 10/0.
 * Rounding goes toward the canary: total 3 at 33 % → 1/2 (0.99 → 1); total 7 at 1 % → 1/6.
 */
export function splitAt(total: number, percent: number): Split {
  if (!Number.isInteger(total) || total < 0)
    throw new RangeError(`replicas must be a whole number ≥ 0, not ${total}`);
  if (percent < 0 || percent > 100) throw new RangeError(`percent must be from 0 to 100, not ${percent}`);
  // Integer arithmetic first, so 7 × 100 / 100 is exactly 7, never 7.000000001 rounded up to 8.
  const exact = Math.ceil((total * percent) / 100);
  const canary = percent > 0 ? Math.min(total, Math.max(1, exact)) : 0;
  return { percent, canary, stable: total - canary };
}

/**
 * The splits of every step in order, with the final 100 % added when the last step stops short
 * of it (the spec implies it). Example: total 10, steps 10/30/60 → 1/9, 3/7, 6/4, 10/0.
 */
export function stepSplits(total: number, percents: readonly number[]): Split[] {
  const all = percents.at(-1) === 100 ? percents : [...percents, 100];
  return all.map((percent) => splitAt(total, percent));
}
