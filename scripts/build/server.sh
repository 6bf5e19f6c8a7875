#!/usr/bin/env bash
# Builds the server the one way every consumer takes it — `go tool task
# run`, the test suites that start the real binary, the browser suite, the
# container image and the release archives (.goreleaser.yaml uses the same
# flags): static (CGO_ENABLED=0), -trimpath, the time zones inside
# (timetzdata), stripped, from go.mod alone (GOWORK=off: not the
# development workspace that joins the tools module). One set of flags
# means the Go build cache
# compiles the server's packages once per run; each consumer only links.
# The UI is embedded as frontend/dist holds it when this runs.
#   scripts/build/server.sh OUT            (GOOS/GOARCH from the environment)
# VERSION, REVISION and CREATED, when set, are linked in (agents-server version).
set -euo pipefail
cd "$(dirname "$0")/../.."
out=${1:?usage: scripts/build/server.sh OUT}
ldflags="-s -w"
if [ -n "${VERSION:-}" ]; then ldflags="$ldflags -X main.buildVersion=$VERSION"; fi
if [ -n "${REVISION:-}" ]; then ldflags="$ldflags -X main.buildRevision=$REVISION"; fi
if [ -n "${CREATED:-}" ]; then ldflags="$ldflags -X main.buildDate=$CREATED"; fi
CGO_ENABLED=0 GOWORK=off exec go build -trimpath -tags timetzdata -ldflags "$ldflags" -o "$out" ./cmd/agents-server
