#!/usr/bin/env bash
# npm start: the product on its embedded defaults.
#   - Temporal: a dev server with its UI (:8233), its SQLite file under .data/ so runs survive a
#     restart, unless TEMPORAL_ADDRESS names a server to use instead;
#   - Kubernetes: the current kubeconfig context when it answers, else the sandbox cluster (in
#     SANDBOX_DIR, default .sandbox, as deploy/sandbox/cluster.sh);
#   - the armada worker and the bridge (kubectl-applied custom resources become runs).
# Ctrl-C stops everything it started; the sandbox keeps its data for the next start.
set -euo pipefail
cd "$(dirname "${BASH_SOURCE[0]}")/.."
root=$PWD
# shellcheck source=lib.sh
source deploy/lib.sh

prepare_checkout
bash deploy/build.sh
# The workflows bundled by the build: the worker polls without running webpack first.
export ARMADA_WORKFLOW_BUNDLE="${ARMADA_WORKFLOW_BUNDLE:-$root/dist/workflow-bundle.js}"
export PATH="$root/.tools/bin:$PATH"

started=()
sandbox=false
stop_all() {
  # Once stopping, no signal ends it half way: a second Ctrl-C, or npm forwarding the first one
  # (npm start) during a `wait` below, would end this shell and leave the sandbox running.
  trap '' INT TERM PIPE
  trap - EXIT
  # `npm start 2>&1 | tee start.log`: Ctrl-C ends tee too, at once or a moment later, and a
  # write to its closed pipe (SIGPIPE, or EPIPE under set -e) ended this function, or the
  # sandbox's stop, before the sandbox stopped. What cannot be written is dropped.
  say "stopping..."
  local i said
  # Newest first: the worker stops before the server it talks to.
  for ((i = ${#started[@]} - 1; i >= 0; i--)); do
    kill "${started[i]}" 2>/dev/null || true
    wait "${started[i]}" 2>/dev/null || true
  done
  if $sandbox; then
    # Its lines once it is done: it writes nowhere that can close under it.
    said=$(bash deploy/sandbox/cluster.sh stop 2>&1) || true
    [[ -z $said ]] || say "$said"
  fi
}
say() { echo "$*" >&2 2>/dev/null || true; }
trap stop_all INT TERM EXIT

if [[ -z ${TEMPORAL_ADDRESS:-} ]]; then
  mkdir -p .data
  mapfile -t search_attributes < <(node -e '
    const { searchAttributes, registeredType } = require("./dist/workflows/search-attributes");
    for (const key of searchAttributes) console.log(`--search-attribute=${key.name}=${registeredType(key)}`);')
  temporal server start-dev --ip 127.0.0.1 --port 7233 --ui-port 8233 \
    --db-filename .data/temporal.db --log-level warn "${search_attributes[@]}" \
    --dynamic-config-value system.enableActivityEagerExecution=true &
  started+=($!)
  export TEMPORAL_ADDRESS=127.0.0.1:7233
  until temporal operator cluster health --address "$TEMPORAL_ADDRESS" >/dev/null 2>&1; do
    kill -0 "${started[-1]}" 2>/dev/null || { echo "the Temporal dev server exited; see its output above" >&2; exit 1; }
    sleep 0.5
  done
  ui="http://localhost:8233"
else
  ui="the UI of $TEMPORAL_ADDRESS"
fi

if ! kubectl get --raw /readyz --request-timeout=3s >/dev/null 2>&1; then
  # Before `up`: a start that fails half way stops what it started too (it left etcd and the
  # control plane running, so the next start found a sandbox that "already runs").
  sandbox=true
  bash deploy/sandbox/cluster.sh up
  KUBECONFIG="$(realpath -m "${SANDBOX_DIR:-$root/.sandbox}")/kubeconfig"
  export KUBECONFIG
fi

kubectl apply --server-side --force-conflicts -f deploy/crds/ >/dev/null
kubectl wait --for=condition=Established --timeout=60s -f deploy/crds/ >/dev/null
# The API server records who steers and who wrote each spec (docs/explanation/security.md, "Who may steer a run").
kubectl apply --server-side --force-conflicts -f deploy/admission/ >/dev/null

# Until the API server lists the custom resources: a CRD just made answers HTTP 429 "storage is
# (re)initializing" while its watch cache fills (kubectl retries that quietly), which the
# bridge would log a retry of for each kind. Bounded: the bridge retries whatever is left.
crd_resources=$(kubectl get -f deploy/crds/ -o jsonpath='{range .items[*]}{.spec.names.plural}.{.spec.group},{end}')
serving_by=$((SECONDS + 60))
until kubectl get "${crd_resources%,}" --all-namespaces --request-timeout=5s >/dev/null 2>&1; do
  ((SECONDS < serving_by)) || break
  sleep 0.5
done

node dist/worker/main.js &
started+=($!)
node dist/bridge/main.js &
started+=($!)

# The banner once the worker polls (its /readyz) and the bridge leads (its metrics), so their
# start-up lines come above it, not after it. Bounded; with ARMADA_METRICS_PORT set (the same
# port for both, or 0: any free port) their ports are unknown here and it comes at once.
if [[ -z ${ARMADA_METRICS_PORT:-} ]]; then
  settled_by=$((SECONDS + 60))
  until curl -fsS http://127.0.0.1:9465/readyz >/dev/null 2>&1 &&
    curl -fsS http://127.0.0.1:9464/metrics 2>/dev/null | grep '^armada_bridge_leader 1' >/dev/null; do
    ((SECONDS < settled_by)) || break
    kill -0 "${started[@]}" 2>/dev/null || break
    sleep 0.5
  done
fi

cat <<MSG

armada-temporal is running.
  Temporal UI:  $ui
  Kubernetes:   $(kubectl config current-context) (KUBECONFIG=${KUBECONFIG:-~/.kube/config})
  Worker:       task queue ${ARMADA_TASK_QUEUE:-armada}
  Bridge:       watching ${ARMADA_NAMESPACES:-every namespace}, metrics on port ${ARMADA_METRICS_PORT:-9464}

Try the examples (in another terminal):
  export KUBECONFIG=${KUBECONFIG:-~/.kube/config}
  export PATH=$root/.tools/bin:\$PATH    # helm, and a kubectl matching the sandbox
  kubectl apply -f examples/policy/ && kubectl apply -f examples/
  kubectl get amf,acg,act,dpl
  npx armadactl status demo          # or: npx armadactl status dpl/podinfo
Ctrl-C stops everything.
MSG
wait -n "${started[@]}"
