#!/usr/bin/env bash
# Provides the local stack in .tools/bin/: temporal, helm, kwokctl, kwok, etcd, etcdctl,
# kube-apiserver, kube-controller-manager, kube-scheduler, kubectl, registry (an OCI registry
# for the chart-source tests), the sandbox's real node (kubelet; containerd,
# containerd-shim-runc-v2 and ctr; the CNI plugins bridge, loopback, host-local and portmap, linked
# as the folder .tools/bin/cni/; runc comes from Debian, see deploy/sandbox/node.sh), the Gateway
# API's CRDs (.tools/bin/gateway-api.crds/, which the sandbox installs), and temporal-server,
# temporal-sql-tool and temporal-ui-server (the Temporal cluster on PostgreSQL of
# deploy/temporal-cluster), at the versions pinned in versions.env.
# `build.sh peers` provides instead the peers benchmark 4 runs beside us, which nothing else needs
# (so `npm test` and `npm start` never build them): Flux's helm-controller and source-controller
# (their CRDs beside them, linked as .tools/bin/<controller>.crds/) and helmfile.
# `build.sh compose` provides docker-compose (Docker Compose v2, the CLI plugin's binary run on its
# own), which only the compose lane needs (deploy/compose.sh runs docker-compose.yml on podman).
#
# For each tool, the first of these wins:
#   1. ARMADA_<TOOL> (e.g. ARMADA_HELM, ARMADA_KUBE_APISERVER) naming a binary at the pinned version;
#   2. the per-user cache ($XDG_CACHE_HOME/armada-temporal/tools/<group>-<version>-r<recipe>/),
#      so a fresh clone on a machine that built the tools once reuses them, and a new pin
#      rebuilds only its own group;
#   3. a binary on PATH at the pinned version;
#   4. a build from the pinned Go module versions (go install / go build) into that cache.
# It never downloads a release binary. Safe to run any number of times.
set -euo pipefail

here=$(cd "$(dirname "${BASH_SOURCE[0]}")" && pwd)
root=$(cd "$here/../.." && pwd)
# shellcheck source=versions.env
source "$here/versions.env"

cache_root="${ARMADA_TOOLS_CACHE:-${XDG_CACHE_HOME:-$HOME/.cache}/armada-temporal/tools}"
out="${ARMADA_TOOLS_BIN:-$root/.tools/bin}"
mkdir -p "$cache_root" "$out"

log() { printf 'tools: %s\n' "$*" >&2; }
die() {
  printf 'tools: error: %s\n' "$*" >&2
  exit 1
}

tools=(temporal temporal-server temporal-sql-tool temporal-ui-server helm kwokctl kwok etcd etcdctl
  kube-apiserver kube-controller-manager kube-scheduler kubectl kubelet registry
  containerd containerd-shim-runc-v2 ctr cni)
flux_controllers=(helm-controller source-controller)
case ${1:-} in
  '') ;;
  peers) tools=("${flux_controllers[@]}" helmfile) ;;
  compose) tools=(docker-compose) ;;
  *) die "unknown argument '$1' (none builds the local stack; 'peers' builds benchmark 4's peers; 'compose' docker-compose)" ;;
esac

# The build group a tool comes from; one go build per group.
group_of() {
  case $1 in
    kwok | kwokctl) echo kwok ;;
    etcd | etcdctl) echo etcd ;;
    kube-* | kubectl | kubelet) echo kubernetes ;;
    containerd | containerd-shim-runc-v2 | ctr) echo containerd ;;
    cni) echo cni-plugins ;;
    temporal-server | temporal-sql-tool) echo temporal-server ;;
    temporal-ui-server) echo temporal-ui ;;
    docker-compose) echo compose ;;
    *) echo "$1" ;;
  esac
}

