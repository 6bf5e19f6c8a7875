#!/usr/bin/env bash
# Starts a private Postgres cluster for the store and replica tests, from
# Debian's postgresql package (installed when missing). Idempotent: a
# running cluster is reused. The last line printed is
# AGENTS_TEST_POSTGRES=postgres://…, for
# `export "$(scripts/postgres/up.sh | tail -1)"`; each test then creates
# (and drops) a database of its own on it.
#
# Why a private cluster: the tests must not depend on (or disturb) a system
# one; this one listens on its own port and socket directory, keeps its data
# under $DIR, skips fsync (a test cluster is thrown away), and sorts text
# bytewise (no locale), as SQLite does.
set -euo pipefail

DIR=${AGENTS_POSTGRES_DIR:-/tmp/agents-postgres}
PORT=${AGENTS_POSTGRES_PORT:-54329}
URL="postgres://agents@127.0.0.1:$PORT/postgres?sslmode=disable"

log() { echo "postgres-up: $*" >&2; }

bindir() { ls -d /usr/lib/postgresql/*/bin 2>/dev/null | sort -V | tail -1; }

if [ -z "$(bindir)" ]; then
  log "installing postgresql"
  # Keep the package from starting the system cluster: this script runs its
  # own. policy-rc.d exit 101 = "do not start services".
  policy=/usr/sbin/policy-rc.d
  own_policy=0
  if [ ! -e "$policy" ]; then
    printf '#!/bin/sh\nexit 101\n' >"$policy" && chmod +x "$policy" && own_policy=1
  fi
  export DEBIAN_FRONTEND=noninteractive
  if ! apt-get install -y --no-install-recommends postgresql >&2; then
    apt-get update >&2
    apt-get install -y --no-install-recommends postgresql >&2
  fi
  if [ "$own_policy" = 1 ]; then rm -f "$policy"; fi
fi
BIN=$(bindir)

# Postgres refuses to run as root: the cluster belongs to a plain user.
as_owner() {
  if [ "$(id -u)" = 0 ]; then
    id postgres >/dev/null 2>&1 || useradd --system --no-create-home postgres
    runuser -u postgres -- "$@"
  else
    "$@"
  fi
}

mkdir -p "$DIR"
if [ "$(id -u)" = 0 ]; then chown postgres "$DIR"; fi

ready() { as_owner "$BIN/pg_isready" -q -h "$DIR" -p "$PORT"; }

if ! ready; then
  if [ ! -f "$DIR/data/PG_VERSION" ]; then
    log "creating the cluster in $DIR/data"
    as_owner "$BIN/initdb" -D "$DIR/data" -A trust -U agents -E UTF8 --no-locale --no-sync >&2
  fi
  log "starting postgres on port $PORT (log: $DIR/postgres.log)"
  # pg_ctl detaches the server: it outlives the shell that started it.
  as_owner "$BIN/pg_ctl" -D "$DIR/data" -l "$DIR/postgres.log" -w -t 60 start \
    -o "-p $PORT -k $DIR -c listen_addresses=127.0.0.1 -c fsync=off -c synchronous_commit=off -c full_page_writes=off -c max_connections=300" >&2
fi
ready || { log "postgres did not come up; see $DIR/postgres.log"; exit 1; }
log "postgres answers on 127.0.0.1:$PORT"
echo "AGENTS_TEST_POSTGRES=$URL"
