import { nextFire, parseCron, ScheduleError, zoneOffsetMs } from '../../api/schedule';
import { validateObject } from '../../api/validate';
import type { DeployWindow } from '../../api/windows';
import { isOpen, nextOpening } from '../../core/plan/windows';

const at = (iso: string) => Date.parse(iso);
const iso = (ms: number | null) => (ms === null ? null : new Date(ms).toISOString());
const allow = (schedule: string, duration: string, time_zone = 'UTC'): DeployWindow => ({
  kind: 'allow',
  schedule,
  duration,
  time_zone,
});
const deny = (schedule: string, duration: string, time_zone = 'UTC'): DeployWindow => ({
  kind: 'deny',
  schedule,
  duration,
  time_zone,
});
const YEAR = 366 * 24 * 3600 * 1000;

describe('parseCron', () => {
  it('reads 5 fields as firing at second 0', () => {
    const cron = parseCron('*/15 9-17 * * 1-5');
    expect([...cron.seconds]).toEqual([0]);
    expect([...cron.minutes]).toEqual([0, 15, 30, 45]);
    expect([...cron.hours]).toEqual([9, 10, 11, 12, 13, 14, 15, 16, 17]);
    expect([...cron.daysOfWeek]).toEqual([1, 2, 3, 4, 5]);
  });

  it('reads 6 fields with seconds first, and 7 as Sunday', () => {
    const cron = parseCron('0/20 * * * * 7');
    expect([...cron.seconds]).toEqual([0, 20, 40]);
    expect([...cron.daysOfWeek]).toEqual([0]);
  });

  it.each([
    [
      '* * * *',
      'a schedule has 5 fields (minute hour day-of-month month day-of-week) or 6 (second first), not 4',
    ],
    ['60 * * * *', 'minute field "60": "60" is outside 0-59'],
    ['* 5-2 * * *', 'hour field "5-2": "5-2" is outside 0-23'],
    ['* * * 13 *', 'month field "13": "13" is outside 1-12'],
    ['*/0 * * * *', 'minute field "*/0": a step must be at least 1'],
    ['* * * * mon', 'day of week field "mon": "mon" is not *, N, N-M or one of them /STEP'],
  ])('refuses %j: %s', (schedule, message) => {
    expect(() => parseCron(schedule)).toThrow(new ScheduleError(message));
  });
});

describe('zoneOffsetMs', () => {
  it.each([
    ['UTC', 0],
    ['Asia/Kolkata', 5.5 * 3600_000],
    ['America/Bogota', -5 * 3600_000],
  ])('%s is %d ms ahead of UTC', (zone, offset) => {
    expect(zoneOffsetMs(zone, at('2026-01-15T12:00:00Z'))).toBe(offset);
    expect(zoneOffsetMs(zone, at('2026-07-15T12:00:00Z'))).toBe(offset);
  });
});

describe('nextFire', () => {
  it.each([
    ['0 9 * * *', 'UTC', '2026-03-02T08:59:30.000Z', '2026-03-02T09:00:00.000Z'],
    ['0 9 * * *', 'UTC', '2026-03-02T09:00:00.000Z', '2026-03-02T09:00:00.000Z'],
    ['0 9 * * *', 'UTC', '2026-03-02T09:00:00.001Z', '2026-03-03T09:00:00.000Z'],
    ['0 9 * * *', 'Asia/Kolkata', '2026-03-02T00:00:00.000Z', '2026-03-02T03:30:00.000Z'],
    ['0 9 * * 1-5', 'UTC', '2026-03-07T10:00:00.000Z', '2026-03-09T09:00:00.000Z'], // Saturday → Monday
    ['0/10 * * * * *', 'UTC', '2026-03-02T12:00:07.000Z', '2026-03-02T12:00:10.000Z'],
    ['0 0 29 2 *', 'UTC', '2026-03-01T00:00:00.000Z', '2028-02-29T00:00:00.000Z'],
    ['0 0 1 * 1', 'UTC', '2026-03-02T00:00:01.000Z', '2026-03-09T00:00:00.000Z'], // day 1 or a Monday
  ])('%s in %s after %s fires at %s', (schedule, zone, from, expected) => {
    expect(iso(nextFire(parseCron(schedule), zone, at(from), at(from) + 3 * YEAR))).toBe(expected);
  });

  it('finds none before `until`', () => {
    expect(
      nextFire(parseCron('0 9 * * *'), 'UTC', at('2026-03-02T10:00:00Z'), at('2026-03-03T08:00:00Z')),
    ).toBeNull();
  });
});

