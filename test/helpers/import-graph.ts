import { existsSync, readdirSync, readFileSync } from 'node:fs';
import path from 'node:path';

/** One import of a source file: what it names, and whether only types come through it. */
export interface ImportOf {
  specifier: string;
  typeOnly: boolean;
}

/** Block and line comments, so that an import quoted in a comment is not taken for one. */
const COMMENTS = /\/\*[\s\S]*?\*\/|(^|[^:\\])\/\/.*$/gm;
/** `import … from '…'` and `export … from '…'`, over lines; the clause holds names, braces, `*`, `as`, `type`. */
const FROM = /(?:^|[;}])\s*(import|export)\s+(type\s+)?([\w$*{}\s,]*?)\s*from\s*['"]([^'"]+)['"]/g;
/** `import '…'` (for its effects), `import('…')` and `require('…')`. */
const BARE =
  /(?:^|[;}])\s*import\s*['"]([^'"]+)['"]|\bimport\(\s*['"]([^'"]+)['"]\s*\)|\brequire\(\s*['"]([^'"]+)['"]\s*\)/g;

/** Whether an import or export clause brings in types only: `import type`, or every name marked `type`. */
function clauseIsTypeOnly(declaredType: boolean, clause: string): boolean {
  if (declaredType) return true;
  const braces = /^\{([\s\S]*)\}$/.exec(clause.trim());
  if (!braces) return false;
  const names = braces[1]
    .split(',')
    .map((n) => n.trim())
    .filter(Boolean);
  return names.length > 0 && names.every((n) => /^type\s/.test(n));
}

/** The imports of a TypeScript source, in order: a regex reading, enough for this repository's style. */
export function importsOf(source: string): ImportOf[] {
  const code = source.replace(COMMENTS, '$1');
  const found: { at: number; imp: ImportOf }[] = [];
  for (const m of code.matchAll(FROM))
    found.push({ at: m.index, imp: { specifier: m[4], typeOnly: clauseIsTypeOnly(Boolean(m[2]), m[3]) } });
  for (const m of code.matchAll(BARE))
    found.push({ at: m.index, imp: { specifier: (m[1] ?? m[2] ?? m[3])!, typeOnly: false } });
  return found.sort((a, b) => a.at - b.at).map((f) => f.imp);
}

/** An import between two files of the repository (paths relative to its root). */
export interface FileImport extends ImportOf {
  from: string;
  /** The file it resolves to; absent for a package or a Node built-in. */
  to?: string;
}

/** Every `.ts` file under `dirs` of `root`, as paths relative to it. */
export function sourceFiles(root: string, dirs: readonly string[]): string[] {
  const walk = (dir: string): string[] =>
    readdirSync(path.join(root, dir), { withFileTypes: true }).flatMap((e) => {
      const rel = path.posix.join(dir, e.name);
      if (e.isDirectory()) return walk(rel);
      return e.name.endsWith('.ts') ? [rel] : [];
    });
  return dirs.filter((d) => existsSync(path.join(root, d))).flatMap(walk);
}

/** The imports of `files`, relative ones resolved to a file (`x.ts` or `x/index.ts`). */
export function importGraph(root: string, files: readonly string[]): FileImport[] {
  return files.flatMap((from) =>
    importsOf(readFileSync(path.join(root, from), 'utf8')).map((imp) => {
      if (!imp.specifier.startsWith('.')) return { ...imp, from };
      const base = path.posix.join(path.posix.dirname(from), imp.specifier);
      const to = [`${base}.ts`, `${base}/index.ts`].find((f) => existsSync(path.join(root, f)));
      if (!to) throw new Error(`${from}: cannot resolve the import '${imp.specifier}'`);
      return { ...imp, from, to };
    }),
  );
}

/** The file cycles of a graph (its strongly connected components of more than one file, or a file importing itself). */
export function fileCycles(edges: readonly { from: string; to?: string }[]): string[][] {
  const next = new Map<string, string[]>();
  for (const { from, to } of edges) {
    if (!to) continue;
    next.set(from, [...(next.get(from) ?? []), to]);
  }
  // Tarjan's algorithm, iterative to need no deep recursion.
  const index = new Map<string, number>();
  const low = new Map<string, number>();
  const onStack = new Set<string>();
  const stack: string[] = [];
  const cycles: string[][] = [];
  let counter = 0;
  const nodes = [...new Set(edges.flatMap((e) => (e.to ? [e.from, e.to] : [e.from])))];
  for (const start of nodes) {
    if (index.has(start)) continue;
    const work: { node: string; child: number }[] = [{ node: start, child: 0 }];
    index.set(start, counter);
    low.set(start, counter++);
    stack.push(start);
    onStack.add(start);
    while (work.length) {
      const top = work[work.length - 1];
      const children = next.get(top.node) ?? [];
      if (top.child < children.length) {
        const child = children[top.child++];
        if (!index.has(child)) {
          index.set(child, counter);
          low.set(child, counter++);
          stack.push(child);
          onStack.add(child);
          work.push({ node: child, child: 0 });
        } else if (onStack.has(child)) low.set(top.node, Math.min(low.get(top.node)!, index.get(child)!));
        continue;
      }
      work.pop();
      if (work.length) {
        const parent = work[work.length - 1].node;
        low.set(parent, Math.min(low.get(parent)!, low.get(top.node)!));
      }
      if (low.get(top.node) !== index.get(top.node)) continue;
      const component: string[] = [];
      let member: string;
      do {
        member = stack.pop()!;
        onStack.delete(member);
        component.push(member);
      } while (member !== top.node);
      if (component.length > 1 || children.includes(top.node)) cycles.push(component.sort());
    }
  }
  return cycles;
}
