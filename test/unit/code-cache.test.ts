import { mkdtemp, readFile, rm, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import path from 'node:path';
import { loadBundle, writeCodeCache } from '../../cli/code-cache';

describe("armadactl's bundle through V8's code cache (cli/code-cache.ts)", () => {
  let dir: string;
  let bundle: string;
  beforeEach(async () => {
    dir = await mkdtemp(path.join(tmpdir(), 'armada-code-cache-'));
    bundle = path.join(dir, 'armadactl.js');
    // A CommonJS bundle as esbuild writes one: module.exports, require of a builtin, __dirname.
    await writeFile(
      bundle,
      `"use strict";\nconst path = require('node:path');\nmodule.exports = { where: () => path.basename(__dirname), file: __filename, twice: (n) => n * 2 };\n`,
    );
  });
  afterEach(() => rm(dir, { recursive: true, force: true }));

  const load = () => loadBundle(bundle) as { where(): string; file: string; twice(n: number): number };

  it('saves a cache beside the bundle, and the bundle loads from it as a require would', async () => {
    writeCodeCache(bundle);
    expect((await readFile(`${bundle}.cache`)).length).toBeGreaterThan(0);
    const loaded = load();
    expect(loaded.twice(21)).toBe(42);
    expect(loaded.where()).toBe(path.basename(dir));
    expect(loaded.file).toBe(bundle);
  });

  it('loads without a cache, and with one V8 refuses', async () => {
    expect(load().twice(2)).toBe(4);
    await writeFile(`${bundle}.cache`, 'not a code cache');
    expect(load().twice(3)).toBe(6);
  });

  it('takes a path relative to the working directory, as deploy/build.sh gives it', () => {
    const relative = path.relative(process.cwd(), bundle);
    writeCodeCache(relative);
    expect((loadBundle(relative) as { file: string }).file).toBe(bundle);
  });

  it("keeps the bundle's line numbers in stack traces", async () => {
    await writeFile(bundle, `"use strict";\n\nmodule.exports = { fail: () => { throw new Error('x'); } };\n`);
    writeCodeCache(bundle);
    const { fail } = loadBundle(bundle) as { fail(): void };
    expect(() => fail()).toThrow(expect.objectContaining({ stack: expect.stringContaining(`${bundle}:3:`) }));
  });
});
