import type { AnyProgress, CanaryProgress, CanaryStepRecord, ChartProgress, Progress } from '../progress';
import type { ControlProgress, Gate, Hold, Request } from '../control';
import { formatSeconds } from './canary';
import { shownPhase } from './status';

/**
 * What a run's progress shows, decided once for every place that shows it: the Temporal UI's
 * current details (`markdownOf`), `armadactl status` and `watch` on a terminal (`textOf`), and
 * `watch` into a log (`logOf`). The skins only lay it out, so they all carry the same facts.
 */
export interface ProgressView {
  /** The run at a glance: where it is, what it waits on, its pause. */
  title: string;
  /** One fact each: why it ended, the gate waiting, approvals, refusals, failed status writes. */
  notes: string[];
  columns: string[];
  rows: ProgressRow[];
  /** What the table holds, in words (`4 charts in 2 groups`, `3 steps`). */
  size: string;
  /** One line per group, or per step that started: what the watch log prints again when it changes. */
  log: string[];
}

export interface ProgressRow {
  cells: string[];
  /** The canary step the run is at. */
  current?: boolean;
}

/** A canary's answer to the `progress` query, not a manifest's, group's or chart's. */
export const isCanary = (p: AnyProgress): p is CanaryProgress => 'kind' in p && p.kind === 'canary';

export function progressView(p: AnyProgress): ProgressView {
  return isCanary(p) ? canaryView(p) : manifestView(p);
}

/** `2026-11-22 07:40:00 UTC` of an RFC 3339 time (as workflows write them, in UTC). */
const stamp = (iso: string) => `${iso.slice(0, 10)} ${iso.slice(11, 19)} UTC`;
/** `07:40:00` (UTC) of an RFC 3339 time, or blank: the step table's times, kept narrow. */
const clock = (iso?: string) => (iso ? iso.slice(11, 19) : '');
const firstLine = (text: string) => text.split('\n')[0];
/** ` by ops (metrics)`: who asked and why, when they said. */
const byWhom = (r: Request) => `${r.by ? ` by ${r.by}` : ''}${r.reason ? ` (${r.reason})` : ''}`;

/** `Running — waiting on approve before group apps — paused by ops since …, 42s of the hold left`. */
function title(
  what: string,
  p: Pick<CanaryProgress, 'waitingOn' | 'nextStepAt' | 'paused' | 'held'>,
): string {
  return [what, ...waitFacts(p)].join(' — ');
}

/** What the run waits on (and until when), and its pause with who, why and since: each a phrase. */
function waitFacts(p: Pick<CanaryProgress, 'waitingOn' | 'nextStepAt' | 'paused' | 'held'>): string[] {
  const held = p.held && heldFact(p.held);
  const waiting =
    !held && p.waitingOn && `waiting on ${p.waitingOn}${p.nextStepAt ? ` until ${stamp(p.nextStepAt)}` : ''}`;
  const left = p.paused?.remainingSeconds;
  const paused =
    p.paused &&
    `paused${byWhom(p.paused)} since ${stamp(p.paused.since)}${left ? `, ${formatSeconds(left)} of the hold left` : ''}`;
  return [waiting, held, paused].filter((fact): fact is string => Boolean(fact));
}

/** `waiting on freeze: incident 42 (ArmadaPolicy incident)`, `waiting on window until 2026-… UTC`. */
function heldFact(held: Hold): string {
  if (held.for === 'window' && held.until) return `waiting on window until ${stamp(held.until)}`;
  return `waiting on ${held.for}: ${held.reason}`;
}

/**
 * What a run waits on, in a phrase for a list (`armadactl list`): an approval gate, a canary's
 * readiness, hold (until when) or analysis check, as the title says them; a manifest, group or
 * chart run at none of those waits on its charts in flight (`waiting on web, api deploying`: the
 * Helm call, then the Armada wait). A pause is added. Empty when it waits on nothing.
 */
