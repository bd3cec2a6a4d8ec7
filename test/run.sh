#!/usr/bin/env bash
# The test command (npm test). On a fresh machine it installs the npm dependencies, builds the
# local stack (npm run tools), starts a sandbox cluster of its own and, for the cluster lane
# (test/cluster), a Temporal cluster on PostgreSQL (installing PostgreSQL when it is missing), builds
# the container images (deploy/images, cached) and adds a real node to the sandbox, runs
# the whole Jest suite (which starts and stops its own Temporal dev server for every other file),
# stops everything it started, and ends with the line "N passed, N failed".
set -euo pipefail
cd "$(dirname "${BASH_SOURCE[0]}")/.."
root=$PWD

# What a full run (no Jest arguments) appends to test/results/runs.jsonl, which the "Test run
# times" table of docs/contributing/testing.md is generated from (npm run docs): "cold" when the
# tools cache or the images cache was empty at the start (so this run built them from scratch).
run_started=$(date +%s)
run_load=$(cut -d' ' -f1 /proc/loadavg)
cache_home=${XDG_CACHE_HOME:-$HOME/.cache}/armada-temporal
run_cold=false
for cache in "${ARMADA_TOOLS_CACHE:-$cache_home/tools}" "${ARMADA_IMAGES_CACHE:-$cache_home/images}"; do
  [[ -n $(ls -A "$cache" 2>/dev/null) ]] || run_cold=true
done

# shellcheck source=../deploy/lib.sh
source deploy/lib.sh
prepare_checkout

# The Temporal UI test drives Debian's Chromium headless through playwright-core (whose own
# browser download is never used): install the package when it is missing.
if [[ -z ${ARMADA_CHROMIUM:-} ]]; then
  command -v chromium >/dev/null || install_debian_packages chromium
  ARMADA_CHROMIUM=$(command -v chromium)
  export ARMADA_CHROMIUM
fi

# The Prometheus analysis tests run Debian's prometheus (their own process, on loopback).
install_prometheus

# podman, buildah, runc and mmdebstrap, for the container images (deploy/images/build.sh installs
# them too; here first, so no two apt-get runs overlap with the Temporal cluster's PostgreSQL).
install_container_tools

# Every process this run starts inherits this marker, so cleanup finds exactly them, even
# orphans of a crashed Jest, and never a dev server or sandbox that `npm start` runs.
export ARMADA_TEST_RUN="test-$$-$RANDOM"
export SANDBOX_DIR="$root/.sandbox/test"
results="$root/.test-results.json"
rm -f "$results"

# The cluster lane's Temporal server on PostgreSQL (deploy/temporal-cluster), fresh for each run.
export TEMPORAL_CLUSTER_DIR="$root/.temporal-cluster/test"

cleanup() {
  SANDBOX_DIR="$SANDBOX_DIR" bash deploy/sandbox/cluster.sh down >/dev/null 2>&1 || true
  bash deploy/temporal-cluster/cluster.sh down >/dev/null 2>&1 || true
  local pid
  for pid in $(grep -lsz "^ARMADA_TEST_RUN=$ARMADA_TEST_RUN$" /proc/[0-9]*/environ | cut -d/ -f3); do
    [[ $pid == "$$" ]] || kill -9 "$pid" 2>/dev/null || true
  done
}
trap cleanup EXIT

