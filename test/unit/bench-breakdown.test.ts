import { applyBreakdown, type ActivitySpan } from '../../bench/breakdown';
import type { HistoryEvent } from '../../bench/history';
import { taskRoundTrips } from '../../bench/overhead';

const span = (
  type: string,
  workflowId: string,
  group: string,
  scheduled: number,
  closed: number,
): ActivitySpan => ({
  type,
  workflowId,
  group,
  scheduled,
  started: scheduled + 2,
  closed,
});

describe('applyBreakdown: where the time of one apply goes', () => {
  it('splits a serial run into CLI, activities and the gaps between them, adding up to the wall time', () => {
    const b = applyBreakdown({
      cliStart: 0,
      runStart: 500,
      activities: [
        span('helmObserve', 'helm:a', 'g1', 550, 600),
        span('helmUpgradeInstall', 'helm:a', 'g1', 610, 900),
        span('helmUpgradeInstall', 'helm:b', 'g1', 950, 1200),
        span('helmUpgradeInstall', 'helm:c', 'g2', 1400, 1700),
      ],
      runClose: 1750,
      cliEnd: 1800,
    });
    expect(b).toEqual({
      totalMs: 1800,
      cliStartMs: 500,
      cliEndMs: 50,
      activitiesOnPathMs: 50 + 290 + 250 + 300,
      activityMsByType: { helmObserve: 50, helmUpgradeInstall: 840 },
      activityDispatchMs: 8,
      gapsMs: {
        beforeFirstActivity: 50,
        withinChart: 10,
        betweenCharts: 50,
        betweenGroups: 200,
        afterLastActivity: 50,
      },
    });
    const parts =
      b.cliStartMs + b.cliEndMs + b.activitiesOnPathMs + Object.values(b.gapsMs).reduce((x, y) => x + y);
    expect(parts).toBe(b.totalMs);
  });

  it('counts overlapping activities of a parallel group once on the path', () => {
    const b = applyBreakdown({
      cliStart: 0,
      runStart: 0,
      activities: [
        span('helmUpgradeInstall', 'helm:a', 'g', 100, 400),
        span('helmUpgradeInstall', 'helm:b', 'g', 120, 500),
      ],
      runClose: 600,
      cliEnd: 600,
    });
    expect(b.activitiesOnPathMs).toBe(400);
    expect(b.activityMsByType.helmUpgradeInstall).toBe(680);
    expect(b.gapsMs).toMatchObject({ beforeFirstActivity: 100, afterLastActivity: 100, betweenCharts: 0 });
  });
});

describe('taskRoundTrips: a bare workflow’s workflow-task round trips', () => {
  /** A history event at `ms` (server time). */
  const event = (eventId: number, ms: number, attributes: Record<string, unknown> = {}) =>
    ({
      eventId,
      eventTime: { seconds: Math.floor(ms / 1000), nanos: (ms % 1000) * 1e6 },
      ...attributes,
    }) as unknown as HistoryEvent;

  it('measures each workflow task from scheduled to completed', () => {
    const events = [
      event(1, 1000),
      event(2, 1001, { workflowTaskScheduledEventAttributes: {} }),
      event(3, 1005, { workflowTaskStartedEventAttributes: { scheduledEventId: 2 } }),
      event(4, 1013, { workflowTaskCompletedEventAttributes: { startedEventId: 3 } }),
      event(5, 1040, { workflowTaskScheduledEventAttributes: {} }),
      event(6, 1050, { workflowTaskStartedEventAttributes: { scheduledEventId: 5 } }),
      event(7, 1070, { workflowTaskCompletedEventAttributes: { startedEventId: 6 } }),
    ];
    expect(taskRoundTrips(events)).toEqual([12, 30]);
  });
});
