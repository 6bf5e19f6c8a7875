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

stage=.task/release-image
rm -rf "$stage"
mkdir -p "$stage/data"
for f in /etc/ssl/certs/ca-certificates.crt /etc/pki/tls/certs/ca-bundle.crt /etc/ssl/cert.pem; do
  if [ -s "$f" ]; then cp "$f" "$stage/ca-certificates.crt"; exit 0; fi
done
echo "release: no CA certificate bundle on this host (install ca-certificates)" >&2
exit 1
