#!/usr/bin/env bash
# Stops the private Postgres cluster that up.sh started. Its data stays
# under the directory for the next up.sh.
set -euo pipefail

DIR=${AGENTS_POSTGRES_DIR:-/tmp/agents-postgres}
BIN=$(ls -d /usr/lib/postgresql/*/bin 2>/dev/null | sort -V | tail -1)

if [ -z "$BIN" ] || [ ! -f "$DIR/data/postmaster.pid" ]; then
  echo "postgres-down: no cluster running in $DIR; nothing to stop" >&2
  exit 0
fi
if [ "$(id -u)" = 0 ]; then
  runuser -u postgres -- "$BIN/pg_ctl" -D "$DIR/data" -m fast -w stop >&2
else
  "$BIN/pg_ctl" -D "$DIR/data" -m fast -w stop >&2
fi
