#!/usr/bin/env bash
# Starts the real peers the test suites need, when this machine can run
# them: the private Docker daemon (scripts/docker/up.sh) and the private
# Postgres cluster (scripts/postgres/up.sh), each installing its Debian
# package when missing. It writes what the suites read (DOCKER_HOST,
# AGENTS_TEST_POSTGRES) as `export` lines to FILE, which
# scripts/test/env.sh sources, and lists in FILE.started the peers it
# started (down.sh stops those, never one that was already running).
#
# A peer this machine cannot have (no root to install it, no apt, a
# kernel that cannot run dockerd) is noted in AGENTS_SKIP_LOG with why;
# its suites then skip, saying so. Under AGENTS_CI=1 that fails instead.
#   scripts/test/peers.sh .task/test.env
set -uo pipefail
cd "$(dirname "$0")/../.."

out=${1:?usage: peers.sh FILE}
mkdir -p "$(dirname "$out")"
: >"$out"
: >"$out.started"
failed=0

# note records a peer that did not start: why, and how to enable it.
note() {
  echo "peers: $1 did not start: $2" >&2
  if [ -n "${AGENTS_SKIP_LOG:-}" ]; then
    echo "$1 — it did not start ($2); enable it with: $3" >>"$AGENTS_SKIP_LOG"
  fi
  failed=1
}

# start runs a peer's up script; its last line is the variable to export.
# running is the function that tells whether the peer runs already.
start() {
  local name=$1 script=$2 var=$3 running=$4 enable=$5 log line was
  log=$(mktemp)
  if "$running"; then was=1; else was=0; fi
  if line=$("$script" 2>"$log" | tail -1) && [[ $line == "$var="* ]]; then
    printf 'export %q\n' "$line" >>"$out"
    [ "$was" = 1 ] || echo "$name" >>"$out.started"
    echo "peers: $name ready ($line)" >&2
  else
    note "$name" "$(tail -n 3 "$log" | tr '\n' ' ')" "$enable"
  fi
  rm -f "$log"
}

DOCKER_DIR=${AGENTS_DOCKER_DIR:-/tmp/agents-docker}
PG_DIR=${AGENTS_POSTGRES_DIR:-/tmp/agents-postgres}
PG_PORT=${AGENTS_POSTGRES_PORT:-54329}

docker_runs() { curl -fsS --max-time 2 --unix-socket "$DOCKER_DIR/docker.sock" http://localhost/_ping >/dev/null 2>&1; }
postgres_runs() { (exec 3<>"/dev/tcp/127.0.0.1/$PG_PORT") 2>/dev/null && [ -f "$PG_DIR/data/postmaster.pid" ]; }

if [ -n "${DOCKER_HOST:-}" ]; then
  echo "peers: the Docker suites use DOCKER_HOST=$DOCKER_HOST (set by the caller)" >&2
else
  start "Docker daemon (the Docker suites)" scripts/docker/up.sh DOCKER_HOST docker_runs \
    "install docker.io as root (scripts/docker/up.sh installs and starts it)"
  echo "export DOCKER_API_VERSION=1.41" >>"$out"
fi
if [ -n "${AGENTS_TEST_POSTGRES:-}" ]; then
  echo "peers: the Postgres suites use AGENTS_TEST_POSTGRES (set by the caller)" >&2
else
  start "Postgres cluster (the Postgres suites)" scripts/postgres/up.sh AGENTS_TEST_POSTGRES postgres_runs \
    "install postgresql as root (scripts/postgres/up.sh installs and starts it)"
fi

if [ "$failed" = 1 ] && [ "${AGENTS_CI:-}" = "1" ]; then
  echo "peers: AGENTS_CI=1 requires every peer" >&2
  exit 1
fi
exit 0
