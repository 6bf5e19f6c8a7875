#!/usr/bin/env bash
# Runs a command with what a test run set up: the peers' addresses and
# the server binary (the test task wrote them to .task/test.env). Without
# that file the command runs as it is.
#   scripts/test/env.sh go test ./...
f="$(cd "$(dirname "$0")/../.." && pwd)/.task/test.env"
if [ -f "$f" ]; then
  # shellcheck disable=SC1090
  . "$f"
fi
exec "$@"