pinned_version() {
  case $(group_of "$1") in
    temporal) echo "$TEMPORAL_CLI_VERSION" ;;
    temporal-server) echo "$TEMPORAL_SERVER_VERSION" ;;
    temporal-ui) echo "$TEMPORAL_UI_VERSION" ;;
    helm) echo "$HELM_VERSION" ;;
    kwok) echo "$KWOK_VERSION" ;;
    etcd) echo "$ETCD_VERSION" ;;
    kubernetes) echo "$KUBERNETES_VERSION" ;;
    registry) echo "$REGISTRY_VERSION" ;;
    containerd) echo "$CONTAINERD_VERSION" ;;
    cni-plugins) echo "$CNI_PLUGINS_VERSION" ;;
    helm-controller) echo "$FLUX_HELM_CONTROLLER_VERSION" ;;
    source-controller) echo "$FLUX_SOURCE_CONTROLLER_VERSION" ;;
    helmfile) echo "$HELMFILE_VERSION" ;;
    compose) echo "$COMPOSE_VERSION" ;;
  esac
}

is_flux_controller() { [[ " ${flux_controllers[*]} " == *" $1 "* ]]; }

# The version a binary reports, as vX.Y.Z (the first X.Y.Z in its version output).
reported_version() {
  local tool=$1 bin=$2 text
  case $tool in
    helm) text=$("$bin" version --template '{{.Version}}' 2>/dev/null || true) ;;
    kubectl) text=$("$bin" version --client 2>/dev/null || true) ;;
    containerd-shim-runc-v2) text=$("$bin" -v 2>/dev/null || true) ;;
    # A folder of CNI plugins: the version the bridge plugin reports when run without a command.
    cni) text=$("$bin/bridge" 2>&1 || true) ;;
    *) text=$("$bin" --version 2>/dev/null || true) ;;
  esac
  text=$(grep -oE '[0-9]+\.[0-9]+\.[0-9]+' <<<"$text" | head -n 1 || true)
  echo "${text:+v$text}"
}

# Where a group's binaries are cached: one folder per group, pinned version and recipe.
cache_of() { echo "$cache_root/$(group_of "$1")-$(pinned_version "$1")-r$RECIPE_REVISION"; }

