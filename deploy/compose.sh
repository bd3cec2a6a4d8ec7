#!/usr/bin/env bash
# docker-compose.yml as it is, on a machine with no Docker engine: Docker Compose itself (v2,
# `deploy/tools/build.sh compose`) talking to podman's Docker-compatible API, with the images the
# file names built here from pinned sources and present under the names it gives them.
#
#   compose.sh images      the images docker-compose.yml names: postgres:15, temporalio/admin-tools,
#                          temporalio/server and temporalio/ui (deploy/images/build.sh compose), and
#                          armada-temporal:local, deploy/Dockerfile (deploy/images/build.sh app local)
#   compose.sh [ARGS...]   docker compose ARGS (`up -d --wait`, `ps`, `logs`, `down -v`...), after
#                          starting the API service when it is not running; prints nothing of its own
#   compose.sh stop        stops the API service and its healthcheck runner (containers stay)
#
# Why Docker Compose and not Debian's podman-compose (1.0.3): the file orders its services with
# depends_on conditions (service_healthy, service_completed_successfully), which podman-compose
# ignores; it started the schema job 2 s before PostgreSQL was healthy. Docker Compose is the
# program the file is written for, and a Go module the proxy serves.
#
# The API service is `podman system service --time=0` on COMPOSE_STATE_DIR/podman.sock (default
# .compose/, git-ignored), with the project's podman settings (deploy/images/containers.conf:
# runc, ulimits below the host's hard limits) and registry mirrors (deploy/images/build.sh's
# registries.conf), through the environment; DOCKER_HOST points Compose at it. DOCKER_BUILDKIT=0:
# `build` and `up --build` use the classic builder, which podman's API serves (there is no
# BuildKit). Behind a TLS-inspecting egress, as here, deploy/Dockerfile's Go and npm stages then
# lack the CA bundle that deploy/images/build.sh app mounts for them ("x509: certificate signed
# by unknown authority"), so here armada-temporal:local comes from `compose.sh images`, and `up`
# without --build uses it.
#
# Healthchecks: podman schedules a container's healthcheck with a systemd timer, and there is no
# systemd here ("unable to get systemd connection to add healthchecks"), so a container would stay
# "starting" forever and `depends_on: condition: service_healthy` never be met. Beside the service
# runs a healthcheck runner that does what the timer would: `podman healthcheck run` for every
# running container of a Compose project, on that container's own interval.
set -euo pipefail

here=$(cd "$(dirname "${BASH_SOURCE[0]}")" && pwd)
root=$(cd "$here/.." && pwd)
state=$(realpath -m "${COMPOSE_STATE_DIR:-$root/.compose}")
sock=$state/podman.sock
images_cache="${ARMADA_IMAGES_CACHE:-${XDG_CACHE_HOME:-$HOME/.cache}/armada-temporal/images}"

export CONTAINERS_CONF="$root/deploy/images/containers.conf"
export CONTAINERS_REGISTRIES_CONF="$images_cache/registries.conf"
export DOCKER_HOST="unix://$sock" DOCKER_BUILDKIT=0

log() { printf 'compose: %s\n' "$*" >&2; }
die() {
  printf 'compose: error: %s\n' "$*" >&2
  exit 1
}

# The pid in $state/$1.pid if that process still runs.
running() {
  local pid
  pid=$(cat "$state/$1.pid" 2>/dev/null) || return 1
  kill -0 "$pid" 2>/dev/null && echo "$pid"
}

service_up() { curl -sf -o /dev/null --unix-socket "$sock" http://podman/_ping; }

# Each running container of a Compose project that has a healthcheck, checked on its interval.
health_runner() {
  local service=$1 id interval now
  declare -A due=()
  while kill -0 "$service" 2>/dev/null; do
    now=$(date +%s%N)
    while read -r id interval; do
      [[ -n $interval && $interval != 0 ]] || continue
      if ((${due[$id]:-0} <= now)); then
        podman healthcheck run "$id" >/dev/null 2>&1 || true
        due[$id]=$((now + interval))
      fi
    done < <(podman ps -q --filter label=com.docker.compose.project |
      xargs -r podman inspect --format '{{.Id}} {{with .Config.Healthcheck}}{{.Interval.Nanoseconds}}{{end}}' 2>/dev/null)
    sleep 1
  done
}

start_service() {
  local pid
  mkdir -p "$state"
  if pid=$(running service) && service_up; then
    running health >/dev/null || start_health "$pid"
    return 0
  fi
  command -v podman >/dev/null || die "podman is missing (deploy/images/build.sh installs it)"
  rm -f "$sock"
  setsid podman system service --time=0 "unix://$sock" >"$state/service.log" 2>&1 </dev/null &
  pid=$!
  echo "$pid" >"$state/service.pid"
  for _ in $(seq 100); do
    service_up && break
    kill -0 "$pid" 2>/dev/null || die "podman system service stopped: $(cat "$state/service.log")"
    sleep 0.1
  done
  service_up || die "podman's API does not answer on $sock: $(cat "$state/service.log")"
  start_health "$pid"
}

start_health() {
  health_runner "$1" >"$state/health.log" 2>&1 </dev/null &
  echo $! >"$state/health.pid"
  disown
}

stop_service() {
  local name pid
  for name in health service; do
    if pid=$(running "$name"); then
      kill "$pid" 2>/dev/null || true
      for _ in $(seq 50); do
        kill -0 "$pid" 2>/dev/null || break
        sleep 0.1
      done
    fi
    rm -f "$state/$name.pid"
  done
  rm -f "$sock"
}

compose_bin() {
  local bin=${ARMADA_DOCKER_COMPOSE:-$root/.tools/bin/docker-compose}
  [[ -x $bin ]] || bash "$root/deploy/tools/build.sh" compose >/dev/null
  echo "$bin"
}

case ${1:-} in
  images)
    bash "$root/deploy/images/build.sh" compose
    bash "$root/deploy/images/build.sh" app local
    ;;
  stop) stop_service ;;
  *)
    bin=$(compose_bin)
    start_service
    cd "$root"
    exec "$bin" "$@"
    ;;
esac
