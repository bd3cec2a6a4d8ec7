# Shared by the npm scripts that run the stack (npm start, npm test, npm run temporal:up): what a
# fresh clone needs before anything starts.
#
# npm dependencies with `npm install`, not `npm ci`: the registry these machines reach does not
# serve the other platforms' optional binaries (@swc/core-darwin-*, ...), so the lock file has
# no entries for them and `npm ci` refuses it as out of sync. `npm install` installs exactly the
# locked versions here and leaves package-lock.json unchanged. It runs only when node_modules is
# missing or older than the lock.
#
# Then the local stack's binaries (npm run tools: a no-op when they are cached).
prepare_checkout() {
  if [[ ! -f node_modules/.package-lock.json || package-lock.json -nt node_modules/.package-lock.json ]]; then
    npm install --no-audit --no-fund
  fi
  bash deploy/tools/build.sh >/dev/null
}

# Installs Debian packages (apt-get, as root or through sudo), for what the tests run that no npm
# or Go module provides: Chromium, PostgreSQL.
install_debian_packages() {
  local sudo=()
  [[ $EUID -eq 0 ]] || sudo=(sudo)
  "${sudo[@]}" apt-get update -qq
  "${sudo[@]}" env DEBIAN_FRONTEND=noninteractive \
    apt-get install -y -qq -o DPkg::Lock::Timeout=300 "$@" >/dev/null
}

# Debian's Prometheus (2.42 on bookworm), for the Prometheus analysis tests, which start their own
# `prometheus` on loopback with a temporary config and storage. The package's own service is
# never used: where systemd runs, it is stopped and disabled as soon as the package is in.
install_prometheus() {
  command -v prometheus >/dev/null && return 0
  install_debian_packages --no-install-recommends prometheus
  if [[ -d /run/systemd/system ]]; then
    local sudo=()
    [[ $EUID -eq 0 ]] || sudo=(sudo)
    "${sudo[@]}" systemctl disable --now prometheus.service >/dev/null 2>&1 || true
  fi
}

# Debian's podman, buildah and runc, and mmdebstrap, for the container images of deploy/images
# (built here with no Docker engine). runc, not crun: crun refuses this kernel's hybrid cgroups.
# netavark (with iptables, its firewall driver) and aardvark-dns give containers and builds their
# own network; uidmap, slirp4netns and fuse-overlayfs are what podman needs where it runs rootless.
install_container_tools() {
  local tool missing=()
  for tool in podman buildah runc mmdebstrap iptables newuidmap slirp4netns fuse-overlayfs; do
    PATH=$PATH:/usr/sbin:/sbin command -v "$tool" >/dev/null || missing+=("$tool")
  done
  [[ -x /usr/lib/podman/netavark ]] || missing+=(netavark)
  ((${#missing[@]})) || return 0
  install_debian_packages --no-install-recommends podman buildah runc mmdebstrap iptables uidmap \
    slirp4netns fuse-overlayfs netavark aardvark-dns golang-github-containers-common
}
