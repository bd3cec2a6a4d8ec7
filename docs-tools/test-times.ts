import { table } from './table';

/** One line of test/results/runs.jsonl: a full `npm test` run, as test/run.sh appends it. */
export interface TestRun {
  /** When it started: ISO time (seeded rows: the day only). */
  date: string;
  commit: string;
  /** The tools or images cache was empty at the start: the run built them from scratch. */
  cold: boolean;
  seconds: number;
  passed: number;
  failed: number;
  /** The 1-minute load average at the start (null: not recorded). */
  loadAverage: number | null;
  /** What a person noted of the run (the rows carried over from the README). */
  note?: string;
}

const duration = (seconds: number) => `${Math.floor(seconds / 60)} min ${seconds % 60} s`;

/** The runs of a runs.jsonl text, in the order they were appended. */
export function parseRuns(text: string): TestRun[] {
  return text
    .split('\n')
    .filter((line) => line.trim())
    .map((line, i) => {
      try {
        return JSON.parse(line) as TestRun;
      } catch (err) {
        throw new Error(`test/results/runs.jsonl:${i + 1}: ${(err as Error).message}`, { cause: err });
      }
    });
}

/** The "Test run times" table: newest run first. */
export function testTimesTable(runs: TestRun[]): string {
  const rows = [...runs]
    .reverse()
    .map((run) => [
      run.date.replace(/T(\d\d:\d\d).*/, ' $1 UTC'),
      `\`${run.commit}\``,
      run.cold ? 'cold' : 'warm',
      `**${duration(run.seconds)}**`,
      run.passed.toLocaleString('en-US'),
      String(run.failed),
      run.loadAverage === null ? '' : String(run.loadAverage),
      run.note ?? '',
    ]);
  return table(
    ['started', 'commit', 'caches', 'time', 'passed', 'failed', 'load at start', 'note'],
    rows,
  ).join('\n');
}
