import { z } from 'zod';
import { duration } from './common';
import { isTimeZone, nextFire, parseCron, ScheduleError } from './schedule';

/** Years a schedule is tried over to prove it ever fires: 8 covers a leap day (`0 0 29 2 *`). */
const FIRES_WITHIN_YEARS = 8;
const FROM = Date.UTC(2024, 0, 1);

/** Why `schedule` never fires or does not parse; undefined when it is a schedule that fires. */
function scheduleProblem(schedule: string): string | undefined {
  try {
    const until = Date.UTC(2024 + FIRES_WITHIN_YEARS, 0, 1);
    if (nextFire(parseCron(schedule), 'UTC', FROM, until) === null)
      return `schedule ${JSON.stringify(schedule)} never fires (no such date)`;
    return undefined;
  } catch (err) {
    if (err instanceof ScheduleError) return `schedule ${JSON.stringify(schedule)}: ${err.message}`;
    throw err;
  }
}

/**
 * Deploy windows: when a run may start a new group (a manifest), a new step (a canary), or a
 * chart's helm write. One zod piece for ArmadaManifest, ArmadaChart and Deployer.
 */
export const deployWindows = z
  .array(
    z.strictObject({
      kind: z
        .enum(['allow', 'deny'])
        .describe('allow: runs go on only while some allow window is open; deny: never while it is open.'),
      schedule: z
        .string()
        .min(9)
        .max(128)
        .describe(
          'When the window opens: cron, 5 fields (minute hour day-of-month month day-of-week), or 6 with seconds first; in time_zone.',
        ),
      duration: duration('windows[].duration').describe(
        'How long the window stays open each time ("30s", "2h").',
      ),
      time_zone: z
        .string()
        .min(1)
        .max(64)
        .default('UTC')
        .describe('IANA time zone the schedule is read in (Europe/Berlin, Asia/Kolkata); default UTC.'),
    }),
  )
  .max(32)
  .superRefine((windows, ctx) => {
    windows.forEach((w, i) => {
      const problem = scheduleProblem(w.schedule);
      if (problem) ctx.addIssue({ code: 'custom', path: [i, 'schedule'], message: problem });
      if (!isTimeZone(w.time_zone))
        ctx.addIssue({
          code: 'custom',
          path: [i, 'time_zone'],
          message: `time_zone ${JSON.stringify(w.time_zone.slice(0, 64))} is not an IANA time zone name`,
        });
    });
  })
  .optional()
  .describe(
    'Deploy windows (as Argo CD sync windows): a run goes on while some allow window is open and no deny window is; with deny windows only, unless one is open; with none, always. Outside, it holds before its next group, step or helm write until one opens.',
  );

export type DeployWindow = NonNullable<z.infer<typeof deployWindows>>[number];
