#!/usr/bin/env bash
# The sandbox cluster: a real control plane (etcd, kube-apiserver, kube-controller-manager,
# kube-scheduler) plus kwok's fake nodes, run as local processes by `kwokctl --runtime binary`
# from the binaries in .tools/bin. Nothing is downloaded.
#
# kwok's default Stages make nodes Ready and pods Running and Ready (Job pods Succeeded); the
# Stages of deploy/sandbox/stages.yaml, given to the kwok controller as a second --config, end
# Helm test pods (Succeeded) and pods annotated armada.airshipit.org/sandbox-exit-code: "N"
# (exit N: Succeeded for 0, else Failed), so `helm test`, failing hooks and Jobs finish here.
# The kwok controller reads that file whenever it starts: `cluster.sh stop` and `up` apply an edit.
#
# `up` also installs the Gateway API's CRDs (standard channel, the version pinned in
# deploy/tools/versions.env, which deploy/tools/build.sh copies into .tools/bin/gateway-api.crds):
# canaries set HTTPRoute weights, which the API server stores; no gateway controller runs here.
#
#   cluster.sh up     create (or restart) the cluster, add the fake nodes, wait until it serves
#   cluster.sh stop   stop its processes but keep its data (the next `up` resumes it)
#   cluster.sh down   delete it and make sure none of its processes is left
#   cluster.sh status print whether it runs
#
# SANDBOX_REAL_NODE=1 adds, at `up`, a real node beside the fake ones (deploy/sandbox/node.sh: a
# kubelet on containerd and runc, tainted armada.airshipit.org/real-node=true:NoSchedule), for
# what must really run; `stop` and `down` stop it and clean up after it whenever it was started.
# Every cluster is created ready for it: kwok manages only its own nodes (annotated
# kwok.x-k8s.io/node=fake, as `kwokctl scale node` makes them), and the API server calls kubelets
# at their InternalIP with its kubelet client certificate (kwokctl's admin certificate, signed by
# the cluster's CA); its serving certificate names the real node's IP (chosen by node.sh before
# the cluster is created), where pods on that node reach it. None of this changes anything for
# the fake nodes.
#
# SANDBOX_DIR (default .sandbox) holds the kubeconfig and kwok's work dir; the test command
# uses its own dir so it never touches the cluster `npm start` runs.
set -euo pipefail

root=$(cd "$(dirname "${BASH_SOURCE[0]}")/../.." && pwd)
dir=$(realpath -m "${SANDBOX_DIR:-$root/.sandbox}")
name=${SANDBOX_NAME:-armada-$(basename "$dir" | tr -cs 'a-z0-9\n' '-' | sed 's/^-//')}
nodes=${SANDBOX_NODES:-3}
bin="$root/.tools/bin"
kubeconfig="$dir/kubeconfig"
kwokctl_log="$dir/kwokctl.log"
stages="$root/deploy/sandbox/stages.yaml"
kwokctl_config="$dir/kwokctl.yaml"
node_sh="$root/deploy/sandbox/node.sh"
gateway_crds="$bin/gateway-api.crds"
# The kwok controller holds a Lease per node and serves the pods of the nodes it holds. A
# restarted controller is a new holder: it waits for the stopped one's leases to run out
# (kwokctl's 200 s), and no pod starts meanwhile. As a kubelet's, 40 s.
node_lease_seconds=40

export KWOK_WORKDIR="$dir/kwok"
# For deploy/sandbox/node.sh (the real node), which works in the same folder.
export SANDBOX_DIR="$dir" SANDBOX_NAME="$name"
# kwokctl's own commands (e.g. `kwokctl kubectl`) would download kubectl; give it ours.
export KWOK_KUBECTL_BINARY="$bin/kubectl" KWOK_ETCDCTL_BINARY="$bin/etcdctl"

log() { printf 'sandbox: %s\n' "$*" >&2; }
die() {
  printf 'sandbox: error: %s\n' "$*" >&2
  exit 1
}
kubectl() { "$bin/kubectl" --kubeconfig "$kubeconfig" "$@"; }
# kwokctl logs JSON lines; keep them in a file and show them only when it fails.
kwokctl() {
  "$bin/kwokctl" "$@" >>"$kwokctl_log" 2>&1 || {
    tail -n 20 "$kwokctl_log" >&2
    die "kwokctl $1 $2 failed (full log: $kwokctl_log)"
  }
}

# PIDs of processes started from this sandbox's work dir (kwokctl passes it in every component's flags).
sandbox_pids() { pgrep -f -- "$KWOK_WORKDIR/clusters/$name/" || true; }

exists() { [[ -d $KWOK_WORKDIR/clusters/$name ]]; }

