#!/bin/sh
# The entrypoint of deploy/images/postgres.Containerfile: what upstream's docker-entrypoint.sh
# does for the variables docker-compose.yml sets. Run as root it makes PGDATA the postgres user's
# and runs again as that user; an empty PGDATA gets a new cluster whose superuser is
# POSTGRES_USER (default postgres) with POSTGRES_PASSWORD, and the database POSTGRES_DB (default:
# the user's name). Local connections (the socket, as pg_isready uses) are trusted, TCP ones
# need the password. Then `postgres` (or whatever command was given) replaces this script.
set -eu

if [ "${1#-}" != "$1" ]; then set -- postgres "$@"; fi

if [ "$1" = postgres ] && [ "$(id -u)" = 0 ]; then
  mkdir -p "$PGDATA"
  chown postgres:postgres "$PGDATA"
  chmod 700 "$PGDATA"
  exec setpriv --reuid=postgres --regid=postgres --init-groups "$0" "$@"
fi

if [ "$1" = postgres ] && [ ! -s "$PGDATA/PG_VERSION" ]; then
  user=${POSTGRES_USER:-postgres}
  db=${POSTGRES_DB:-$user}
  if [ -z "${POSTGRES_PASSWORD:-}" ]; then
    echo 'error: the database is not initialized and POSTGRES_PASSWORD is not set' >&2
    exit 1
  fi
  pwfile=$(mktemp)
  printf '%s\n' "$POSTGRES_PASSWORD" >"$pwfile"
  initdb --username="$user" --pwfile="$pwfile" --auth-local=trust --auth-host=scram-sha-256 \
    --encoding=UTF8 --locale=C.UTF-8 -D "$PGDATA"
  rm -f "$pwfile"
  printf 'host all all all scram-sha-256\n' >>"$PGDATA/pg_hba.conf"
  # Created on a server that listens on a private socket only, then stopped: pg_isready (the
  # healthcheck) sees no server until the real one runs.
  socket=$(mktemp -d)
  pg_ctl -D "$PGDATA" -o "-c listen_addresses='' -c unix_socket_directories=$socket" -w start
  if [ "$db" != postgres ]; then
    psql -v ON_ERROR_STOP=1 -h "$socket" --username "$user" --dbname postgres -c "CREATE DATABASE \"$db\""
  fi
  pg_ctl -D "$PGDATA" -m fast -w stop
  rmdir "$socket"
  echo 'PostgreSQL init process complete; ready for start up.'
fi

if [ "$1" = postgres ]; then
  shift
  exec postgres -c listen_addresses='*' "$@"
fi
exec "$@"