override_var() {
  local name=${1//-/_}
  echo "ARMADA_${name^^}"
}

link() { ln -sfn "$2" "$out/$1"; }

# Links what is already available; prints the build groups still missing.
declare -A missing=()
resolve() {
  local tool=$1 want var from_path
  want=$(pinned_version "$tool")
  var=$(override_var "$tool")
  if [[ -n ${!var:-} ]] && ! is_flux_controller "$tool"; then
    [[ -x ${!var} ]] || die "$var=${!var} is not an executable file"
    local got
    got=$(reported_version "$tool" "${!var}")
    [[ $got == "$want" ]] || die "$var=${!var} reports ${got:-no version}, but $want is pinned in deploy/tools/versions.env"
    link "$tool" "${!var}"
    return
  fi
  if [[ -x $(cache_of "$tool")/$tool ]]; then
    link "$tool" "$(cache_of "$tool")/$tool"
    if is_flux_controller "$tool"; then link "$tool.crds" "$(cache_of "$tool")/crds"; fi
    return
  fi
  # A controller comes only from its own build, which carries the CRDs of the same release.
  if is_flux_controller "$tool"; then
    missing[$(group_of "$tool")]=1
    return
  fi
  from_path=$(PATH=$(sed "s#$out:##g" <<<"$PATH") command -v "$tool" || true)
  if [[ -n $from_path && $(reported_version "$tool" "$from_path") == "$want" ]]; then
    link "$tool" "$from_path"
    return
  fi
  missing[$(group_of "$tool")]=1
}

# go build/install of one group into a scratch dir, then an atomic move into the cache.
build_helm() {
  GOBIN="$1" go install \
    -ldflags "-X helm.sh/helm/v4/internal/version.version=$HELM_VERSION -X helm.sh/helm/v4/internal/version.gitTreeState=clean" \
    "helm.sh/helm/v4/cmd/helm@$HELM_VERSION"
}

build_temporal() {
  GOBIN="$1" go install \
    -ldflags "-X github.com/temporalio/cli/temporalcli.Version=${TEMPORAL_CLI_VERSION#v}" \
    "github.com/temporalio/cli/cmd/temporal@$TEMPORAL_CLI_VERSION"
}

# The Temporal server and UI server are built in a module that requires the pinned CLI, so their
# dependencies resolve to exactly the versions the CLI's dev server is built with: the same code
# the tests ran on before, and the CLI's build cache has compiled nearly all of it. The pins must
# be the versions the CLI's go.mod requires; a mismatch is a pin to fix in versions.env.
# $1 wrapper dir, $2 module, $3 its pinned version.
write_cli_wrapper() {
  local dir=$1 mod=$2 version=$3 cli_gomod embedded
  mkdir -p "$dir"
  cli_gomod=$(go mod download -json "github.com/temporalio/cli@$TEMPORAL_CLI_VERSION" | sed -n 's/^\t"GoMod": "\(.*\)",$/\1/p')
  [[ -f $cli_gomod ]] || die "could not read the go.mod of github.com/temporalio/cli@$TEMPORAL_CLI_VERSION from the Go module proxy"
  embedded=$(awk -v mod="$mod" '$1 == mod { print $2 }' "$cli_gomod")
  [[ $embedded == "$version" ]] ||
    die "the Temporal CLI $TEMPORAL_CLI_VERSION embeds $mod ${embedded:-(none)}, but $version is pinned in deploy/tools/versions.env"
  {
    echo "module armada-temporal.local/tools/$(basename "$dir")"
    echo
    grep -m1 -E '^go [0-9.]+$' "$cli_gomod"
    echo
    echo "require github.com/temporalio/cli $TEMPORAL_CLI_VERSION"
    echo "require $mod $version"
  } >"$dir/go.mod"
}

# go build in a wrapper module: -mod=mod writes its go.sum; the caller's GOFLAGS are kept.
wrapper_build() {
  local dir=$1
  shift
  (cd "$dir" && GOFLAGS="${GOFLAGS:+$GOFLAGS }-mod=mod" go build "$@")
}

build_temporal_server() {
  local src="$2/temporal-server"
  write_cli_wrapper "$src" go.temporal.io/server "$TEMPORAL_SERVER_VERSION"
  # The server's version is a constant in its source (headers.ServerVersion); nothing to stamp.
  wrapper_build "$src" -o "$1/temporal-server" go.temporal.io/server/cmd/server &&
    wrapper_build "$src" -o "$1/temporal-sql-tool" go.temporal.io/server/cmd/tools/sql
}

build_temporal_ui() {
  local src="$2/temporal-ui"
  write_cli_wrapper "$src" github.com/temporalio/ui-server/v2 "$TEMPORAL_UI_VERSION"
  wrapper_build "$src" -o "$1/temporal-ui-server" github.com/temporalio/ui-server/v2/cmd/server
}

build_registry() {
  GOBIN="$1" go install \
    -ldflags "-X github.com/distribution/distribution/v3/version.version=$REGISTRY_VERSION" \
    "github.com/distribution/distribution/v3/cmd/registry@$REGISTRY_VERSION"
}

build_kwok() {
  GOBIN="$1" go install "sigs.k8s.io/kwok/cmd/kwokctl@$KWOK_VERSION" "sigs.k8s.io/kwok/cmd/kwok@$KWOK_VERSION"
}

# A module whose go.mod replaces every sibling module (the upstream go.mod points them at
# ./paths, which `go install mod@version` refuses) with its published version of the same release.
# $1 wrapper dir, $2 main module, $3 its version, $4 sed script turning an upstream replace line
# "path => ./dir" into "path => path <version>", $5... further modules of the release to require.
write_wrapper() {
  local dir=$1 mod=$2 version=$3 rewrite=$4 gomod extra
  shift 4
  mkdir -p "$dir"
  gomod=$(go mod download -json "$mod@$version" | sed -n 's/^\t"GoMod": "\(.*\)",$/\1/p')
  [[ -f $gomod ]] || die "could not read the go.mod of $mod@$version from the Go module proxy"
  {
    echo "module armada-temporal.local/tools/$(basename "$dir")"
    echo
    grep -m1 -E '^go [0-9.]+$' "$gomod"
    echo
    echo "require $mod $version"
    for extra in "$@"; do echo "require $extra $version"; done
    echo
    echo "replace ("
    grep -E '^\s*[^ ]+ => \.\.?/' "$gomod" | grep -v FORBIDDEN | sed -E "$rewrite"
    echo ")"
  } >"$dir/go.mod"
}

build_etcd() {
  local src="$2/etcd"
  write_wrapper "$src" go.etcd.io/etcd/server/v3 "$ETCD_VERSION" \
    "s#^\s*([^ ]+) => .*#\t\1 => \1 $ETCD_VERSION#" go.etcd.io/etcd/etcdctl/v3
  # etcd's version is a constant in its source; nothing to stamp.
  (cd "$src" && GOFLAGS=-mod=mod go build -o "$1/etcd" go.etcd.io/etcd/server/v3 &&
    GOFLAGS=-mod=mod go build -o "$1/etcdctl" go.etcd.io/etcd/etcdctl/v3)
}

build_kubernetes() {
  local src="$2/kubernetes" staging="v0.${KUBERNETES_VERSION#v1.}" v=${KUBERNETES_VERSION#v} flags=()
  write_wrapper "$src" k8s.io/kubernetes "$KUBERNETES_VERSION" \
    "s#^\s*([^ ]+) => .*#\t\1 => \1 $staging#"
  # The stamps hack/lib/version.sh sets, so /version and --version report the real release. The
  # module proxy knows the tag's time but not its commit, so gitCommit stays empty, not made up.
  local key val released
  released=$(go mod download -json "k8s.io/kubernetes@$KUBERNETES_VERSION" | sed -n 's/^\t"Info": "\(.*\)",$/\1/p')
  released=$(sed -n 's/.*"Time":"\([^"]*\)".*/\1/p' "$released")
  for key in gitVersion gitMajor gitMinor gitTreeState gitCommit buildDate; do
    case $key in
      gitVersion) val=$KUBERNETES_VERSION ;;
      gitMajor) val=${v%%.*} ;;
      gitMinor) val=$(cut -d. -f2 <<<"$v") ;;
      gitTreeState) val=clean ;;
      gitCommit) val= ;;
      buildDate) val=$released ;;
    esac
    flags+=("-X k8s.io/component-base/version.$key=$val" "-X k8s.io/client-go/pkg/version.$key=$val")
  done
  (cd "$src" && GOFLAGS=-mod=mod go build -o "$1/" -ldflags "${flags[*]}" \
    k8s.io/kubernetes/cmd/kube-apiserver k8s.io/kubernetes/cmd/kube-controller-manager \
    k8s.io/kubernetes/cmd/kube-scheduler k8s.io/kubernetes/cmd/kubectl k8s.io/kubernetes/cmd/kubelet)
}

