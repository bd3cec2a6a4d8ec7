import { regionMarkers, withRegion } from '../../docs-tools/regions';
import { parseRuns, testTimesTable } from '../../docs-tools/test-times';

describe('withRegion', () => {
  const { begin, end } = regionMarkers('test-times');

  it('replaces what is between the markers, fenced from Prettier, and keeps the prose around', () => {
    const page = `# Testing\n\nbefore\n\n${begin}\n\nstale\n\n${end}\n\nafter\n`;
    const written = withRegion(page, 'test-times', '| a |\n', 'testing.md');
    expect(written).toBe(
      `# Testing\n\nbefore\n\n${begin}\n\n<!-- prettier-ignore-start -->\n\n| a |\n\n<!-- prettier-ignore-end -->\n\n${end}\n\nafter\n`,
    );
    expect(withRegion(written, 'test-times', '| a |\n', 'testing.md')).toBe(written);
  });

  it('names the page and the markers when the region is missing', () => {
    expect(() => withRegion('# Testing\n', 'test-times', 'x', 'docs/contributing/testing.md')).toThrow(
      `docs/contributing/testing.md has no region between "${begin}" and "${end}"`,
    );
  });
});

describe('the test run times', () => {
  const lines = [
    '{"date":"2026-11-27","commit":"bcf82f7","cold":true,"seconds":2000,"passed":2238,"failed":0,"loadAverage":null,"note":"as above"}',
    '{"date":"2026-11-28T04:01:09.000Z","commit":"abc1234","cold":false,"seconds":1389,"passed":2590,"failed":1,"loadAverage":1.5}',
  ];

  it('shows the newest run first, with its caches, time, counts and load', () => {
    expect(testTimesTable(parseRuns(`${lines.join('\n')}\n`)).split('\n')).toEqual([
      '| started | commit | caches | time | passed | failed | load at start | note |',
      '| --- | --- | --- | --- | --- | --- | --- | --- |',
      '| 2026-11-28 04:01 UTC | `abc1234` | warm | **23 min 9 s** | 2,590 | 1 | 1.5 |  |',
      '| 2026-11-27 | `bcf82f7` | cold | **33 min 20 s** | 2,238 | 0 |  | as above |',
    ]);
  });

  it('names the line of runs.jsonl that is not JSON', () => {
    expect(() => parseRuns(`${lines[0]}\n{oops\n`)).toThrow(/^test\/results\/runs\.jsonl:2: /);
  });
});
