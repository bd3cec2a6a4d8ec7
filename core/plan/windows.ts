import { durationSeconds } from '../../api/duration';
import { nextFire, parseCron, type Cron } from '../../api/schedule';
import type { DeployWindow } from '../../api/windows';

/** How far ahead nextOpening looks: a year and a day, so a yearly window is found. */
export const OPENING_HORIZON_MS = 366 * 24 * 3600 * 1000;
/**
 * Transitions nextOpening steps through at most before it gives up: deny windows that keep each
 * other open (`* * * * *` for 2m) would otherwise be walked minute by minute for a year inside a
 * workflow task.
 */
const MAX_TRANSITIONS = 1000;

interface Compiled {
  allow: boolean;
  cron: Cron;
  zone: string;
  ms: number;
}

function compile(windows: readonly DeployWindow[]): Compiled[] {
  return windows.map((w) => ({
    allow: w.kind === 'allow',
    cron: parseCron(w.schedule),
    zone: w.time_zone ?? 'UTC',
    ms: (durationSeconds(w.duration) ?? 0) * 1000,
  }));
}

/** The start of the occurrence of `w` open at `instant` (a start in (instant − duration, instant]), or null. */
function openSince(w: Compiled, instant: number): number | null {
  return nextFire(w.cron, w.zone, instant - w.ms + 1, instant);
}

function openAt(compiled: readonly Compiled[], instant: number): boolean {
  const allows = compiled.filter((w) => w.allow);
  const allowed = allows.length === 0 || allows.some((w) => openSince(w, instant) !== null);
  return allowed && !compiled.some((w) => !w.allow && openSince(w, instant) !== null);
}

/**
 * Whether a run may start a group, a step or a helm write at `instant` (ms), as Argo CD's sync
 * windows decide: inside some open allow window and no open deny window; with deny windows only,
 * unless a deny window is open; with no windows, always. A window is open from each time its
 * schedule fires, for its duration (from included, end excluded).
 *
 *   allow `0 9 * * 1-5` for 8h: Monday 10:00 UTC open, Monday 17:00 closed, Saturday 10:00 closed.
 *   plus deny `0 12 * * *` for 1h: Monday 12:30 closed, Monday 13:00 open again.
 */
export function isOpen(windows: readonly DeployWindow[], instant: number): boolean {
  return openAt(compile(windows), instant);
}

/**
 * The first instant at or after `instant` (ms) at which isOpen holds, or null when none comes
 * within OPENING_HORIZON_MS or MAX_TRANSITIONS (e.g. deny windows that cover every minute). Steps
 * from transition to transition: while deny windows are open nothing opens before the last of
 * them ends; else only the next start of an allow window can open it.
 *
 *   allow `0/10 * * * * *` (every 10 s) for 5s, at 12:00:07 → 12:00:10.
 *   deny `0 * * * *` for 30m (alone), at 12:10 → 12:30.
 */
export function nextOpening(windows: readonly DeployWindow[], instant: number): number | null {
  const compiled = compile(windows);
  const until = instant + OPENING_HORIZON_MS;
  let at = instant;
  for (let i = 0; i < MAX_TRANSITIONS && at <= until; i++) {
    if (openAt(compiled, at)) return at;
    const denyEnds = compiled.flatMap((w) => {
      const since = w.allow ? null : openSince(w, at);
      return since === null ? [] : [since + w.ms];
    });
    if (denyEnds.length) {
      at = Math.max(...denyEnds);
      continue;
    }
    const starts = compiled.flatMap((w) => {
      const start = w.allow ? nextFire(w.cron, w.zone, at + 1, until) : null;
      return start === null ? [] : [start];
    });
    if (!starts.length) return null;
    at = Math.min(...starts);
  }
  return null;
}