export function waitingOf(p: AnyProgress): string {
  const facts = waitFacts(p);
  if (!isCanary(p) && !p.waitingOn) {
    const deploying = p.groups.flatMap((g) => g.charts).filter((c) => c.state === 'deploying');
    if (deploying.length) facts.unshift(`waiting on ${deploying.map((c) => c.chart).join(', ')} deploying`);
  }
  return facts.join(' — ');
}

/** The control facts every kind of run shows: the gate waiting, approvals, refusals, failed status writes. */
function controlNotes(p: ControlProgress): string[] {
  const failures = p.statusWriteFailures;
  return [
    ...(p.gate
      ? [`gate "${p.gate.name}" waits for approval${gateNeeds(p.gate)} since ${stamp(p.gate.since)}`]
      : []),
    ...(p.approvals ?? []).map(
      (a) => `approved "${a.gate}"${byWhom(a)}${a.count ? ` (${a.count} approvals)` : ''} at ${stamp(a.at)}`,
    ),
    ...(p.refused ?? []).map((r) => `refused ${r.verb}${byWhom(r)} at ${stamp(r.at)}: ${r.why}`),
    ...(failures
      ? [
          `status writes failed ${failures.count} time${failures.count === 1 ? '' : 's'} (the run went on); last: ${firstLine(failures.last)}`,
        ]
      : []),
  ];
}

/** What a gate with separation-of-duties rules still needs: ` (1 of 2 approvals; not_author: alice may not approve)`. */
function gateNeeds(gate: Gate): string {
  const { rules } = gate;
  if (!rules) return '';
  const needs = [
    ...(rules.distinctApprovers
      ? [`${gate.approvals?.length ?? 0} of ${rules.distinctApprovers} approvals`]
      : []),
    ...(rules.notAuthor
      ? [
          rules.notAuthor.author === undefined
            ? 'not_author: author unknown, so none can pass it'
            : `not_author: ${rules.notAuthor.author} may not approve`,
        ]
      : []),
  ];
  return ` (${needs.join('; ')})`;
}

/** `1 chart`, `4 charts`. */
export const counted = (n: number, noun: string) => `${n} ${noun}${n === 1 ? '' : 's'}`;

/** A chart's state with the first line of its error: `failed: wait timed out`. */
const chartState = (c: ChartProgress) => `${c.state}${c.error ? `: ${firstLine(c.error)}` : ''}`;

/** A manifest, group or chart run: its phase, then one row per chart under its group. */
function manifestView(p: Progress): ProgressView {
  const rows = p.groups.flatMap((g) => {
    const group = `${g.name} (${g.sequenced ? 'sequenced' : 'parallel'}, ${g.state})`;
    if (!g.charts.length) return [{ cells: [group, '', '', '', ''] }];
    return g.charts.map((c, i) => ({
      cells: [
        i ? '' : group,
        c.chart,
        `${c.namespace}/${c.release}`,
        c.revision ? String(c.revision) : '',
        chartState(c),
      ],
    }));
  });
  const log = p.groups.map((g) => {
    const charts = g.charts
      .filter((c) => c.state !== 'pending')
      .map(
        (c) =>
          `${c.chart} ${c.state}${c.revision ? ` rev ${c.revision}` : ''}${c.error ? `: ${firstLine(c.error)}` : ''}`,
      );
    return `group ${g.name}: ${g.state}${charts.length ? ` — ${charts.join(', ')}` : ''}`;
  });
  const charts = p.groups.reduce((n, g) => n + g.charts.length, 0);
  return {
    title: title(shownPhase(p), p),
    notes: controlNotes(p),
    columns: ['group', 'chart', 'release', 'revision', 'state'],
    rows,
    size: `${counted(charts, 'chart')} in ${counted(p.groups.length, 'group')}`,
    log,
  };
}

const CANARY_COLUMNS = ['step', 'percent', 'new/old', 'hold', 'started', 'ready', 'ended'];
/** The columns whose cells the watch log names a started step by: `started 07:38:41, ready …`. */
const STEP_TIMES = ['started', 'ready', 'ended'].map((c) => CANARY_COLUMNS.indexOf(c));