# The real node's container runtime. containerd's go.mod replaces nothing, so a plain go install
# works; the stamp is the one its Makefile sets (git describe: the tag); the commit stays empty.
build_containerd() {
  GOBIN="$1" go install \
    -ldflags "-X github.com/containerd/containerd/v2/version.Version=$CONTAINERD_VERSION" \
    "github.com/containerd/containerd/v2/cmd/containerd@$CONTAINERD_VERSION" \
    "github.com/containerd/containerd/v2/cmd/containerd-shim-runc-v2@$CONTAINERD_VERSION" \
    "github.com/containerd/containerd/v2/cmd/ctr@$CONTAINERD_VERSION"
}

# The real node's CNI plugins, in a folder of their own (the CNI bin dir containerd is given).
build_cni_plugins() {
  local plugin pkgs=()
  for plugin in main/bridge main/loopback ipam/host-local meta/portmap; do
    pkgs+=("github.com/containernetworking/plugins/plugins/$plugin@$CNI_PLUGINS_VERSION")
  done
  mkdir -p "$1/cni"
  GOBIN="$1/cni" go install \
    -ldflags "-X github.com/containernetworking/plugins/pkg/utils/buildversion.BuildVersion=$CNI_PLUGINS_VERSION" \
    "${pkgs[@]}"
}

