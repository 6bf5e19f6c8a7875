#!/usr/bin/env bash
# GoReleaser's before hook (.goreleaser.yaml): builds the web UI into
# frontend/dist (a no-op when fresh) so every release binary embeds it —
# a release without npm fails here rather than ship the fallback page —
# and stages what the image's context needs beside the binary in
# .task/release-image: the host's CA bundle and an empty data/ folder
# (deploy/Dockerfile reads them through its FILES argument).
set -euo pipefail
cd "$(dirname "$0")/../.."

if ! command -v npm >/dev/null 2>&1; then
  echo "release: npm is missing; a release must embed the web UI (install Node.js 20.19+)" >&2
  exit 1
fi
go tool task ui:build
test -s frontend/dist/index.html || { echo "release: frontend/dist/index.html was not built" >&2; exit 1; }

rm -rf .task/release-image
scripts/image/stage.sh .task/release-image
