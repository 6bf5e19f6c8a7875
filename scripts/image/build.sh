#!/usr/bin/env bash
# Builds the container image from a static binary built here, with nothing
# pulled: deploy/Dockerfile is FROM scratch. The UI is embedded as it is in
# frontend/dist (`go tool task image` builds it first). Usage:
#   scripts/image/build.sh [TAG]        (default agents-server:<version>, also :latest)
# DOCKER_HOST picks the daemon (scripts/docker/up.sh prints a private one's).
set -euo pipefail
cd "$(dirname "$0")/../.."

version=$(git describe --tags --always --dirty 2>/dev/null || echo dev)
revision=$(git rev-parse HEAD 2>/dev/null || echo unknown)
created=$(date -u +%Y-%m-%dT%H:%M:%SZ)
tag=${1:-agents-server:$version}
ctx=$(mktemp -d)
trap 'rm -rf "$ctx"' EXIT

echo "image: building the static binary (linux/$(go env GOARCH), version $version)" >&2
GOOS=linux VERSION=$version REVISION=$revision CREATED=$created scripts/build/server.sh "$ctx/agents-server"

scripts/image/stage.sh "$ctx"
cp deploy/Dockerfile "$ctx/Dockerfile"

echo "image: docker build -t $tag" >&2
extra=()
if [ -z "${1:-}" ]; then extra=(-t agents-server:latest); fi
docker build --quiet --build-arg "VERSION=$version" --build-arg "REVISION=$revision" --build-arg "CREATED=$created" \
  -t "$tag" "${extra[@]}" "$ctx" >&2
echo "$tag"
