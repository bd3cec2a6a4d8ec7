#!/usr/bin/env bash
# The benchmark command (npm run bench [-- 1 3]). On a fresh clone it installs the npm
# dependencies and builds the local tools (deploy/lib.sh), compiles dist/, starts a sandbox
# cluster of its own (.sandbox/bench/, never the one `npm start` or `npm test` runs) when
# benchmark 2, 4, 6, 8, 9 or 10 is selected and a Temporal cluster on PostgreSQL for benchmark 6 (in
# .temporal-cluster/bench/), builds the peers (Flux, helmfile) when 4 or 10 is selected,
# runs the benchmarks (bench/main.ts starts its own Temporal dev server), stops everything it
# started, and leaves the figures in bench/results/latest.json. For benchmarks 1 to 4 it also
# builds the baseline build (deploy/build-at-ref.sh: BENCH_BASELINE_REF, default 0171bf6; none: no
# baseline), measured side by side with HEAD.
# Sizes and the selection come from BENCH_* variables: see docs/contributing/benchmarks.md.
set -euo pipefail
cd "$(dirname "${BASH_SOURCE[0]}")/.."
root=$PWD

# shellcheck source=../deploy/lib.sh
source deploy/lib.sh
prepare_checkout
bash deploy/build.sh

# Every process this run starts inherits this marker, so cleanup finds exactly them, even
# orphans of a crashed driver (the dev server, workers, bridges).
export ARMADA_BENCH_RUN="bench-$$-$RANDOM"
export SANDBOX_DIR="${BENCH_SANDBOX_DIR:-$root/.sandbox/bench}"

selection="${*:-${BENCH_ONLY:-1,2,3,4,5,6,7,8,9,10}}"
# selected N...: whether any of the benchmarks N is in the selection (numbers, not digits: 10 is not 1).
selected() {
  local n
  for n in "$@"; do [[ ",${selection//[[:space:]]/,}," == *",$n,"* ]] && return 0; done
  return 1
}
sandbox=false
selected 2 4 6 8 9 10 && sandbox=true
# Benchmarks 4 and 10 run Flux (4 also helmfile) beside us (BENCH_PEERS=0: 4 does not): their
# tools are built here only, never by npm test or npm start.
if selected 10 || { selected 4 && [[ ${BENCH_PEERS:-1} != 0 ]]; }; then bash deploy/tools/build.sh peers >/dev/null; fi
if selected 1 2 3 4; then
  if [[ ${BENCH_BASELINE_REF:-} != none ]]; then
    BENCH_BASELINE_DIR=$(bash deploy/build-at-ref.sh ${BENCH_BASELINE_REF:-})
    export BENCH_BASELINE_DIR
  fi
fi
# Benchmark 6: the Temporal cluster on PostgreSQL (deploy/temporal-cluster), fresh for the run.
cluster=false
selected 6 && cluster=true
export TEMPORAL_CLUSTER_DIR="$root/.temporal-cluster/bench"

cleanup() {
  if $sandbox; then SANDBOX_DIR="$SANDBOX_DIR" bash deploy/sandbox/cluster.sh down >/dev/null 2>&1 || true; fi
  if $cluster; then bash deploy/temporal-cluster/cluster.sh down >/dev/null 2>&1 || true; fi
  local pid
  for pid in $(grep -lsz "^ARMADA_BENCH_RUN=$ARMADA_BENCH_RUN$" /proc/[0-9]*/environ | cut -d/ -f3); do
    [[ $pid == "$$" ]] || kill -9 "$pid" 2>/dev/null || true
  done
}
trap cleanup EXIT

if $sandbox; then
  bash deploy/sandbox/cluster.sh down >/dev/null 2>&1 || true
  bash deploy/sandbox/cluster.sh up
  export KUBECONFIG="$SANDBOX_DIR/kubeconfig"
fi

if $cluster; then
  bash deploy/temporal-cluster/cluster.sh down >/dev/null 2>&1 || true
  rm -rf "$TEMPORAL_CLUSTER_DIR"
  bash deploy/temporal-cluster/cluster.sh up
  BENCH_CLUSTER_TEMPORAL=$(source "$TEMPORAL_CLUSTER_DIR/cluster.env" && echo "$TEMPORAL_ADDRESS")
  export BENCH_CLUSTER_TEMPORAL
fi

status=0
node dist/bench/main.js "$@" || status=$?
# The docs show the figures from bench/results/ (docs/explanation/performance.md): regenerated
# here, as `npm run docs` would, so the freshness test (test/unit/crds.test.ts) stays green.
if [[ $status == 0 ]]; then node dist/docs-tools/generate.js || status=$?; fi
exit "$status"