# Flux's controllers and helmfile replace modules in their go.mod, which `go install mod@version`
# refuses. They are built in a wrapper module that requires the release and repeats its
# replacements by version; a replacement by a local directory (Flux's ./api) is left out, as the
# release requires that sibling module at its own tag (the same code). The release's own go.sum
# comes along: the build resolves the same versions, so their checksums are the release's, and
# the checksum database is not asked (it answers 404 for some of Flux's modules, e.g.
# github.com/fluxcd/pkg/git/gogit v0.40.0, which then fails the build).
# $1 wrapper dir, $2 module, $3 its pinned version.
write_replacing_wrapper() {
  local dir=$1 mod=$2 version=$3 info gomod source replacement
  mkdir -p "$dir"
  info=$(go mod download -json "$mod@$version")
  gomod=$(sed -n 's/^\t"GoMod": "\(.*\)",$/\1/p' <<<"$info")
  source=$(sed -n 's/^\t"Dir": "\(.*\)",$/\1/p' <<<"$info")
  [[ -f $gomod && -f $source/go.sum ]] || die "could not read the go.mod and go.sum of $mod@$version from the Go module proxy"
  cp "$source/go.sum" "$dir/go.sum"
  chmod u+w "$dir/go.sum"
  {
    echo "module armada-temporal.local/tools/$(basename "$dir")"
    echo
    grep -m1 -E '^go [0-9.]+$' "$gomod"
    echo
    echo "require $mod $version"
  } >"$dir/go.mod"
  go mod edit -json "$gomod" | node -e '
    // A go.mod without replace directives has "Replace": null.
    const { Replace } = JSON.parse(require("fs").readFileSync(0, "utf8"));
    const at = (m) => (m.Version ? `${m.Path}@${m.Version}` : m.Path);
    for (const r of Replace ?? []) if (r.New.Version) console.log(`${at(r.Old)}=${at(r.New)}`);
  ' | while read -r replacement; do
    (cd "$dir" && go mod edit -replace="$replacement")
  done
}

