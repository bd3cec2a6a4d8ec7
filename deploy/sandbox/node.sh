#!/usr/bin/env bash
# The sandbox's real node: a kubelet (built from the sandbox's Kubernetes module) on containerd 2.x
# with Debian's runc and a CNI bridge, beside kwok's fake nodes, for what must really run. Opt-in:
# deploy/sandbox/cluster.sh runs this when SANDBOX_REAL_NODE=1 (after the control plane is up,
# before it is stopped or deleted); nothing else starts it.
#
#   node.sh up      start containerd and the kubelet (or restart them), import the images, wait
#                   until the node is Ready; prints `real node <name> Ready (<ip>)`
#   node.sh stop    stop the node's pods (their containers, network namespaces and mounts), the
#                   kubelet, the shims and containerd, and remove the bridge; keep the images and
#                   config (the next `up` resumes it; the kubelet starts the pods again)
#   node.sh down    delete the node's pods through the API server first (the kubelet stops their
#                   sandboxes: CNI releases their addresses and interfaces), then as `stop`, then
#                   delete the Node object and the node's folder
#   node.sh status  print whether it runs
#   node.sh address choose the node's settings (kept in node.env) and print its IP: cluster.sh
#                   asks before it creates the cluster, to put it in the API server's certificate
#
# The node registers with the taint armada.airshipit.org/real-node=true:NoSchedule and the label
# armada.airshipit.org/real-node=true: only pods that tolerate the taint land on it (kwok's nodes
# carry no taint, so every other pod of the suite stays on them). kwok manages only its own nodes
# (cluster.sh: --manage-nodes-with-annotation-selector=kwok.x-k8s.io/node=fake).
#
# Pod network: a bridge (armada-<hash>) with host-local addresses from 10.244.<n>.0/24 (<n> from
# the sandbox's folder, skipping subnets the host already routes), no masquerade and no default
# route in the pods: pods reach the host and each other, nothing else. The bridge's gateway
# address is the node's InternalIP, where the kubelet serves (the API server calls it there with
# its kubelet client certificate; health on 127.0.0.1).
#
# Everything lives in $SANDBOX_DIR/node: containerd's root, state and socket, runc's state, the
# pods' network namespaces, the kubelet's root dir and the pods' logs, and logs of both daemons
# (containerd.log, kubelet.log).
#
# Images: the OCI or docker archives in SANDBOX_NODE_IMAGES (whitespace-separated), by default
# the pause and podinfo archives deploy/images/build.sh caches, are imported at every `up`
# (`ctr -n k8s.io images import`); pods use them with imagePullPolicy: Never (or IfNotPresent).
# The sandbox (pause) image is SANDBOX_NODE_PAUSE_IMAGE, by default registry.k8s.io/pause:$PAUSE_VERSION.
set -euo pipefail

root=$(cd "$(dirname "${BASH_SOURCE[0]}")/../.." && pwd)
# shellcheck source=../tools/versions.env
source "$root/deploy/tools/versions.env"
dir=$(realpath -m "${SANDBOX_DIR:-$root/.sandbox}")
name=${SANDBOX_NAME:-armada-$(basename "$dir" | tr -cs 'a-z0-9\n' '-' | sed 's/^-//')}
node_name=${SANDBOX_REAL_NODE_NAME:-real-node}
bin="$root/.tools/bin"
templates="$root/deploy/sandbox/node"
node="$dir/node"
kubeconfig="$dir/kubeconfig"
pki="${KWOK_WORKDIR:-$dir/kwok}/clusters/$name/pki"
taint=armada.airshipit.org/real-node
images_cache="${ARMADA_IMAGES_CACHE:-${XDG_CACHE_HOME:-$HOME/.cache}/armada-temporal/images}"
pause_image=${SANDBOX_NODE_PAUSE_IMAGE:-registry.k8s.io/pause:${PAUSE_VERSION:-3.10.2}}
timeout=${SANDBOX_TIMEOUT:-180}

