import type { CanaryProgress, Progress } from '../workflows/messages';
import { formatSeconds } from '../workflows/plan/canary';

/** What the `progress` query answers: a manifest's groups and charts, or a canary's steps. */
export type AnyProgress = Progress | CanaryProgress;

/** Progress as plain lines, whichever kind of run answered. */
export function formatProgress(p: AnyProgress): string[] {
  return 'kind' in p && p.kind === 'canary' ? formatCanary(p) : formatManifest(p as Progress);
}

/** `06:52:01` (UTC) of an RFC 3339 time, or blank. */
const clock = (iso?: string) => (iso ? iso.slice(11, 19) : '');

/** A canary: its phase and step, then one line per step with its split and times (UTC). */
export function formatCanary(p: CanaryProgress): string[] {
  const paused = p.paused
    ? ` — paused since ${p.paused.since}${p.paused.by ? ` by ${p.paused.by}` : ''}${p.paused.reason ? ` (${p.paused.reason})` : ''}${p.paused.remainingSeconds ? `, ${formatSeconds(p.paused.remainingSeconds)} of the hold left` : ''}`
    : '';
  const waiting =
    !p.paused && p.waitingOn
      ? ` (waiting on ${p.waitingOn}${p.nextStepAt ? ` until ${p.nextStepAt}` : ''})`
      : '';
  const lines = [`${p.target}: ${p.phase}, step ${p.step}/${p.steps} at ${p.percent} %${waiting}${paused}`];
  if (p.reason) lines.push(`  ${p.reason}`);
  lines.push(
    `  ${'step'.padEnd(6)}${'percent'.padEnd(9)}${'new/old'.padEnd(10)}${'hold'.padEnd(10)}${'started'.padEnd(10)}${'ready'.padEnd(10)}ended`,
  );
  for (const s of p.history) {
    const hold = s.hold === undefined ? '-' : s.hold === 'approval' ? 'approval' : formatSeconds(s.hold);
    lines.push(
      `${s.step === p.step ? '▶ ' : '  '}${String(s.step).padEnd(6)}${`${s.percent} %`.padEnd(9)}${`${s.canary}/${s.stable}`.padEnd(10)}${hold.padEnd(10)}${clock(s.startedAt).padEnd(10)}${clock(s.readyAt).padEnd(10)}${s.endedAt ? `${clock(s.endedAt)} ${s.ended}` : ''}`.trimEnd(),
    );
  }
  return lines;
}

/** A manifest: one line per group, one per chart under it. */
function formatManifest(p: Progress): string[] {
  const lines = [
    `phase: ${p.phase}${p.waitingOn ? ` (waiting on ${p.waitingOn})` : ''}${p.paused ? ` — paused since ${p.paused.since}${p.paused.by ? ` by ${p.paused.by}` : ''}` : ''}`,
  ];
  for (const g of p.groups) {
    lines.push(`group ${g.name} (${g.sequenced ? 'sequenced' : 'parallel'}): ${g.state}`);
    for (const c of g.charts) {
      const rev = c.revision ? ` rev ${c.revision}` : '';
      lines.push(
        `  ${c.chart.padEnd(20)} ${`${c.namespace}/${c.release}`.padEnd(32)} ${c.state}${rev}${c.error ? `: ${c.error.split('\n')[0]}` : ''}`,
      );
    }
  }
  return lines;
}