wait_ready() {
  local deadline=$((SECONDS + ${SANDBOX_TIMEOUT:-180}))
  until kubectl get --raw /readyz >/dev/null 2>&1; do
    ((SECONDS < deadline)) || die "kube-apiserver did not become ready; logs: $KWOK_WORKDIR/clusters/$name/logs"
    sleep 0.5
  done
  until [[ $(kubectl get nodes --no-headers 2>/dev/null | wc -l) -ge $nodes ]]; do
    ((SECONDS < deadline)) || die "fewer than $nodes nodes registered"
    sleep 0.5
  done
  # kwok's nodes; a real node (node.sh) waits for its own kubelet.
  kubectl wait --for=condition=Ready node -l type=kwok --timeout="$((deadline - SECONDS))s" >/dev/null ||
    die "nodes did not become Ready"
  # Pods in `default` need its service account, which the controller-manager creates.
  until kubectl get serviceaccount default -n default >/dev/null 2>&1; do
    ((SECONDS < deadline)) || die "the default service account was not created"
    sleep 0.5
  done
}

# A restarted kwok controller serves pods once it holds every node's Lease again: renewed since
# `since`. That takes up to the leases' own duration (the stopped controller's run out first):
# 40 s, or kwokctl's 200 s in a sandbox created before this setting. A fixed deadline of
# SANDBOX_TIMEOUT (180 s) gave up on those, leaving a start that could never succeed.
wait_leases_renewed_since() {
  local since=$1 lasting deadline
  lasting=$(kubectl get lease -n kube-node-lease -o jsonpath='{range .items[*]}{.spec.leaseDurationSeconds}{"\n"}{end}' |
    sort -n | tail -n 1)
  deadline=$((SECONDS + ${lasting:-$node_lease_seconds} + ${SANDBOX_TIMEOUT:-180}))
  log "waiting for the kwok controller to take the nodes over (once the stopped one's ${lasting:-?} s leases run out)"
  ((${lasting:-0} <= node_lease_seconds)) ||
    log "this sandbox's leases last ${lasting} s: \`bash deploy/sandbox/cluster.sh down\` and start again for ${node_lease_seconds} s"
  until (($(kubectl get lease -n kube-node-lease -o jsonpath='{range .items[*]}{.spec.renewTime}{"\n"}{end}' |
    awk -v since="$since" '$0 >= since' | wc -l) >= nodes)); do
    ((SECONDS < deadline)) || die "the kwok controller did not take the nodes' leases over"
    sleep 1
  done
}

