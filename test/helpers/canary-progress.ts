import type { CanaryProgress } from '../../core/progress';

/** A canary at step 2 of 3 (an approval step), step 1 held for a minute: for rendering tests. */
export const canaryAtStep2: CanaryProgress = {
  kind: 'canary',
  target: 'blog-2',
  phase: 'Progressing',
  step: 2,
  steps: 3,
  percent: 30,
  waitingOn: 'approval',
  history: [
    {
      step: 1,
      percent: 10,
      canary: 1,
      stable: 9,
      hold: 60,
      startedAt: '2026-11-22T07:38:41.000Z',
      readyAt: '2026-11-22T07:38:42.000Z',
      endedAt: '2026-11-22T07:39:42.000Z',
      ended: 'held',
    },
    { step: 2, percent: 30, canary: 3, stable: 7, hold: 'approval', startedAt: '2026-11-22T07:39:42.000Z' },
    { step: 3, percent: 100, canary: 10, stable: 0 },
  ],
};