# $1 bin dir, $2 module, $3 version: the module's CRDs (config/crd/bases) into $1/crds.
copy_crds() {
  local dir
  dir=$(go mod download -json "$2@$3" | sed -n 's/^\t"Dir": "\(.*\)",$/\1/p')
  [[ -d $dir/config/crd/bases ]] || die "no config/crd/bases in $2@$3 (module dir: ${dir:-none})"
  mkdir -p "$1/crds"
  cp "$dir"/config/crd/bases/*.yaml "$1/crds/"
}

# $1 bin dir, $2 scratch dir, $3 tool, $4 module, $5 version.
build_flux_controller() {
  write_replacing_wrapper "$2/$3" "$4" "$5"
  wrapper_build "$2/$3" -o "$1/$3" "$4" && copy_crds "$1" "$4" "$5"
}

build_helm_controller() {
  build_flux_controller "$1" "$2" helm-controller github.com/fluxcd/helm-controller "$FLUX_HELM_CONTROLLER_VERSION"
}

build_source_controller() {
  build_flux_controller "$1" "$2" source-controller github.com/fluxcd/source-controller "$FLUX_SOURCE_CONTROLLER_VERSION"
}

build_helmfile() {
  write_replacing_wrapper "$2/helmfile" github.com/helmfile/helmfile "$HELMFILE_VERSION"
  wrapper_build "$2/helmfile" -o "$1/helmfile" \
    -ldflags "-X go.szostok.io/version.version=$HELMFILE_VERSION -X go.szostok.io/version.dirtyBuild=false" \
    github.com/helmfile/helmfile
}

# Docker Compose v2 (cmd/ is the binary the docker CLI runs as its `compose` plugin; run as
# docker-compose it is the same program, standalone). Its go.mod excludes two versions, which
# `go install mod@version` refuses in a dependency, so it is built in a wrapper module that
# repeats the exclusions (it replaces nothing) beside the release's go.sum. The stamp is the one
# its Makefile sets.
build_compose() {
  local mod=github.com/docker/compose/v2 gomod exclusion
  write_replacing_wrapper "$2/compose" "$mod" "$COMPOSE_VERSION"
  gomod=$(go mod download -json "$mod@$COMPOSE_VERSION" | sed -n 's/^\t"GoMod": "\(.*\)",$/\1/p')
  go mod edit -json "$gomod" | node -e '
    const { Exclude } = JSON.parse(require("fs").readFileSync(0, "utf8"));
    for (const e of Exclude ?? []) console.log(`${e.Path}@${e.Version}`);
  ' | while read -r exclusion; do
    (cd "$2/compose" && go mod edit -exclude="$exclusion")
  done
  wrapper_build "$2/compose" -o "$1/docker-compose" -ldflags "-w -X $mod/internal.Version=$COMPOSE_VERSION" "$mod/cmd"
}

for tool in "${tools[@]}"; do resolve "$tool"; done

if ((${#missing[@]})); then
  if ! command -v go >/dev/null; then
    die "not available: ${!missing[*]} (pinned in deploy/tools/versions.env). Install Go >= 1.25 and re-run \`npm run tools\`, or put the pinned binaries on PATH or name them with ARMADA_<TOOL> (e.g. ARMADA_HELM=/usr/local/bin/helm)."
  fi
  for group in temporal temporal-server temporal-ui helm kwok etcd kubernetes registry \
    containerd cni-plugins helm-controller source-controller helmfile compose; do
    [[ -n ${missing[$group]:-} ]] || continue
    log "building $group $(pinned_version "$group") from Go modules (once per machine; minutes)..."
    scratch=$(mktemp -d "$cache_root/build.XXXXXX")
    trap 'rm -rf "$scratch"' EXIT
    mkdir -p "$scratch/bin"
    started=$SECONDS
    "build_${group//-/_}" "$scratch/bin" "$scratch" >&2 || die "building $group failed (output above)"
    rm -rf "$(cache_of "$group")"
    mv "$scratch/bin" "$(cache_of "$group")"
    rm -rf "$scratch"
    trap - EXIT
    log "built $group in $((SECONDS - started)) s"
  done
  for tool in "${tools[@]}"; do resolve "$tool"; done
fi

# The Gateway API's standard-channel CRDs, copied once from the pinned module (the module proxy
# serves its source; nothing is built) into the cache, and linked as .tools/bin/gateway-api.crds.
gateway_api_crds() {
  local cache="$cache_root/gateway-api-$GATEWAY_API_VERSION-r$RECIPE_REVISION" dir scratch
  if [[ ! -d $cache ]]; then
    command -v go >/dev/null ||
      die "not available: the Gateway API CRDs $GATEWAY_API_VERSION (pinned in deploy/tools/versions.env). Install Go >= 1.25 and re-run \`npm run tools\`."
    dir=$(go mod download -json "sigs.k8s.io/gateway-api@$GATEWAY_API_VERSION" | sed -n 's/^\t"Dir": "\(.*\)",$/\1/p')
    [[ -d $dir/config/crd/standard ]] ||
      die "no config/crd/standard in sigs.k8s.io/gateway-api@$GATEWAY_API_VERSION (module dir: ${dir:-none})"
    scratch=$(mktemp -d "$cache_root/build.XXXXXX")
    cp "$dir"/config/crd/standard/*.yaml "$scratch/"
    chmod -R u+w,go+rX "$scratch"
    mv "$scratch" "$cache"
    log "copied the Gateway API CRDs $GATEWAY_API_VERSION (standard channel)"
  fi
  link gateway-api.crds "$cache"
}
[[ -n ${1:-} ]] || gateway_api_crds

for tool in "${tools[@]}"; do
  [[ -e $out/$tool ]] || die "$tool missing from $out after the build"
  printf '%-24s %s  (%s)\n' "$tool" "$(pinned_version "$tool")" "$(readlink -f "$out/$tool")"
done
