#!/usr/bin/env bash
# A Temporal cluster as in production, on this machine: PostgreSQL from Debian's package, the
# Temporal server (temporal-server, all four services in one process, config/cluster.yaml) with
# its schema set up by temporal-sql-tool (setup.sh), and the Temporal UI server (ui/cluster.yaml),
# from the binaries of .tools/bin (npm run tools), on free ports of the loopback.
#
#   cluster.sh up      start what is not running (installs PostgreSQL when it is missing) and
#                      print the address; a cluster that runs is left as it is
#   cluster.sh down    stop the UI, the server and PostgreSQL; the data stays for the next `up`
#   cluster.sh status  print the address if everything runs, else what does not (exit 1)
#
# TEMPORAL_CLUSTER_DIR (default .temporal-cluster, git-ignored) holds PostgreSQL's data, the logs
# and cluster.env, the ports and the address (sourceable). PostgreSQL refuses to run as root: a
# root caller runs it as Debian's `postgres` user, any other as itself.
set -euo pipefail

here=$(cd "$(dirname "${BASH_SOURCE[0]}")" && pwd)
root=$(cd "$here/../.." && pwd)
# shellcheck source=../tools/versions.env
source "$root/deploy/tools/versions.env"
# shellcheck source=../lib.sh
source "$root/deploy/lib.sh"

dir=$(realpath -m "${TEMPORAL_CLUSTER_DIR:-$root/.temporal-cluster}")
bin="$root/.tools/bin"
pg_bin=/usr/lib/postgresql/$POSTGRESQL_MAJOR/bin
pgdata=$dir/postgresql
env_file=$dir/cluster.env
# The database account of config/cluster.yaml; the server reaches it on the loopback only.
export SQL_HOST=127.0.0.1 SQL_USER=temporal SQL_PASSWORD=temporal
# What cluster.env holds, in the order cluster.sh picks them.
port_names=(SQL_PORT TEMPORAL_FRONTEND_PORT TEMPORAL_FRONTEND_HTTP_PORT TEMPORAL_FRONTEND_MEMBERSHIP_PORT
  TEMPORAL_HISTORY_PORT TEMPORAL_HISTORY_MEMBERSHIP_PORT TEMPORAL_MATCHING_PORT
  TEMPORAL_MATCHING_MEMBERSHIP_PORT TEMPORAL_WORKER_PORT TEMPORAL_WORKER_MEMBERSHIP_PORT TEMPORAL_UI_PORT)

log() { printf 'temporal-cluster: %s\n' "$*" >&2; }
die() {
  printf 'temporal-cluster: error: %s\n' "$*" >&2
  exit 1
}

as_db_user() {
  if ((EUID == 0)); then runuser -u postgres -- "$@"; else "$@"; fi
}

# The pid of a binary of .tools/bin started by this script, if it still runs.
running_pid() {
  local name=$1 pid
  pid=$(cat "$dir/$name.pid" 2>/dev/null) || return 1
  [[ $(readlink "/proc/$pid/exe" 2>/dev/null) == "$(readlink -f "$bin/$name")" ]] && echo "$pid"
}

postgresql_runs() { [[ -f $pgdata/PG_VERSION ]] && as_db_user "$pg_bin/pg_ctl" -D "$pgdata" status >/dev/null 2>&1; }

