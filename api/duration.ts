/**
 * Durations as the API takes them; no zod here, so workflow code can use it too.
 * No backslashes in DURATION: its source is reused inside a CEL string literal.
 */
export const DURATION = /^([0-9]+([.][0-9]+)?(ms|s|m|h))+$/;
const DURATION_UNIT_SECONDS: Record<string, number> = { ms: 0.001, s: 1, m: 60, h: 3600 };

/**
 * Seconds of a duration given as a number of seconds or as a Go-style string ("90s", "5m",
 * "1h30m", "500ms"); null when the string does not parse.
 */
export function durationSeconds(value: number | string): number | null {
  if (typeof value === 'number') return value;
  if (!DURATION.test(value)) return null;
  let total = 0;
  for (const [, amount, , unit] of value.matchAll(/([0-9]+([.][0-9]+)?)(ms|s|m|h)/g)) {
    total += Number(amount) * DURATION_UNIT_SECONDS[unit];
  }
  return total;
}
