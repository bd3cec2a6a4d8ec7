import { existsSync, mkdirSync, readFileSync, writeFileSync } from 'node:fs';
import path from 'node:path';
import { generatedPages } from './pages';

/** `npm run docs` (after api/generate-crds.ts): writes every generated page and region. */
function main(root: string): void {
  for (const page of generatedPages(root)) {
    const file = path.join(root, page.file);
    const current = existsSync(file) ? readFileSync(file, 'utf8') : undefined;
    const text = page.render(current);
    if (text === current) continue;
    mkdirSync(path.dirname(file), { recursive: true });
    writeFileSync(file, text);
    console.log(`wrote ${page.file}`);
  }
}

if (require.main === module) {
  try {
    main(process.cwd());
  } catch (err) {
    console.error(err instanceof Error ? err.message : err);
    process.exit(1);
  }
}
