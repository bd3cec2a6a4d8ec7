import { anchorsOf, linksOf, localTarget, slugOf, withoutCode } from '../../docs-tools/markdown';

describe('slugOf (GitHub heading anchors)', () => {
  it.each([
    ['Quick start', 'quick-start'],
    ['The bridge: `kubectl apply`', 'the-bridge-kubectl-apply'],
    ['ArmadaChart (`act`)', 'armadachart-act'],
    ['Run control: every kind, every verb', 'run-control-every-kind-every-verb'],
    [
      'Undo a finished deploy: `armadactl rollback --previous | --to-run RUN_ID`',
      'undo-a-finished-deploy-armadactl-rollback---previous----to-run-run_id',
    ],
    ['Drift: objects deleted or edited outside Helm', 'drift-objects-deleted-or-edited-outside-helm'],
    ['See [the guide](x.md) now', 'see-the-guide-now'],
    ['Café über', 'café-über'],
    ['  Trailing spaces  ', 'trailing-spaces'],
  ])('%s → #%s', (heading, slug) => {
    expect(slugOf(heading)).toBe(slug);
  });
});

describe('anchorsOf', () => {
  it('numbers repeated headings -1, -2 in order', () => {
    expect([...anchorsOf('# Usage\n\n## Usage\n\n### Usage\n')]).toEqual(['usage', 'usage-1', 'usage-2']);
  });

  it('reads closing hashes, setext headings and explicit <a id> / <a name> anchors', () => {
    const text = [
      '## Closed ##',
      '',
      'Setext one',
      '==========',
      '',
      'Setext two',
      '---',
      '',
      '<a id="here"></a> and <a name="there">x</a>',
    ].join('\n');
    expect([...anchorsOf(text)].sort()).toEqual(['closed', 'here', 'setext-one', 'setext-two', 'there']);
  });

  it('ignores headings and anchors in fenced code, and list items above a rule', () => {
    const text = [
      '```sh',
      '# a comment',
      '<a id="no">',
      '```',
      '',
      '- item',
      '---',
      '~~~',
      '## Not',
      '~~~',
    ].join('\n');
    expect([...anchorsOf(text)]).toEqual([]);
  });
});

describe('withoutCode', () => {
  it('blanks fenced blocks (keeping the line count) and drops inline code spans', () => {
    const text = 'a `[x](y.md)` b ``c ` d`` e\n````md\n```\n[z](z.md)\n````\nafter';
    expect(withoutCode(text)).toBe('a  b  e\n\n\n\n\nafter');
  });
});

describe('linksOf', () => {
  it('finds inline links, images, reference definitions and HTML links, with their lines', () => {
    const text = [
      'See [a](a.md#one) and ![pic](img/p.png "title").',
      '[ref]: docs/x.md',
      '<a href="b.md">b</a> <img src="c.png">',
      '[angle](<with space.md>)',
    ].join('\n');
    expect(linksOf(text)).toEqual([
      { target: 'a.md#one', line: 1 },
      { target: 'img/p.png', line: 1 },
      { target: 'docs/x.md', line: 2 },
      { target: 'b.md', line: 3 },
      { target: 'c.png', line: 3 },
      { target: 'with space.md', line: 4 },
    ]);
  });

  it('skips links in fenced blocks and inline code', () => {
    expect(linksOf('`[a](a.md)`\n```\n[b](b.md)\n```\n[c](c.md)')).toEqual([{ target: 'c.md', line: 5 }]);
  });
});

describe('localTarget', () => {
  it.each([
    ['https://example.com/a.md', null],
    ['mailto:a@b.c', null],
    ['//host/x', null],
    ['a.md', { file: 'a.md' }],
    ['a.md#b', { file: 'a.md', anchor: 'b' }],
    ['#b', { file: '', anchor: 'b' }],
    ['with%20space.md', { file: 'with space.md' }],
  ])('%s → %j', (target, expected) => {
    expect(localTarget(target)).toEqual(expected);
  });
});