# Free ports for port_names: the ones of the last start when they are all free still (the
# address stays the same across restarts), else new ones. Below 32768, outside the OS's
# ephemeral range: the server stores its membership port in a PostgreSQL smallint
# (cluster_membership.rpc_port), and refuses to start on a higher one.
pick_ports() {
  local previous=()
  # shellcheck disable=SC1090
  [[ ! -f $env_file ]] ||
    mapfile -t previous < <(source "$env_file" && for name in "${port_names[@]}"; do echo "${!name:-0}"; done)
  local ports
  ports=$(node -e '
    const net = require("node:net");
    const [count, ...previous] = process.argv.slice(1).map(Number);
    const listen = (port) => new Promise((resolve) => {
      const server = net.createServer().once("error", () => resolve(undefined));
      server.listen(port, "127.0.0.1", () => resolve(server));
    });
    (async () => {
      let servers = await Promise.all(previous.map(listen));
      if (servers.length !== count || servers.includes(undefined)) {
        servers.forEach((server) => server?.close());
        servers = [];
        while (servers.length < count) {
          const server = await listen(10000 + Math.floor(Math.random() * 22768));
          if (server) servers.push(server);
        }
      }
      console.log(servers.map((server) => server.address().port).join(" "));
      servers.forEach((server) => server.close());
    })();
  ' "${#port_names[@]}" "${previous[@]}")
  read -ra ports <<<"$ports"
  {
    local i
    for i in "${!port_names[@]}"; do echo "${port_names[i]}=${ports[i]}"; done
    echo "TEMPORAL_ADDRESS=127.0.0.1:${ports[1]}"
    echo "TEMPORAL_UI=http://127.0.0.1:${ports[-1]}"
  } >"$env_file"
}

load_env() {
  set -a
  # shellcheck disable=SC1090
  source "$env_file"
  set +a
}

wait_for() {
  local what=$1 pid=$2 log_file=$3
  shift 3
  local deadline=$((SECONDS + ${TEMPORAL_CLUSTER_TIMEOUT:-120}))
  until "$@" >/dev/null 2>&1; do
    if ! kill -0 "$pid" 2>/dev/null || ((SECONDS >= deadline)); then
      tail -n 10 "$log_file" >&2
      die "$what did not start (its log: $log_file)"
    fi
    sleep 0.5
  done
}

listens() { (exec 3<>"/dev/tcp/127.0.0.1/$1") 2>/dev/null; }

serving() {
  local health
  health=$("$bin/temporal" operator cluster health --address "$TEMPORAL_ADDRESS") && [[ $health == *SERVING* ]]
}

start_postgresql() {
  if [[ ! -x $pg_bin/initdb ]]; then
    log "installing PostgreSQL $POSTGRESQL_MAJOR (Debian's postgresql-$POSTGRESQL_MAJOR)"
    install_debian_packages "postgresql-$POSTGRESQL_MAJOR"
  fi
  mkdir -p "$pgdata"
  ((EUID != 0)) || chown postgres: "$pgdata"
  chmod 700 "$pgdata"
  as_db_user test -w "$pgdata" ||
    die "the PostgreSQL user cannot write $pgdata (a folder above it is closed to it): set TEMPORAL_CLUSTER_DIR to a folder it can reach"
  if [[ ! -f $pgdata/PG_VERSION ]]; then
    log "creating the PostgreSQL data in $pgdata"
    # The password goes through a pipe of the database user's own shell, never a file.
    as_db_user bash -c '"$1/initdb" -D "$2" -U "$3" --pwfile=<(printf %s "$4") --auth=scram-sha-256 \
      -E UTF8 --no-locale' _ "$pg_bin" "$pgdata" "$SQL_USER" "$SQL_PASSWORD" >"$dir/initdb.log" 2>&1 ||
      die "initdb failed (its log: $dir/initdb.log)"
  fi
  # TCP on the loopback only, no Unix socket (its folder would need root's /var/run). Fd 9, the
  # lock of this script, is closed: PostgreSQL would hold it for as long as it runs.
  as_db_user "$pg_bin/pg_ctl" -D "$pgdata" -l "$pgdata/postgresql.log" -w -t 60 \
    -o "-p $SQL_PORT -c listen_addresses=127.0.0.1 -c unix_socket_directories=''" start >/dev/null 9>&- ||
    die "PostgreSQL did not start (its log: $pgdata/postgresql.log)"
}

# Starts a binary of .tools/bin in the background, in its own session (a Ctrl-C in the
# terminal that ran `up` does not reach it), from this folder (the configs' relative paths),
# without the lock of this script (fd 9).
start_detached() {
  local name=$1
  shift
  (cd "$here" && exec setsid "$bin/$name" "$@") >>"$dir/$name.log" 2>&1 </dev/null 9>&- &
  echo $! >"$dir/$name.pid"
}

up() {
  for tool in temporal temporal-server temporal-sql-tool temporal-ui-server; do
    [[ -x $bin/$tool ]] || die "$bin/$tool is missing: run \`npm run tools\` first"
  done
  mkdir -p "$dir"
  if postgresql_runs && running_pid temporal-server >/dev/null && running_pid temporal-ui-server >/dev/null; then
    load_env
    log "already runs"
    print_address
    return
  fi
  # Part of it runs (one process died): start it all over, on the same data.
  stop_all
  pick_ports
  load_env
  start_postgresql
  log "PostgreSQL $POSTGRESQL_MAJOR on 127.0.0.1:$SQL_PORT; setting up the schema"
  PATH="$bin:$PATH" sh "$here/setup.sh" schema >"$dir/schema.log" 2>&1 || {
    tail -n 30 "$dir/schema.log" >&2
    die "the schema set-up failed (its log: $dir/schema.log)"
  }

  start_detached temporal-server --env cluster --allow-no-auth start
  wait_for "the Temporal server" "$(cat "$dir/temporal-server.pid")" "$dir/temporal-server.log" serving
  PATH="$bin:$PATH" sh "$here/setup.sh" namespace >"$dir/namespace.log" 2>&1 || {
    tail -n 30 "$dir/namespace.log" >&2
    die "registering the namespace and search attributes failed (its log: $dir/namespace.log)"
  }

  start_detached temporal-ui-server --config ui --env cluster start
  wait_for "the Temporal UI server" "$(cat "$dir/temporal-ui-server.pid")" "$dir/temporal-ui-server.log" \
    listens "$TEMPORAL_UI_PORT"
  print_address
}

print_address() {
  cat <<MSG
Temporal cluster on PostgreSQL $POSTGRESQL_MAJOR (server $TEMPORAL_SERVER_VERSION) is running.
  Address:     $TEMPORAL_ADDRESS    (export TEMPORAL_ADDRESS=$TEMPORAL_ADDRESS)
  UI:          $TEMPORAL_UI
  PostgreSQL:  127.0.0.1:$SQL_PORT, data in $pgdata
  Logs, ports: $dir/*.log, $env_file
MSG
}

# Stops a process started by start_detached: SIGTERM (the server drains and shuts down), then
# SIGKILL if it has not exited after a while.
stop_process() {
  local name=$1 pid
  pid=$(running_pid "$name") || {
    rm -f "$dir/$name.pid"
    return 0
  }
  kill "$pid" 2>/dev/null || true
  local deadline=$((SECONDS + 30))
  while kill -0 "$pid" 2>/dev/null && ((SECONDS < deadline)); do sleep 0.2; done
  if kill -0 "$pid" 2>/dev/null; then
    log "$name did not stop within 30 s of SIGTERM; killing it"
    kill -9 "$pid" 2>/dev/null || true
  fi
  rm -f "$dir/$name.pid"
}

stop_all() {
  stop_process temporal-ui-server
  stop_process temporal-server
  if postgresql_runs; then as_db_user "$pg_bin/pg_ctl" -D "$pgdata" -m fast -w stop >/dev/null; fi
}

down() {
  [[ -d $dir ]] || return 0
  stop_all
  log "stopped (data kept in $dir)"
}

status() {
  local stopped=()
  postgresql_runs || stopped+=(PostgreSQL)
  running_pid temporal-server >/dev/null || stopped+=(temporal-server)
  running_pid temporal-ui-server >/dev/null || stopped+=(temporal-ui-server)
  if ((${#stopped[@]})); then
    echo "not running: ${stopped[*]}"
    return 1
  fi
  load_env
  print_address
}

case ${1:-} in
  up | down | status)
    mkdir -p "$dir"
    # One `up` or `down` at a time per cluster dir.
    exec 9>"$dir/.lock"
    flock 9
    "$1"
    ;;
  *)
    echo "usage: $0 up|down|status" >&2
    exit 2
    ;;
esac
