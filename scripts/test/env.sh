#!/usr/bin/env bash
# Runs a command with the addresses of the peers a test run started
# (scripts/test/peers.sh wrote them to .task/peers.env); without that file
# the command runs as it is.
#   scripts/test/env.sh go test ./...
f="$(cd "$(dirname "$0")/../.." && pwd)/.task/peers.env"
if [ -f "$f" ]; then
  # shellcheck disable=SC1090
  . "$f"
fi
exec "$@"