# Server-side, as every CRD here is applied: a restarted sandbox takes them again unchanged.
install_gateway_api() {
  local crds
  kubectl apply --server-side --force-conflicts -f "$gateway_crds/" >/dev/null
  mapfile -t crds < <(kubectl get crd -o name | grep '\.gateway\.networking\.k8s\.io$')
  ((${#crds[@]})) || die "no Gateway API CRD was installed from $gateway_crds"
  kubectl wait --for=condition=Established --timeout=60s "${crds[@]}" >/dev/null ||
    die "the Gateway API CRDs did not become Established"
}

# kwokctl's configuration of the cluster's components (kwokctl --config at create). Through the
# file rather than --extra-args: kwokctl v0.8.0 indexes the patches of a second component wrongly
# when a later --extra-args names it again.
write_kwokctl_config() {
  local pki="$KWOK_WORKDIR/clusters/$name/pki" node_ip
  # Pods on the real node reach the API server (which binds 0.0.0.0) at the node's IP, the pod
  # bridge's gateway: no kube-proxy runs, so the kubernetes Service's ClusterIP leads nowhere.
  # Their clients verify the serving certificate, so it names that address too; node.sh
  # chooses it now (and keeps it in its node.env for its own `up`).
  node_ip=$(bash "$node_sh" address)
  cat >"$kwokctl_config" <<EOF_CONFIG
apiVersion: config.kwok.x-k8s.io/v1alpha1
kind: KwokctlConfiguration
options:
  kubeApiserverCertSANs: ["$node_ip"]
componentsPatches:
  - name: kwok-controller
    extraArgs:
      - { key: config, value: "$stages" }
      - { key: node-lease-duration-seconds, value: "$node_lease_seconds" }
      # kwokctl's binary runtime passes --manage-all-nodes=true, which took a real kubelet's node
      # over too (rewrote its InternalIP, faked its pods' status).
      - { key: manage-all-nodes, value: "false", override: true }
      - { key: manage-nodes-with-annotation-selector, value: kwok.x-k8s.io/node=fake }
  - name: kube-apiserver
    extraArgs:
      # A real node's name is not in any DNS; its InternalIP is where its kubelet serves.
      - { key: kubelet-preferred-address-types, value: "InternalIP,Hostname,InternalDNS,ExternalDNS,ExternalIP" }
      - { key: kubelet-client-certificate, value: "$pki/admin.crt" }
      - { key: kubelet-client-key, value: "$pki/admin.key" }
      # Besides the default set: a namespace's scheduler.alpha.kubernetes.io/node-selector and
      # defaultTolerations annotations apply to its pods. The in-cluster lane
      # (test/cluster/in-cluster.test.ts) puts the example charts' pods, which tolerate only
      # kwok's taint, on the real node this way; namespaces without them are unchanged.
      - { key: enable-admission-plugins, value: "PodNodeSelector,PodTolerationRestriction" }
EOF_CONFIG
}

up() {
  for tool in kwokctl kwok etcd kube-apiserver kube-controller-manager kube-scheduler kubectl; do
    [[ -x $bin/$tool ]] || die "$bin/$tool is missing: run \`npm run tools\` first"
  done
  [[ -d $gateway_crds ]] || die "$gateway_crds is missing: run \`npm run tools\` first"
  mkdir -p "$dir"
  if exists && [[ -n $(sandbox_pids) ]] && kubectl get --raw /readyz >/dev/null 2>&1; then
    log "$name already runs"
  elif exists; then
    log "restarting $name"
    restarted_at=$(date -u +%Y-%m-%dT%H:%M:%S)
    grep -qF -- "$stages" "$KWOK_WORKDIR/clusters/$name/kwok.yaml" ||
      log "warning: $name was created without $stages (test pods never end); \`cluster.sh down\` and \`up\` recreate it"
    kwokctl start cluster --name "$name"
  else
    write_kwokctl_config
    log "creating $name (kwokctl --runtime binary)"
    kwokctl --config "$kwokctl_config" create cluster --name "$name" --runtime binary \
      --kubeconfig "$kubeconfig" \
      --etcd-binary "$bin/etcd" \
      --kube-apiserver-binary "$bin/kube-apiserver" \
      --kube-controller-manager-binary "$bin/kube-controller-manager" \
      --kube-scheduler-binary "$bin/kube-scheduler" \
      --kwok-controller-binary "$bin/kwok" \
      --disable-qps-limits \
      --wait 0s
  fi
  "$bin/kwokctl" get kubeconfig --name "$name" >"$kubeconfig" 2>>"$kwokctl_log"
  if [[ $(kubectl get nodes --no-headers 2>/dev/null | wc -l) -lt $nodes ]]; then
    kwokctl scale node --name "$name" --replicas "$nodes"
  fi
  wait_ready
  [[ -z ${restarted_at:-} ]] || wait_leases_renewed_since "$restarted_at"
  install_gateway_api
  if [[ ${SANDBOX_REAL_NODE:-} == 1 ]]; then
    grep -qF -- kubelet-client-certificate "$KWOK_WORKDIR/clusters/$name/kwok.yaml" ||
      die "$name was created before the real node existed: \`cluster.sh down\` and \`up\` recreate it"
    grep -qF -- PodTolerationRestriction "$KWOK_WORKDIR/clusters/$name/kwok.yaml" ||
      die "$name was created before pods on the real node reached the API server: \`cluster.sh down\` and \`up\` recreate it"
    bash "$node_sh" up
  fi
  log "ready: $(kubectl get nodes --no-headers | wc -l) nodes; KUBECONFIG=$kubeconfig"
}

stop() {
  # The real node first, while the API server still answers it.
  bash "$node_sh" stop
  exists && kwokctl stop cluster --name "$name"
  log "$name stopped (data kept in $KWOK_WORKDIR)"
}

down() {
  bash "$node_sh" down
  if exists; then
    "$bin/kwokctl" delete cluster --name "$name" >>"$kwokctl_log" 2>&1 || log "kwokctl delete failed; stopping processes directly"
  fi
  local pids
  pids=$(sandbox_pids)
  if [[ -n $pids ]]; then
    # shellcheck disable=SC2086
    kill $pids 2>/dev/null || true
    for _ in $(seq 50); do
      [[ -z $(sandbox_pids) ]] && break
      sleep 0.1
    done
    pids=$(sandbox_pids)
    # shellcheck disable=SC2086
    [[ -z $pids ]] || kill -9 $pids 2>/dev/null || true
  fi
  rm -rf "$KWOK_WORKDIR/clusters/$name" "$kubeconfig" "$kwokctl_log" "$kwokctl_config"
  log "$name removed"
}

status() {
  if exists && kubectl get --raw /readyz >/dev/null 2>&1; then
    echo "$name runs; KUBECONFIG=$kubeconfig"
    # node.env alone: the address chosen at create; kubelet.yaml: the node was started.
    [[ ! -f $dir/node/kubelet.yaml ]] || bash "$node_sh" status || true
  else
    echo "$name is not running"
    return 1
  fi
}

case ${1:-} in
  up | stop | down | status) "$1" ;;
  *) die "usage: cluster.sh up|stop|down|status" ;;
esac
