import { readFileSync } from 'node:fs';
import path from 'node:path';
import type { Results } from '../bench/results';
import { armadactlReference } from './armadactl';
import { benchmarkFigures, benchmarkTargets } from './benchmarks';
import { environmentReference } from './environment';
import { withRegion } from './regions';
import { stateWordsTable } from './states';
import { parseRuns, testTimesTable } from './test-times';

/**
 * Every page `npm run docs` writes (the CRD field reference is api/generate-crds.ts's, which
 * `npm run docs` runs first): a wholly generated page, or the generated regions of a
 * hand-written one. Paths are relative to the repository's root.
 */
export interface GeneratedPage {
  file: string;
  /** The page's text now, from the page as it is (undefined: not written yet). */
  render(current: string | undefined): string;
}

const readJson = <T>(root: string, file: string) =>
  JSON.parse(readFileSync(path.join(root, file), 'utf8')) as T;

/** The regions of a hand-written page, each rendered from the repository. */
function withRegions(file: string, regions: Record<string, () => string>): GeneratedPage {
  return {
    file,
    render(current) {
      if (current === undefined)
        throw new Error(`${file} is missing: it holds the regions ${Object.keys(regions).join(', ')}`);
      return Object.entries(regions).reduce(
        (text, [name, content]) => withRegion(text, name, content(), file),
        current,
      );
    },
  };
}

export function generatedPages(root: string): GeneratedPage[] {
  return [
    { file: 'docs/reference/armadactl.md', render: armadactlReference },
    { file: 'docs/reference/environment.md', render: environmentReference },
    withRegions('docs/reference/observability.md', { 'state-words': stateWordsTable }),
    withRegions('docs/contributing/testing.md', {
      'test-times': () =>
        testTimesTable(parseRuns(readFileSync(path.join(root, 'test/results/runs.jsonl'), 'utf8'))),
    }),
    withRegions('docs/explanation/performance.md', {
      'benchmark-figures': () =>
        benchmarkFigures(readJson<Results>(root, 'bench/results/latest.json'), '../../bench/results'),
      'benchmark-targets': () =>
        benchmarkTargets(readJson<Results>(root, 'bench/results/issue35/results.json')),
    }),
  ];
}
