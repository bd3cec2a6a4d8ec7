import { mkdirSync, mkdtempSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import path from 'node:path';
import { brokenLinks, brokenSourceReferences, pagesOf } from '../../docs-tools/links';

const root = path.resolve(__dirname, '../..');

describe('brokenLinks', () => {
  it('names a missing file and a missing anchor, and takes headings, <a id> and directories', () => {
    const dir = mkdtempSync(path.join(tmpdir(), 'doc-links-'));
    mkdirSync(path.join(dir, 'docs/how-to'), { recursive: true });
    mkdirSync(path.join(dir, 'test'));
    const page = (file: string, text: string) => writeFileSync(path.join(dir, file), text);
    page('README.md', '# Top\n\n[ok](docs/how-to/a.md#run-control) [dir](docs/) [gone](docs/gone.md)\n');
    page(
      'docs/how-to/a.md',
      '## Run control\n\n<a id="kept"></a>\n[up](../../README.md#top) [here](#kept)\n[bad](#nope)\n',
    );
    expect(brokenLinks(dir)).toEqual([
      'README.md:3: docs/gone.md (no file docs/gone.md)',
      'docs/how-to/a.md:5: #nope (no heading or anchor #nope in docs/how-to/a.md)',
    ]);
  });
});

describe('the docs’ links', () => {
  it('checks README.md, bench/README.md and every page under docs/', () => {
    const pages = pagesOf(root);
    expect(pages).toEqual(
      expect.arrayContaining(['README.md', 'bench/README.md', 'docs/airship-compatibility.md']),
    );
  });

  it('every relative link and #anchor of README.md and docs/ resolves', () => {
    expect(brokenLinks(root)).toEqual([]);
  });

  it('every docs page a product source names (errors pointing into the docs) exists', () => {
    expect(brokenSourceReferences(root)).toEqual([]);
  });
});
