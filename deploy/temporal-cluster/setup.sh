#!/bin/sh
# Temporal's database schema and registrations: the same steps for `npm run temporal:up`
# (cluster.sh, with the tools of .tools/bin) and docker-compose.yml (in temporalio/admin-tools).
# POSIX sh, as that image has no bash. Every step can run again on a set-up cluster.
#
#   setup.sh schema     creates the two databases when missing and migrates them to the server's
#                       schema, embedded in temporal-sql-tool (the server module's
#                       schema/postgresql/v12/{temporal,visibility}/versioned); reads SQL_HOST,
#                       SQL_PORT, SQL_USER and SQL_PASSWORD, as config/cluster.yaml does
#   setup.sh namespace  the default namespace and the search attributes every armada run sets
#                       (workflows/search-attributes.ts), as the dev server gets them; reads
#                       TEMPORAL_ADDRESS
set -eu

schema() {
  for database in temporal:temporal temporal_visibility:visibility; do
    name=${database%%:*}
    schema=${database#*:}
    # create-database refuses a database that exists: that one is kept as it is.
    if ! out=$(temporal-sql-tool --plugin postgres12 --db "$name" create-database 2>&1); then
      case $out in
        *"already exists"*) ;;
        *)
          printf '%s\n' "$out" >&2
          exit 1
          ;;
      esac
    fi
    temporal-sql-tool --plugin postgres12 --db "$name" setup-schema -v 0.0
    temporal-sql-tool --plugin postgres12 --db "$name" update-schema --schema-name "postgresql/v12/$schema"
  done
}

namespace() {
  temporal operator namespace describe --namespace default >/dev/null 2>&1 ||
    temporal operator namespace create --namespace default --retention 24h
  for attribute in ArmadaKind:Keyword ArmadaName:Keyword ArmadaNamespace:Keyword ArmadaPhase:Keyword \
    ArmadaObjects:KeywordList; do
    search_attribute "${attribute%%:*}" "${attribute#*:}"
  done
}

# A namespace just created is unknown to the services until their namespace cache refreshes
# (system.namespaceCacheRefreshInterval, 2 s): "not found" is tried again, for up to a minute.
# $1: the name, $2: its type (Keyword, KeywordList).
search_attribute() {
  tries=0
  while :; do
    if out=$(temporal operator search-attribute create --namespace default --name "$1" --type "$2" 2>&1); then
      printf '%s\n' "$out"
      return 0
    fi
    case $out in
      *"is not found"*) ;;
      *) break ;;
    esac
    tries=$((tries + 1))
    [ "$tries" -lt 60 ] || break
    sleep 1
  done
  printf '%s\n' "$out" >&2
  return 1
}

case ${1:-} in
  schema) schema ;;
  namespace) namespace ;;
  *)
    echo "usage: $0 schema|namespace" >&2
    exit 2
    ;;
esac
