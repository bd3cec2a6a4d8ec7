import { readFileSync, writeFileSync } from 'node:fs';
import { createRequire } from 'node:module';
import path from 'node:path';
import { Script } from 'node:vm';

/**
 * armadactl's bundle loaded through V8's code cache. The bundle is 9 MB, most of it client-node's
 * models: compiling it was most of armadactl's start, and Node.js 20 keeps no compile
 * cache of its own. `writeCodeCache` (deploy/build.sh, after bundling) loads the bundle once and
 * saves what V8 compiled next to it (`<bundle>.cache`); `loadBundle` (bin/armadactl.js) hands
 * that to V8, which skips parsing and compiling what it holds. A cache V8 refuses (another
 * Node.js version) or a missing one only costs the compile.
 */
function evaluate(file: string, cachedData?: Buffer): { exports: unknown; script: Script } {
  const bundle = path.resolve(file);
  // CommonJS's own wrapper, on the bundle's first line: its line numbers stay the file's.
  const source = `(function (exports, require, module, __filename, __dirname) {${readFileSync(bundle, 'utf8')}\n})`;
  const script = new Script(source, { filename: bundle, cachedData });
  const module = { exports: {} };
  script.runInThisContext()(module.exports, createRequire(bundle), module, bundle, path.dirname(bundle));
  return { exports: module.exports, script };
}

const cacheOf = (bundle: string) => `${bundle}.cache`;

/** The bundle's exports, compiled from its code cache when V8 takes it. */
export function loadBundle(bundle: string): unknown {
  let cachedData: Buffer | undefined;
  try {
    cachedData = readFileSync(cacheOf(bundle));
  } catch {
    // Built without one: V8 compiles the bundle as a require would.
  }
  return evaluate(bundle, cachedData).exports;
}

/** Loads the bundle and saves V8's code for it, what its modules' loading compiled included. */
export function writeCodeCache(bundle: string): void {
  writeFileSync(cacheOf(bundle), evaluate(bundle).script.createCachedData());
}
