#!/usr/bin/env bash
# Stops the peers scripts/test/peers.sh started for a test run (those
# listed in FILE.started) and removes FILE, so no later command reads the
# address of a stopped peer.
#   scripts/test/down.sh .task/peers.env
set -uo pipefail
cd "$(dirname "$0")/../.."

out=${1:?usage: down.sh FILE}
if [ -f "$out.started" ]; then
  while read -r name; do
    case $name in
      Docker*) scripts/docker/down.sh ;;
      Postgres*) scripts/postgres/down.sh ;;
    esac
  done <"$out.started"
fi
rm -f "$out" "$out.started"