log() { printf 'sandbox node: %s\n' "$*" >&2; }
die() {
  printf 'sandbox node: error: %s\n' "$*" >&2
  exit 1
}
kubectl() { "$bin/kubectl" --kubeconfig "$kubeconfig" "$@"; }
ctr() { "$bin/ctr" --address "$node/containerd/containerd.sock" --namespace k8s.io "$@"; }
# Processes of this node: containerd and the kubelet name the node's folder in their flags, the
# shims its containerd socket. (Containers are children of the shims, stopped through containerd.)
node_pids() { pgrep -f -- "$node/" || true; }
running() { [[ -f $node/$1.pid ]] && kill -0 "$(cat "$node/$1.pid")" 2>/dev/null; }

# A free TCP port on the host, for the kubelet's ports (kept in node.env across restarts).
free_port() { node -e 'const s=require("net").createServer().listen(0,()=>{console.log(s.address().port);s.close()})'; }

# Settings chosen at the first `up` and kept in $node/node.env.
settings() {
  if [[ -f $node/node.env ]]; then
    # shellcheck source=/dev/null
    source "$node/node.env"
    return
  fi
  local hash n subnet routes
  hash=$(cksum <<<"$dir" | cut -d' ' -f1)
  BRIDGE="armada-$(printf '%06x' $((hash % 16777216)))"
  for ((i = 0; i < 200; i++)); do
    n=$(((hash + i) % 200 + 20))
    subnet="10.244.$n.0/24"
    # A subnet the host routes elsewhere (another sandbox's bridge, a VPN, ...) is skipped.
    routes=$(ip route show to match "10.244.$n.1")
    grep -qv '^default' <<<"$routes" || break
    subnet=
  done
  [[ -n $subnet ]] || die "no free /24 in 10.244.0.0/16 for the pod network (ip route)"
  SUBNET=$subnet
  NODE_IP="10.244.$n.1"
  KUBELET_PORT=$(free_port)
  HEALTHZ_PORT=$(free_port)
  mkdir -p "$node"
  printf '%s=%q\n' BRIDGE "$BRIDGE" SUBNET "$SUBNET" NODE_IP "$NODE_IP" KUBELET_PORT "$KUBELET_PORT" \
    HEALTHZ_PORT "$HEALTHZ_PORT" >"$node/node.env"
}

