#!/usr/bin/env node
// armadactl runs from the compiled project (npm run build, or npm start, builds it): dist/cli
// bundled into one file (deploy/build.sh), which Node.js loads much faster than the modules,
// compiled from V8's code cache of it (cli/code-cache.ts).
const { existsSync } = require('node:fs');
const path = require('node:path');
const dist = path.join(__dirname, '..', 'dist');
const main = path.join(dist, 'armadactl.js');
if (!existsSync(main)) {
  console.error(`armadactl: ${main} is missing; run \`npm run build\` first`);
  process.exit(2);
}
// On a terminal, `armadactl watch` redraws in place; piped, it prints a line per change.
const terminal = process.stdout.isTTY ? process.stdout : undefined;
require(path.join(dist, 'cli', 'code-cache.js'))
  .loadBundle(main)
  .main(process.argv.slice(2), console.log, console.error, terminal)
  .then((code) => process.exit(code));
