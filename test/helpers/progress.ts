import type { ChartState, Progress } from '../../core/progress';

/**
 * A manifest run's progress in `phase`, with one parallel group `apps` whose charts are in the
 * given states; chart `web` deploys release `d-web` in namespace `demo`.
 */
export function oneGroup(phase: string, charts: Record<string, ChartState>): Progress {
  return {
    phase,
    groups: [
      {
        name: 'apps',
        sequenced: false,
        state: phase === 'Running' ? 'running' : 'done',
        charts: Object.entries(charts).map(([chart, state]) => ({
          chart,
          release: `d-${chart}`,
          namespace: 'demo',
          state,
        })),
      },
    ],
  };
}