SANDBOX_DIR="$SANDBOX_DIR" bash deploy/sandbox/cluster.sh down >/dev/null 2>&1 || true
bash deploy/temporal-cluster/cluster.sh down >/dev/null 2>&1 || true
rm -rf "$TEMPORAL_CLUSTER_DIR"
mkdir -p "$TEMPORAL_CLUSTER_DIR"
# Both start at once: the Temporal cluster mostly waits on PostgreSQL and its own start.
# It binds every address, not only the loopback (TEMPORAL_BIND_IP, for this server alone): the
# in-cluster lane's pods (test/cluster/in-cluster) dial it at the real node's IP, the pod bridge's
# gateway on this machine (kube-apiserver binds 0.0.0.0 too); that bridge exists only once the
# sandbox is up, after this server starts.
TEMPORAL_BIND_IP=0.0.0.0 bash deploy/temporal-cluster/cluster.sh up >"$TEMPORAL_CLUSTER_DIR/up.log" 2>&1 &
temporal_cluster=$!
mkdir -p "$root/.sandbox"
# The cluster lane's upgrade drill runs a canary on the tree design (build N) while this build's
# workers take over: that build, once per checkout (deploy/build-at-ref.sh; about 20 s, its
# node_modules shared), meanwhile.
tree_build_log="$root/.sandbox/test-tree-build.log"
bash deploy/build-at-ref.sh >"$root/.sandbox/test-tree-build.dir" 2>"$tree_build_log" &
tree_build=$!
# The container images (deploy/images/build.sh: podman and its kin installed when missing, each
# image built once per machine from pinned sources and cached), meanwhile: the sandbox's real
# node imports two of them (pause, podinfo) and runs what must really run (test/e2e/real-node).
images_log="$root/.sandbox/test-images.log"
bash deploy/images/build.sh >"$images_log" 2>&1 || {
  cat "$images_log" >&2
  exit 1
}
export SANDBOX_REAL_NODE=1
bash deploy/sandbox/cluster.sh up
export KUBECONFIG="$SANDBOX_DIR/kubeconfig"
wait "$temporal_cluster" || {
  cat "$TEMPORAL_CLUSTER_DIR/up.log" >&2
  exit 1
}
ARMADA_TEST_CLUSTER_TEMPORAL=$(source "$TEMPORAL_CLUSTER_DIR/cluster.env" && echo "$TEMPORAL_ADDRESS")
export ARMADA_TEST_CLUSTER_TEMPORAL
wait "$tree_build" || {
  cat "$tree_build_log" >&2
  exit 1
}
ARMADA_TEST_TREE_BUILD=$(cat "$root/.sandbox/test-tree-build.dir")
export ARMADA_TEST_TREE_BUILD

# The compose lane (test/compose): Docker Compose and the images docker-compose.yml names, each
# built once and cached (the app image again from this tree, on podman's layer cache); the test
# itself builds and downloads nothing.
compose_log="$root/.sandbox/test-compose.log"
{ bash deploy/tools/build.sh compose && bash deploy/compose.sh images; } >"$compose_log" 2>&1 || {
  cat "$compose_log" >&2
  exit 1
}
# The in-cluster lane (test/cluster/in-cluster) runs that same app image on the real node: saved
# once here as a docker-archive, which the test imports into the node's containerd.
export ARMADA_TEST_APP_IMAGE="$root/.sandbox/test-app-image.tar"
rm -f "$ARMADA_TEST_APP_IMAGE"
podman save --format docker-archive -o "$ARMADA_TEST_APP_IMAGE" localhost/armada-temporal:local >>"$compose_log" 2>&1 || {
  cat "$compose_log" >&2
  exit 1
}

status=0
npx jest --ci --json --outputFile="$results" "$@" || status=$?

cleanup
trap - EXIT
full_run=$(($# == 0))
node -e '
  const [file, full, cold, started, load, commit, runs] = process.argv.slice(1);
  const r = require(file);
  const passed = r.numPassedTests;
  const failed = r.numFailedTests + r.numRuntimeErrorTestSuites;
  if (full === "1") {
    const run = {
      date: new Date(Number(started) * 1000).toISOString(),
      commit,
      cold: cold === "true",
      seconds: Math.round(Date.now() / 1000 - Number(started)),
      passed,
      failed,
      loadAverage: Number(load),
    };
    require("node:fs").appendFileSync(runs, JSON.stringify(run) + "\n");
  }
  console.log(`${passed} passed, ${failed} failed`);
' "$results" "$full_run" "$run_cold" "$run_started" "$run_load" "$(git rev-parse --short HEAD 2>/dev/null || echo unknown)" \
  "$root/test/results/runs.jsonl" || {
  echo "0 passed, 1 failed"
  exit 1
}
# The table of docs/contributing/testing.md shows the line just appended (npm run docs's generator;
# dist/ is the build global-setup made).
if ((full_run)); then node dist/docs-tools/generate.js >/dev/null || status=1; fi
exit "$status"
