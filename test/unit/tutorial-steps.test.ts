import { readFileSync } from 'node:fs';
import path from 'node:path';
import { outputMatches, tutorialSteps } from '../helpers/tutorial-steps';

const fence = '```';

describe('tutorialSteps: the sh blocks of a tutorial, each with the text block that says what it shows', () => {
  it('pairs each sh block with the next text block, prose between them allowed', () => {
    const markdown = [
      '# Title',
      '',
      `${fence}sh`,
      'npm start',
      fence,
      '',
      'It prints:',
      '',
      `${fence}text`,
      'armada-temporal is running.',
      fence,
      '',
      `${fence}sh`,
      'export A=1',
      'echo $A',
      fence,
    ].join('\n');
    expect(tutorialSteps(markdown)).toEqual([
      {
        commands: 'npm start',
        line: 3,
        expected: { text: 'armada-temporal is running.', eventually: false, line: 9 },
      },
      { commands: 'export A=1\necho $A', line: 13 },
    ]);
  });

  it('reads `text eventually` as a step the reader runs again until it shows the text', () => {
    const markdown = [`${fence}sh`, 'kubectl get act', fence, `${fence}text eventually`, 'shop', fence].join(
      '\n',
    );
    expect(tutorialSteps(markdown)[0].expected).toEqual({ text: 'shop', eventually: true, line: 4 });
  });

  it('runs no other fenced block, and reads a fence of four backticks or tildes to its own close', () => {
    const markdown = [
      `${fence}yaml`,
      'kind: ArmadaChart',
      fence,
      '````sh',
      'echo "```"',
      '````',
      '~~~text',
      '```',
      '~~~',
    ].join('\n');
    expect(tutorialSteps(markdown)).toEqual([
      { commands: 'echo "```"', line: 4, expected: { text: '```', eventually: false, line: 7 } },
    ]);
  });

  it.each([
    [
      'a text block with no sh block before it',
      [`${fence}text`, 'x', fence],
      /line 1: a text block with no sh/,
    ],
    [
      'two text blocks for one sh block',
      [`${fence}sh`, 'ls', fence, `${fence}text`, 'a', fence, `${fence}text`, 'b', fence],
      /line 7: a second text block for the sh block of line 1/,
    ],
    [
      'an unknown word after text',
      [`${fence}sh`, 'ls', fence, `${fence}text sometimes`, 'a', fence],
      /line 4: unknown word after text: sometimes/,
    ],
    [
      'a block never closed',
      ['intro', `${fence}sh`, 'ls'],
      /line 2: the ``` block opened here is never closed/,
    ],
  ])('refuses %s, naming the line', (_case, lines, message) => {
    expect(() => tutorialSteps(lines.join('\n'))).toThrow(message);
  });
});

describe('outputMatches: an output against a text block, [...] for what differs from run to run', () => {
  it.each([
    ['the same lines', 'a\nb', 'a\nb', true],
    ['a line more', 'a\nb', 'a\nb\nc', false],
    ['a line less', 'a\nb\nc', 'a\nb', false],
    ['another word', 'shop deployed', 'shop failed', false],
    ['blank lines at either end and trailing spaces', '\na  \n', 'a\n\n', true],
    [
      'wider columns, and tabs for spaces',
      'NAME  STATE\nshop  deployed',
      'NAME     STATE\nshop\t deployed',
      true,
    ],
    ['no space where the text has one', 'a b', 'ab', false],
    ['[...] inside a line: any text', 'AGE [...]s', 'AGE 10s', true],
    [
      '[...] inside a line: the rest of the line must still match',
      'shop [...] true',
      'shop 10s false',
      false,
    ],
    ['[...] inside a line matches no text', 'v[...]1.36', 'v1.36', true],
    [
      '[...] lines: any lines before and after',
      '[...]\nrunning.\n[...]',
      '> npm\n\nrunning.\nlog\nlog',
      true,
    ],
    ['[...] lines: no lines at all', '[...]\nrunning.\n[...]', 'running.', true],
    ['[...] lines: the lines between must still be in order', 'a\n[...]\nb', 'b\nx\na', false],
    ['regular-expression characters taken literally', 'step 1/4 (10 %) ▶ $x', 'step 1/4 (10 %) ▶ $x', true],
    ['regular-expression characters not taken as patterns', 'a.c', 'abc', false],
  ])('%s', (_case, expected, output, matches) => {
    expect(outputMatches(expected, output)).toBe(matches);
  });
});

describe('docs/tutorials/getting-started.md (run by test/e2e/getting-started.test.ts)', () => {
  const steps = tutorialSteps(
    readFileSync(path.resolve(__dirname, '../../docs/tutorials/getting-started.md'), 'utf8'),
  );

  it('says, after every block the reader pastes, what it shows', () => {
    expect(steps.filter((step) => step.expected === undefined).map((step) => step.line)).toEqual([]);
  });
});
