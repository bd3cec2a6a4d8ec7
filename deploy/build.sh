#!/usr/bin/env bash
# npm run build (and what npm run worker, bridge, crds, codec-server and start run first): compiles
# dist/ with tsc, bundles the workflows into dist/workflow-bundle.js (worker/bundle.ts) and
# armadactl into dist/armadactl.js, only when a file of the sources is newer than the last build.
# A worker given the bundle (ARMADA_WORKFLOW_BUNDLE) polls without running webpack first;
# armadactl's bundle starts about twice as fast as dist/cli (cli/bundle.ts).
set -euo pipefail
cd "$(dirname "${BASH_SOURCE[0]}")/.."
stamp=dist/.built
mkdir -p dist
# One build at a time in a checkout (a test run and a benchmark may start together).
exec 9>dist/.build.lock
flock 9
sources=(api core workflows activities kube runs worker bridge cli test bench docs-tools tsconfig.json package-lock.json)
if [[ -f $stamp && -f dist/workflow-bundle.js && -z $(find "${sources[@]}" -newer "$stamp" -print -quit) ]]; then
  exit 0
fi
# Stamped before compiling: a source saved during the build makes the next one run again.
touch "$stamp.next"
node node_modules/typescript/bin/tsc -p tsconfig.json
node dist/worker/bundle.js dist/workflow-bundle.js
node dist/cli/bundle.js dist/armadactl.js
mv "$stamp.next" "$stamp"
