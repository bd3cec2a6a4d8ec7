#!/usr/bin/env node
// armadactl runs from the compiled project (npm run build, or npm start, builds it).
const path = require('node:path');
const main = path.join(__dirname, '..', 'dist', 'cli', 'main.js');
try {
  require.resolve(main);
} catch {
  console.error(`armadactl: ${main} is missing; run \`npm run build\` first`);
  process.exit(2);
}
// On a terminal, `armadactl watch` redraws in place; piped, it prints a line per change.
const terminal = process.stdout.isTTY ? process.stdout : undefined;
require(main)
  .main(process.argv.slice(2), console.log, console.error, terminal)
  .then((code) => process.exit(code));
