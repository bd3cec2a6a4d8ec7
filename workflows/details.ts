import type { CanaryProgress, Progress } from './messages';
import { formatSeconds } from './plan/canary';

/**
 * The run's current details for the Temporal UI: a small markdown table of groups and charts
 * with their states and revisions. Pure, so it is unit-tested and deterministic.
 */
export function renderDetails(progress: Progress): string {
  const lines = [
    `**${progress.phase}**${progress.waitingOn ? ` — waiting on ${progress.waitingOn}` : ''}`,
    '',
  ];
  lines.push('| group | chart | release | state | revision |', '|---|---|---|---|---|');
  for (const group of progress.groups) {
    group.charts.forEach((chart, i) => {
      const groupCell =
        i === 0 ? `${group.name} (${group.sequenced ? 'sequenced' : 'parallel'}, ${group.state})` : '';
      lines.push(
        `| ${groupCell} | ${chart.chart} | ${chart.namespace}/${chart.release} | ${chart.state}${chart.error ? `: ${chart.error.split('\n')[0]}` : ''} | ${chart.revision ?? ''} |`,
      );
    });
  }
  return lines.join('\n');
}

/**
 * A canary's current details: phase, the step it is at and what it waits for, then one row per
 * step with its split and times.
 */
export function renderCanaryDetails(p: CanaryProgress): string {
  const waiting = p.paused
    ? ` — **paused**${p.paused.by ? ` by ${p.paused.by}` : ''}${p.paused.reason ? ` (${p.paused.reason})` : ''}${p.paused.remainingSeconds ? `, ${formatSeconds(p.paused.remainingSeconds)} of the hold left` : ''}`
    : p.waitingOn
      ? ` — waiting on ${p.waitingOn}${p.nextStepAt ? ` until ${p.nextStepAt}` : ''}`
      : '';
  const lines = [
    `**${p.target}: ${p.phase}**, step ${p.step}/${p.steps} at ${p.percent} %${waiting}`,
    ...(p.reason ? ['', p.reason] : []),
    '',
    '| step | percent | new / old | hold | started | ready | ended |',
    '|---|---|---|---|---|---|---|',
  ];
  for (const s of p.history) {
    const hold = s.hold === undefined ? '' : s.hold === 'approval' ? 'approval' : formatSeconds(s.hold);
    const current = s.step === p.step ? '▶ ' : '';
    lines.push(
      `| ${current}${s.step} | ${s.percent} % | ${s.canary} / ${s.stable} | ${hold} | ${s.startedAt ?? ''} | ${s.readyAt ?? ''} | ${s.endedAt ? `${s.endedAt} (${s.ended})` : ''} |`,
    );
  }
  return lines.join('\n');
}
