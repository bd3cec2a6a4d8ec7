import type { Progress } from './messages';

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