render() {
  local template=$1 out=$2 shim_dir="$node/s"
  # containerd refuses shim socket folders longer than 42 characters; a long checkout path
  # keeps containerd's default (/run/containerd/s, where socket names hash the address).
  ((${#shim_dir} <= 42)) || shim_dir=
  sed -e "s#@NODE@#$node#g" -e "s#@PAUSE_IMAGE@#$pause_image#g" -e "s#@RUNC@#$(command -v runc)#g" \
    -e "s#@CNI_BIN@#$(readlink -f "$bin/cni")#g" -e "s#@SHIM_SOCKET_DIR@#$shim_dir#g" \
    -e "s#@BRIDGE@#$BRIDGE#g" -e "s#@SUBNET@#$SUBNET#g" -e "s#@GATEWAY@#$NODE_IP#g" \
    -e "s#@NODE_IP@#$NODE_IP#g" -e "s#@KUBELET_PORT@#$KUBELET_PORT#g" \
    -e "s#@HEALTHZ_PORT@#$HEALTHZ_PORT#g" -e "s#@CA_FILE@#$pki/ca.crt#g" "$template" >"$out"
}

# Debian's runc (Debian has no containerd 2.x; the one in .tools/bin is built from Go modules).
need_runc() {
  command -v runc >/dev/null && return 0
  log "installing Debian's runc"
  # shellcheck source=../lib.sh
  source "$root/deploy/lib.sh"
  install_debian_packages --no-install-recommends runc
}

image_archives() {
  if [[ -n ${SANDBOX_NODE_IMAGES:-} ]]; then
    # shellcheck disable=SC2086
    printf '%s\n' $SANDBOX_NODE_IMAGES
    return
  fi
  local image version
  for image in pause podinfo; do
    case $image in
      pause) version=${PAUSE_VERSION:-} ;;
      podinfo) version=${PODINFO_VERSION:-} ;;
    esac
    echo "$images_cache/$image-$version-r${IMAGES_RECIPE_REVISION:-1}.tar"
  done
}

# $1 what, $2 deadline (SECONDS), $3... a check.
wait_for() {
  local what=$1 deadline=$2
  shift 2
  until "$@" >/dev/null 2>&1; do
    ((SECONDS < deadline)) || die "$what (logs: $node/containerd.log, $node/kubelet.log)"
    sleep 0.2
  done
}

start_daemon() {
  local daemon=$1
  shift
  # Its own session, so it outlives this script and no terminal's signal reaches it.
  setsid "$@" >>"$node/$daemon.log" 2>&1 </dev/null &
  echo $! >"$node/$daemon.pid"
}

up() {
  local tool archive deadline=$((SECONDS + timeout)) started=$SECONDS
  for tool in kubelet containerd containerd-shim-runc-v2 ctr cni/bridge cni/host-local cni/loopback; do
    [[ -x $bin/$tool ]] || die "$bin/$tool is missing: run \`npm run tools\` first"
  done
  [[ -f $pki/ca.crt && -f $kubeconfig ]] || die "no sandbox cluster in $dir: \`cluster.sh up\` starts the node"
  need_runc
  mapfile -t archives < <(image_archives)
  for archive in "${archives[@]}"; do
    [[ -f $archive ]] || die "image archive $archive is missing: build it with \`bash deploy/images/build.sh\` or name archives in SANDBOX_NODE_IMAGES"
  done
  settings
  mkdir -p "$node/containerd/certs.d" "$node/cni/net.d" "$node/cni/ipam" "$node/kubelet" "$node/pod-logs"
  render "$templates/containerd.toml" "$node/containerd.toml"
  render "$templates/cni.conflist" "$node/cni/net.d/10-armada-sandbox.conflist"
  render "$templates/kubelet.yaml" "$node/kubelet.yaml"

  # The bridge exists before the first pod: its gateway address is the node's IP, which the
  # kubelet must find on an interface when it starts (the bridge plugin takes the bridge as is).
  if ! ip link show "$BRIDGE" >/dev/null 2>&1; then
    ip link add "$BRIDGE" type bridge
    ip addr add "$NODE_IP/${SUBNET#*/}" dev "$BRIDGE"
  fi
  ip link set "$BRIDGE" up

  if ! running containerd; then
    start_daemon containerd env PATH="$bin:$PATH" "$bin/containerd" --config "$node/containerd.toml"
  fi
  wait_for "containerd did not answer on $node/containerd/containerd.sock" "$deadline" ctr version
  for archive in "${archives[@]}"; do
    ctr images import "$archive" >>"$node/images.log" 2>&1 || die "ctr images import $archive failed (see $node/images.log)"
  done
  # Read whole before grep: `grep -q` stops at the first match, and under pipefail the writer's
  # SIGPIPE would fail the check that just succeeded.
  local imported
  imported=$(ctr images ls -q 2>/dev/null)
  grep -qxF -- "$pause_image" <<<"$imported" ||
    die "the sandbox image $pause_image is not among the imported images ($(tr '\n' ' ' <<<"$imported"))"

  if ! running kubelet; then
    start_daemon kubelet "$bin/kubelet" --config "$node/kubelet.yaml" --kubeconfig "$kubeconfig" \
      --root-dir "$node/kubelet" --cert-dir "$node/kubelet/pki" --hostname-override "$node_name" \
      --node-ip "$NODE_IP" --node-labels "$taint=true"
  fi
  wait_for "the kubelet did not register node $node_name" "$deadline" kubectl get node "$node_name"
  kubectl wait --for=condition=Ready "node/$node_name" --timeout="$((deadline > SECONDS ? deadline - SECONDS : 1))s" >/dev/null ||
    die "node $node_name did not become Ready (logs: $node/kubelet.log)"
  log "real node $node_name Ready ($NODE_IP, pods in $SUBNET on $BRIDGE) in $((SECONDS - started)) s; taint $taint=true:NoSchedule"
}

# Kills the node's containers through containerd (no CRI client here: the kubelet is the one),
# then the kubelet's and containerd's processes, then what they leave: mounts under the node's
# folder (pod volumes, rootfs, shm, network namespaces: the veths go with their namespace), the
# bridge, and the address reservations (every pod is gone, so every reservation is void).
teardown() {
  local pid t deadline
  stop_pid kubelet
  if running containerd && ctr version >/dev/null 2>&1; then
    for t in $(ctr tasks ls -q 2>/dev/null); do ctr tasks kill --signal SIGTERM --all "$t" >/dev/null 2>&1 || true; done
    deadline=$((SECONDS + 10))
    while [[ -n $(ctr tasks ls 2>/dev/null | awk 'NR > 1 && $3 != "STOPPED"') ]] && ((SECONDS < deadline)); do sleep 0.2; done
    for t in $(ctr tasks ls -q 2>/dev/null); do
      ctr tasks kill --signal SIGKILL --all "$t" >/dev/null 2>&1 || true
      ctr tasks delete --force "$t" >/dev/null 2>&1 || true
    done
  fi
  stop_pid containerd
  # Shims whose containers are gone exit by themselves; what is left of this node's goes now.
  for pid in $(node_pids); do kill "$pid" 2>/dev/null || true; done
  deadline=$((SECONDS + 5))
  while [[ -n $(node_pids) ]] && ((SECONDS < deadline)); do sleep 0.1; done
  for pid in $(node_pids); do kill -9 "$pid" 2>/dev/null || true; done
  unmount_all
  # The namespaces' mount points, now empty files (containerd makes new ones for new sandboxes).
  rm -rf "$node/containerd/state/io.containerd.grpc.v1.cri/netns"
  [[ -z ${BRIDGE:-} ]] || ip link delete "$BRIDGE" 2>/dev/null || true
  rm -rf "$node/cni/ipam"
}

# SIGTERM, then SIGKILL after 10 s.
stop_pid() {
  local pid
  running "$1" || return 0
  pid=$(cat "$node/$1.pid")
  kill "$pid" 2>/dev/null || true
  for _ in $(seq 100); do
    kill -0 "$pid" 2>/dev/null || break
    sleep 0.1
  done
  kill -9 "$pid" 2>/dev/null || true
  rm -f "$node/$1.pid"
}

unmount_all() {
  local target
  [[ -d $node ]] || return 0
  # Deepest first; a busy one is detached (lazy) rather than left.
  while read -r target; do
    umount "$target" 2>/dev/null || umount -l "$target" 2>/dev/null || log "could not unmount $target"
  done < <(awk -v prefix="$node/" 'index($2, prefix) == 1 { print $2 }' /proc/self/mounts | sort -r)
}

stop() {
  [[ -d $node ]] || return 0
  [[ ! -f $node/node.env ]] || settings
  teardown
  log "real node $node_name stopped (images and config kept in $node)"
}

down() {
  [[ -d $node ]] || return 0
  [[ ! -f $node/node.env ]] || settings
  # The pods first, through the API server while it runs: the kubelet stops their sandboxes, and
  # containerd's CRI has CNI release their addresses and remove their interfaces and namespaces.
  local started=$SECONDS pods
  if running kubelet && kubectl get --raw /readyz >/dev/null 2>&1; then
    pods=$(kubectl get pods --all-namespaces --field-selector "spec.nodeName=$node_name" -o name 2>/dev/null | wc -l)
    kubectl delete pods --all-namespaces --field-selector "spec.nodeName=$node_name" \
      --grace-period=5 --wait=false >/dev/null 2>&1 || true
    local deadline=$((SECONDS + 30))
    while ((SECONDS < deadline)); do
      [[ -z $(kubectl get pods --all-namespaces --field-selector "spec.nodeName=$node_name" -o name 2>/dev/null) ]] &&
        [[ -z $(ctr tasks ls -q 2>/dev/null) ]] && break
      sleep 0.5
    done
    log "deleted $pods pod(s) of $node_name through the API server; $(ctr tasks ls -q 2>/dev/null | wc -l) container(s) left to kill"
  fi
  teardown
  kubectl delete node "$node_name" --ignore-not-found >/dev/null 2>&1 || true
  rm -rf "$node"
  log "real node $node_name removed in $((SECONDS - started)) s"
}

status() {
  if running kubelet && running containerd; then
    echo "real node $node_name runs: $(kubectl get node "$node_name" --no-headers 2>/dev/null | awk '{print $2}')"
  else
    echo "real node $node_name is not running"
    return 1
  fi
}

address() {
  settings
  echo "$NODE_IP"
}

case ${1:-} in
  up | stop | down | status | address) "$1" ;;
  *) die "usage: node.sh up|stop|down|status|address" ;;
esac