function stepCells(s: CanaryStepRecord): string[] {
  const hold = s.hold === undefined ? '-' : s.hold === 'approval' ? 'approval' : formatSeconds(s.hold);
  const ended = s.endedAt ? `${clock(s.endedAt)} ${s.ended}` : '';
  return [
    String(s.step),
    `${s.percent} %`,
    `${s.canary}/${s.stable}`,
    hold,
    clock(s.startedAt),
    clock(s.readyAt),
    ended,
  ];
}

/** A canary: its step and split, what it waits on, then one row per step with its times. */
function canaryView(p: CanaryProgress): ProgressView {
  const rows = p.history.map((s) => ({ cells: stepCells(s), current: s.step === p.step }));
  const log = p.history
    .filter((s) => s.startedAt)
    .map((s) => {
      const cells = stepCells(s);
      const times = STEP_TIMES.filter((i) => cells[i]).map((i) => `${CANARY_COLUMNS[i]} ${cells[i]}`);
      return `step ${s.step} (${cells[1]}, ${cells[2]}): ${times.join(', ')}`;
    });
  return {
    title: title(`${p.target}: ${shownPhase(p)}, step ${p.step}/${p.steps} at ${p.percent} %`, p),
    notes: [
      ...(p.reason ? [`reason: ${p.reason}`] : []),
      ...(p.weights ? [`traffic: ${p.weights}`] : []),
      ...controlNotes(p),
    ],
    columns: CANARY_COLUMNS,
    rows,
    size: counted(p.history.length, 'step'),
    log,
  };
}

/**
 * Text as the Temporal UI's markdown shows it literally: markdown's special characters escaped,
 * so an error message cannot break the table or the emphasis; and a slash between digits spaced
 * (`1 / 9`, `step 2 / 3`), which the UI's renderer (its typographer) otherwise sets as a fraction
 * (`<sup>1</sup>&frasl;<sub>9</sub>`).
 */
export function literal(text: string): string {
  return text.replace(/[\\`*_~|<>[\]]/g, '\\$&').replace(/(\d)\/(?=\d)/g, '$1 / ');
}

/**
 * The Temporal UI's current details: the title in bold, the notes as a list, the table, then
 * what it holds (`4 charts in 2 groups`) and a blank line. The UI (2.42) sizes the details'
 * frame to its body's scroll height, which falls about a line short of the page, so the last
 * block was cut (the fourth of four rows); the blank line is what it cuts now, and the count
 * says how many rows there are should the frame still be short.
 */
export function markdownOf(v: ProgressView): string {
  const row = (cells: string[]) => `| ${cells.map(literal).join(' | ')} |`;
  return [
    `**${literal(v.title)}**`,
    '',
    ...(v.notes.length ? [...v.notes.map((n) => `- ${literal(n)}`), ''] : []),
    row(v.columns),
    `|${v.columns.map(() => '---|').join('')}`,
    ...v.rows.map((r) => row(r.current ? [`▶ ${r.cells[0]}`, ...r.cells.slice(1)] : r.cells)),
    '',
    literal(v.size),
    '',
    // A paragraph of a no-break space: blank, yet not a blank line to markdown (the UI shows
    // `&nbsp;` as written).
    '\u00a0',
  ].join('\n');
}

/** Plain lines for a terminal: the title, the notes indented, then the table in aligned columns; ▶ marks the current row. */
export function textOf(v: ProgressView): string[] {
  const table = [v.columns, ...v.rows.map((r) => r.cells)];
  const widths = v.columns.map((_, i) => Math.max(...table.map((cells) => cells[i].length)));
  const line = (cells: string[]) =>
    cells
      .map((cell, i) => cell.padEnd(widths[i]))
      .join('  ')
      .trimEnd();
  return [
    v.title,
    ...v.notes.map((n) => `  ${n}`),
    `  ${line(v.columns)}`,
    ...v.rows.map((r) => `${r.current ? '▶ ' : '  '}${line(r.cells)}`),
  ];
}

/** Lines for a log that prints only what changed: the title, the notes, a line per group or started step. */
export function logOf(v: ProgressView): string[] {
  return [v.title, ...v.notes, ...v.log];
}
