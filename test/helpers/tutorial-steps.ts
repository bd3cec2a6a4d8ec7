/**
 * An executable tutorial, read from its Markdown (docs/tutorials/getting-started.md). Pure: no I/O.
 *
 * The conventions, which read as plain Markdown on any Git host:
 * - A ```sh block is what the reader pastes into their terminal, as one step.
 * - The next ```text block, before any other ```sh block (prose may come between: "It prints:"),
 *   is what that step shows. ```text eventually (the word after the language, which renders as
 *   nothing) says the reader may have to run the step again until it shows that: a read-only
 *   command whose output follows a run in progress.
 * - In a ```text block, `[...]` stands for what differs from run to run: alone on a line, any
 *   number of lines (none included); inside a line, any text on that line. A run of spaces or
 *   tabs matches any run of spaces or tabs (column widths follow the names in a table; helm
 *   separates its columns with tabs). Trailing spaces and blank lines at either end never count.
 * - Other fenced blocks (```yaml, ```console, ...) are shown to the reader, never run.
 */

/** What the tutorial says a step shows. */
export interface ExpectedOutput {
  text: string;
  /** The reader runs the step again until it shows `text`. */
  eventually: boolean;
  /** 1-based line of the block's opening fence. */
  line: number;
}

/** One ```sh block and what the tutorial says it shows. */
export interface TutorialStep {
  /** The block's content, as the reader pastes it. */
  commands: string;
  /** 1-based line of the block's opening fence, for messages. */
  line: number;
  expected?: ExpectedOutput;
}

/** `[...]`: text that differs from run to run. */
export const ELIDED = '[...]';

interface FencedBlock {
  language: string;
  meta: string[];
  content: string;
  line: number;
}

const FENCE = /^(\s{0,3})(`{3,}|~{3,})\s*([^`\s]*)\s*(.*)$/;

/** The fenced code blocks of a CommonMark document, in order; an unclosed fence is an error. */
function fencedBlocks(markdown: string): FencedBlock[] {
  const lines = markdown.split('\n');
  const blocks: FencedBlock[] = [];
  for (let i = 0; i < lines.length; i++) {
    const open = FENCE.exec(lines[i]);
    if (!open) continue;
    const [, indent, fence, language, rest] = open;
    const closing = new RegExp(`^\\s{0,3}${fence[0] === '`' ? '`' : '~'}{${fence.length},}\\s*$`);
    const end = lines.findIndex((line, j) => j > i && closing.test(line));
    if (end === -1) throw new Error(`line ${i + 1}: the ${fence} block opened here is never closed`);
    const content = lines
      .slice(i + 1, end)
      .map((line) => line.replace(new RegExp(`^ {0,${indent.length}}`), ''))
      .join('\n');
    blocks.push({ language, meta: rest.split(/\s+/).filter(Boolean), content, line: i + 1 });
    i = end;
  }
  return blocks;
}

/** The tutorial's steps in order: each ```sh block with the ```text block that says what it shows. */
export function tutorialSteps(markdown: string): TutorialStep[] {
  const steps: TutorialStep[] = [];
  for (const block of fencedBlocks(markdown)) {
    if (block.language === 'sh') {
      steps.push({ commands: block.content, line: block.line });
      continue;
    }
    if (block.language !== 'text') continue;
    const step = steps.at(-1);
    if (!step) throw new Error(`line ${block.line}: a text block with no sh block before it to show`);
    if (step.expected)
      throw new Error(
        `line ${block.line}: a second text block for the sh block of line ${step.line} (one output per step)`,
      );
    const unknown = block.meta.filter((word) => word !== 'eventually');
    if (unknown.length > 0)
      throw new Error(
        `line ${block.line}: unknown word after text: ${unknown.join(' ')} (only "eventually")`,
      );
    step.expected = { text: block.content, eventually: block.meta.includes('eventually'), line: block.line };
  }
  return steps;
}

const escapeRegExp = (text: string) => text.replace(/[.*+?^${}()|[\]\\]/g, '\\$&');

/** One expected line as a pattern for one output line. */
function linePattern(line: string): RegExp {
  const parts = line.split(ELIDED).map((part) =>
    part
      .split(/[ \t]+/)
      .map(escapeRegExp)
      .join('[ \\t]+'),
  );
  return new RegExp(`^${parts.join('.*')}$`);
}

/** Lines without trailing spaces, blank lines at either end dropped. */
function significantLines(text: string): string[] {
  const lines = text.split('\n').map((line) => line.trimEnd());
  while (lines.length > 0 && lines[0] === '') lines.shift();
  while (lines.length > 0 && lines.at(-1) === '') lines.pop();
  return lines;
}

/** Whether `output` is what `expected` (a ```text block, with its `[...]`) says it shows. */
export function outputMatches(expected: string, output: string): boolean {
  const want = significantLines(expected).map((line) => (line.trim() === ELIDED ? null : linePattern(line)));
  const got = significantLines(output);
  // matches(i, j): want[i..] matches got[j..]; memoised, as `[...]` lines can try many splits.
  const memo = new Map<number, boolean>();
  const matches = (i: number, j: number): boolean => {
    if (i === want.length) return j === got.length;
    const key = i * (got.length + 1) + j;
    const known = memo.get(key);
    if (known !== undefined) return known;
    const pattern = want[i];
    const result =
      pattern === null
        ? matches(i + 1, j) || (j < got.length && matches(i, j + 1))
        : j < got.length && pattern.test(got[j]) && matches(i + 1, j + 1);
    memo.set(key, result);
    return result;
  };
  return matches(0, 0);
}
