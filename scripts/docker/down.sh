#!/usr/bin/env bash
# Stops the private Docker daemon that up.sh started, by its pid file. Its
# data (images, volumes) stays under the directory for the next up.sh.
set -euo pipefail

DIR=${AGENTS_DOCKER_DIR:-/tmp/agents-docker}
PIDFILE="$DIR/dockerd.pid"

if [ ! -f "$PIDFILE" ]; then
  echo "docker-down: no $PIDFILE; nothing to stop" >&2
  exit 0
fi
pid=$(cat "$PIDFILE")
if ! kill -0 "$pid" 2>/dev/null; then
  echo "docker-down: dockerd $pid is not running" >&2
  rm -f "$PIDFILE"
  exit 0
fi
kill -TERM "$pid"
for _ in $(seq 1 150); do
  kill -0 "$pid" 2>/dev/null || { echo "docker-down: stopped dockerd $pid" >&2; exit 0; }
  sleep 0.1
done
echo "docker-down: dockerd $pid did not stop within 15s; killing it" >&2
kill -KILL "$pid" 2>/dev/null || true