describe('isOpen', () => {
  const office = [allow('0 9 * * 1-5', '8h')];
  it.each([
    ['no windows: always', [], '2026-03-07T03:00:00Z', true],
    ['inside an allow window', office, '2026-03-02T10:00:00Z', true],
    ['at its start (included)', office, '2026-03-02T09:00:00Z', true],
    ['at its end (excluded)', office, '2026-03-02T17:00:00Z', false],
    ['on a weekend', office, '2026-03-07T10:00:00Z', false],
    [
      'inside an allow window but a deny is open',
      [...office, deny('0 12 * * *', '1h')],
      '2026-03-02T12:30:00Z',
      false,
    ],
    ['deny only, none open', [deny('0 12 * * *', '1h')], '2026-03-02T11:59:59Z', true],
    ['deny only, one open', [deny('0 12 * * *', '1h')], '2026-03-02T12:00:00Z', false],
    [
      'allow in Asia/Kolkata at 09:30 local',
      [allow('0 9 * * *', '1h', 'Asia/Kolkata')],
      '2026-03-02T04:00:00Z',
      true,
    ],
    [
      'allow in Asia/Kolkata at 09:00 UTC (14:30 local)',
      [allow('0 9 * * *', '1h', 'Asia/Kolkata')],
      '2026-03-02T09:00:00Z',
      false,
    ],
    ['a window of seconds', [allow('0/10 * * * * *', '5s')], '2026-03-02T12:00:14.999Z', true],
    ['just after it', [allow('0/10 * * * * *', '5s')], '2026-03-02T12:00:15Z', false],
  ])('%s → %s', (_what, windows, instant, open) => {
    expect(isOpen(windows as DeployWindow[], at(instant))).toBe(open);
  });
});

describe('nextOpening', () => {
  it.each([
    ['open now: now', [allow('0 9 * * *', '8h')], '2026-03-02T10:00:00.000Z', '2026-03-02T10:00:00.000Z'],
    [
      'the next allow start',
      [allow('0 9 * * 1-5', '8h')],
      '2026-03-06T18:00:00.000Z',
      '2026-03-09T09:00:00.000Z',
    ],
    [
      'the end of the open deny',
      [deny('0 * * * *', '30m')],
      '2026-03-02T12:10:00.000Z',
      '2026-03-02T12:30:00.000Z',
    ],
    [
      'the deny end inside an allow window',
      [allow('0 9 * * *', '8h'), deny('0 12 * * *', '1h')],
      '2026-03-02T12:30:00.000Z',
      '2026-03-02T13:00:00.000Z',
    ],
    [
      'past a deny covering the allow start',
      [allow('0 9 * * *', '2h'), deny('30 8 * * *', '1h')],
      '2026-03-02T08:00:00.000Z',
      '2026-03-02T09:30:00.000Z',
    ],
    [
      'chained denies',
      [deny('0 12 * * *', '1h'), deny('30 12 * * *', '1h')],
      '2026-03-02T12:10:00.000Z',
      '2026-03-02T13:30:00.000Z',
    ],
    ['seconds', [allow('0/10 * * * * *', '5s')], '2026-03-02T12:00:07.000Z', '2026-03-02T12:00:10.000Z'],
    [
      'in Asia/Kolkata (UTC+5:30)',
      [allow('0 9 * * *', '1h', 'Asia/Kolkata')],
      '2026-03-02T05:00:00.000Z',
      '2026-03-03T03:30:00.000Z',
    ],
    [
      'in America/Bogota (UTC-5)',
      [allow('0 9 * * *', '1h', 'America/Bogota')],
      '2026-03-02T05:00:00.000Z',
      '2026-03-02T14:00:00.000Z',
    ],
  ])('%s', (_what, windows, instant, expected) => {
    expect(iso(nextOpening(windows, at(instant)))).toBe(expected);
  });

  it('is null when deny windows cover every minute', () => {
    expect(nextOpening([deny('* * * * *', '2m')], at('2026-03-02T12:00:00Z'))).toBeNull();
  });

  it('is null when no allow window opens within a year and a day', () => {
    expect(nextOpening([allow('0 0 29 2 *', '1h')], at('2026-03-01T00:00:00Z'))).toBeNull();
  });
});

describe('windows in the API', () => {
  const deployer = (windows: unknown) => ({
    apiVersion: 'armada.airshipit.org/v1alpha1',
    kind: 'Deployer',
    metadata: { name: 'web', namespace: 'apps' },
    spec: {
      type: 'canary',
      deployment: { name: 'web', namespace: 'apps', image: 'nginx', version: '1', replicas: 2 },
      steps: [{ percent: 50 }, { percent: 100 }],
      windows,
    },
  });

  it('takes allow and deny windows, time_zone UTC by default', () => {
    const result = validateObject(deployer([{ kind: 'allow', schedule: '0/30 * * * * *', duration: '10s' }]));
    expect(result.problems).toEqual([]);
  });

  it.each([
    [
      { kind: 'allow', schedule: '0 25 * * *', duration: '1h' },
      'spec.windows[0].schedule',
      'schedule "0 25 * * *": hour field "25": "25" is outside 0-23',
    ],
    [
      { kind: 'allow', schedule: '0 0 30 2 *', duration: '1h' },
      'spec.windows[0].schedule',
      'schedule "0 0 30 2 *" never fires (no such date)',
    ],
    [
      { kind: 'deny', schedule: '0 0 * * *', duration: '1h', time_zone: 'Mars/Olympus' },
      'spec.windows[0].time_zone',
      'time_zone "Mars/Olympus" is not an IANA time zone name',
    ],
    [
      { kind: 'deny', schedule: '0 0 * * *', duration: 'an hour' },
      'spec.windows[0].duration',
      'windows[].duration "an hour" is not a duration such as "30s", "5m" or "1h30m"',
    ],
  ])('refuses %j at %s', (window, path, message) => {
    expect(validateObject(deployer([window])).problems).toContainEqual({ path, message });
  });
});
