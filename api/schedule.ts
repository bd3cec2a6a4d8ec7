/**
 * Cron schedules in a time zone, as deploy windows take them; no zod here, so workflow code can
 * use it too (like duration.ts). Deterministic: wall clocks come from Intl's time-zone data, never
 * from the machine's own zone or clock.
 *
 * A schedule has 5 fields, `minute hour day-of-month month day-of-week` (it fires at second 0), or
 * 6 with a leading seconds field, `second minute hour day-of-month month day-of-week`. Each field
 * is `*`, a value, a range `a-b`, any of those with a step `/n`, or a comma list of them. Day of
 * week is 0-7 (0 and 7 are Sunday). As in cron, when both day fields are restricted a day matches
 * either one.
 */

interface FieldRule {
  name: string;
  min: number;
  max: number;
}

const SECOND: FieldRule = { name: 'second', min: 0, max: 59 };
const MINUTE: FieldRule = { name: 'minute', min: 0, max: 59 };
const HOUR: FieldRule = { name: 'hour', min: 0, max: 23 };
const DAY_OF_MONTH: FieldRule = { name: 'day of month', min: 1, max: 31 };
const MONTH: FieldRule = { name: 'month', min: 1, max: 12 };
const DAY_OF_WEEK: FieldRule = { name: 'day of week', min: 0, max: 7 };

export interface Cron {
  seconds: ReadonlySet<number>;
  minutes: ReadonlySet<number>;
  hours: ReadonlySet<number>;
  daysOfMonth: ReadonlySet<number>;
  months: ReadonlySet<number>;
  /** 0 (Sunday) to 6; a 7 in the schedule is read as 0. */
  daysOfWeek: ReadonlySet<number>;
  /** Whether each day field was `*`: cron ORs the two day fields only when both are restricted. */
  anyDayOfMonth: boolean;
  anyDayOfWeek: boolean;
}

/** Why a schedule does not parse. */
export class ScheduleError extends Error {}

/** Parses a 5- or 6-field schedule; throws ScheduleError saying which field is wrong and why. */
export function parseCron(schedule: string): Cron {
  const fields = schedule.trim().split(/\s+/);
  if (fields.length !== 5 && fields.length !== 6)
    throw new ScheduleError(
      `a schedule has 5 fields (minute hour day-of-month month day-of-week) or 6 (second first), not ${fields.length}`,
    );
  const [second, minute, hour, dom, month, dow] = fields.length === 6 ? fields : ['0', ...fields];
  const daysOfWeek = new Set([...parseField(dow, DAY_OF_WEEK)].map((d) => d % 7));
  return {
    seconds: parseField(second, SECOND),
    minutes: parseField(minute, MINUTE),
    hours: parseField(hour, HOUR),
    daysOfMonth: parseField(dom, DAY_OF_MONTH),
    months: parseField(month, MONTH),
    daysOfWeek,
    anyDayOfMonth: dom === '*',
    anyDayOfWeek: dow === '*',
  };
}

function parseField(text: string, rule: FieldRule): Set<number> {
  const values = new Set<number>();
  for (const part of text.split(',')) {
    const m = /^(\*|(\d+)(?:-(\d+))?)(?:\/(\d+))?$/.exec(part);
    if (!m)
      throw new ScheduleError(
        `${rule.name} field ${JSON.stringify(text)}: "${part}" is not *, N, N-M or one of them /STEP`,
      );
    const from = m[1] === '*' ? rule.min : Number(m[2]);
    const to =
      m[1] === '*' ? rule.max : m[3] !== undefined ? Number(m[3]) : m[4] !== undefined ? rule.max : from;
    const step = m[4] !== undefined ? Number(m[4]) : 1;
    if (from < rule.min || to > rule.max || from > to)
      throw new ScheduleError(
        `${rule.name} field ${JSON.stringify(text)}: "${part}" is outside ${rule.min}-${rule.max}`,
      );
    if (step < 1)
      throw new ScheduleError(`${rule.name} field ${JSON.stringify(text)}: a step must be at least 1`);
    for (let v = from; v <= to; v += step) values.add(v);
  }
  return values;
}

const formatters = new Map<string, Intl.DateTimeFormat>();

function formatterOf(timeZone: string): Intl.DateTimeFormat {
  let f = formatters.get(timeZone);
  if (!f) {
    f = new Intl.DateTimeFormat('en-US', {
      timeZone,
      hourCycle: 'h23',
      year: 'numeric',
      month: 'numeric',
      day: 'numeric',
      hour: 'numeric',
      minute: 'numeric',
      second: 'numeric',
    });
    formatters.set(timeZone, f);
  }
  return f;
}

/** Whether `timeZone` is an IANA time zone name Intl knows (`UTC`, `Europe/Berlin`, `Asia/Kolkata`). */
export function isTimeZone(timeZone: string): boolean {
  try {
    formatterOf(timeZone);
    return true;
  } catch {
    return false;
  }
}

/** Milliseconds the zone's wall clock is ahead of UTC at `instant` (Asia/Kolkata: +5 h 30 min). */
export function zoneOffsetMs(timeZone: string, instant: number): number {
  const parts = Object.fromEntries(
    formatterOf(timeZone)
      .formatToParts(new Date(instant))
      .map((p) => [p.type, Number(p.value)]),
  );
  const wall = Date.UTC(parts.year, parts.month - 1, parts.day, parts.hour, parts.minute, parts.second);
  return wall - Math.floor(instant / 1000) * 1000;
}

/** The instant a wall-clock time of the zone stands for (wall times are kept as if they were UTC). */
function instantOf(timeZone: string, wall: number): number {
  const guess = wall - zoneOffsetMs(timeZone, wall);
  return wall - zoneOffsetMs(timeZone, guess);
}

function dayMatches(cron: Cron, day: Date): boolean {
  const dom = cron.daysOfMonth.has(day.getUTCDate());
  const dow = cron.daysOfWeek.has(day.getUTCDay());
  if (cron.anyDayOfMonth || cron.anyDayOfWeek) return dom && dow;
  return dom || dow;
}

/**
 * The first instant at or after `from` (ms) that the schedule fires in `timeZone`, or null when
 * it fires none before `until` (ms). Walks the wall clock field by field: a month that does not
 * match is skipped whole, then a day, an hour, a minute, a second.
 */
export function nextFire(cron: Cron, timeZone: string, from: number, until: number): number | null {
  let wall = Math.ceil((from + zoneOffsetMs(timeZone, from)) / 1000) * 1000;
  const wallUntil = until + zoneOffsetMs(timeZone, until);
  while (wall <= wallUntil) {
    const d = new Date(wall);
    const [y, mo, day, h, mi] = [
      d.getUTCFullYear(),
      d.getUTCMonth(),
      d.getUTCDate(),
      d.getUTCHours(),
      d.getUTCMinutes(),
    ];
    if (!cron.months.has(mo + 1)) wall = Date.UTC(y, mo + 1, 1);
    else if (!dayMatches(cron, d)) wall = Date.UTC(y, mo, day + 1);
    else if (!cron.hours.has(h)) wall = Date.UTC(y, mo, day, h + 1);
    else if (!cron.minutes.has(mi)) wall = Date.UTC(y, mo, day, h, mi + 1);
    else if (!cron.seconds.has(d.getUTCSeconds())) wall += 1000;
    else {
      // A wall time a zone's clock change skips or repeats can map before `from`: go on past it.
      const instant = instantOf(timeZone, wall);
      if (instant > until) return null;
      if (instant >= from) return instant;
      wall += 1000;
    }
  }
  return null;
}
