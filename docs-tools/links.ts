import { existsSync, readdirSync, readFileSync, statSync } from 'node:fs';
import path from 'node:path';
import { anchorsOf, linksOf, localTarget } from './markdown';

/**
 * The link check of the docs: every relative link and anchor of the pages resolves, and every
 * page a product source names (an error pointing into the docs) exists.
 */

/** The files under `dir` (relative to root, searched recursively) whose names end in `suffix`. */
export function filesUnder(root: string, dir: string, suffix: string): string[] {
  return readdirSync(path.join(root, dir), { withFileTypes: true }).flatMap((entry) => {
    const file = path.posix.join(dir, entry.name);
    if (entry.isDirectory()) return filesUnder(root, file, suffix);
    return entry.name.endsWith(suffix) ? [file] : [];
  });
}

/** The pages checked, relative to the repository: README.md, docs/**, and the .md files of bench/, bench/results/, test/, test/results/. */
export function pagesOf(root: string): string[] {
  const pagesIn = (folder: string) =>
    existsSync(path.join(root, folder))
      ? readdirSync(path.join(root, folder))
          .filter((name) => name.endsWith('.md'))
          .map((name) => `${folder}/${name}`)
      : [];
  return [
    'README.md',
    ...filesUnder(root, 'docs', '.md'),
    ...['bench', 'bench/results', 'test', 'test/results'].flatMap(pagesIn),
  ].filter((page) => existsSync(path.join(root, page)));
}

/** The anchors of a page, read once. */
function anchorCache(root: string): (page: string) => Set<string> {
  const cache = new Map<string, Set<string>>();
  return (page) => {
    let anchors = cache.get(page);
    if (!anchors) {
      anchors = anchorsOf(readFileSync(path.join(root, page), 'utf8'));
      cache.set(page, anchors);
    }
    return anchors;
  };
}

/**
 * Why `target`, named from `from` (a page, relative to root), does not resolve, or undefined
 * when it does. A path starting with / is from the repository's root.
 */
function brokenBecause(root: string, from: string, target: string, anchorsOf: (page: string) => Set<string>) {
  const local = localTarget(target);
  if (!local) return undefined;
  const file = !local.file
    ? from
    : local.file.startsWith('/')
      ? local.file.slice(1)
      : path.posix.normalize(path.posix.join(path.posix.dirname(from), local.file));
  const full = path.join(root, file);
  if (!existsSync(full)) return `no file ${file}`;
  if (!local.anchor) return undefined;
  if (statSync(full).isDirectory() || !file.endsWith('.md')) return undefined;
  return anchorsOf(file).has(local.anchor) ? undefined : `no heading or anchor #${local.anchor} in ${file}`;
}

/** Each link of the pages that does not resolve: `page:line: target (why)`. */
export function brokenLinks(root: string, pages = pagesOf(root)): string[] {
  const anchors = anchorCache(root);
  return pages.flatMap((page) =>
    linksOf(readFileSync(path.join(root, page), 'utf8')).flatMap(({ target, line }) => {
      const why = brokenBecause(root, page, target, anchors);
      return why ? [`${page}:${line}: ${target} (${why})`] : [];
    }),
  );
}

/** The product's folders, whose strings may name a page. */
export const PRODUCT_FOLDERS = [
  'api',
  'core',
  'workflows',
  'activities',
  'kube',
  'runs',
  'worker',
  'bridge',
  'cli',
];

/** Each docs page (with its anchor) a product source names that does not exist: `file:line: ref (why)`. */
export function brokenSourceReferences(root: string): string[] {
  const anchors = anchorCache(root);
  return PRODUCT_FOLDERS.flatMap((dir) => filesUnder(root, dir, '.ts')).flatMap((file) =>
    readFileSync(path.join(root, file), 'utf8')
      .split('\n')
      .flatMap((text, i) =>
        [...text.matchAll(/\bdocs\/[\w./-]*\.md(#[\w-]+)?/g)].flatMap(([reference]) => {
          const why = brokenBecause(root, '', `/${reference}`, anchors);
          return why ? [`${file}:${i + 1}: ${reference} (${why})`] : [];
        }),
      ),
  );
}
