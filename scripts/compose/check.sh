#!/usr/bin/env bash
# Validates deploy/compose.yaml and deploy/compose.sqlite.yaml with the real
# `docker compose config` (schema, interpolation, references), and checks
# that compose.yaml refuses to start without each variable it requires.
#
# The compose CLI is docker/compose built from the Go module proxy (pinned in
# tools/compose, its own module: `go install` refuses compose's exclude
# directives) and placed as a docker CLI plugin in a private DOCKER_CONFIG,
# so the command is literally `docker compose config`. Without the docker
# CLI the plugin binary runs on its own (`docker-compose config`, the same
# code). Nothing is pulled and no daemon is needed.
#
# When Go cannot build the plugin (no module proxy), the check is skipped
# with a line in $AGENTS_SKIP_LOG — or fails under AGENTS_CI=1.
set -euo pipefail
cd "$(dirname "$0")/../.."
root=$PWD

log() { echo "compose:check: $*" >&2; }

plugins="$root/.task/compose/cli-plugins"
plugin="$plugins/docker-compose"
mkdir -p "$plugins"

# Rebuilt only when the pin changes: linking the plugin takes seconds even
# with a warm build cache.
if [ ! -x "$plugin" ] || [ tools/compose/go.mod -nt "$plugin" ] || [ tools/compose/go.sum -nt "$plugin" ]; then
  log "building docker compose from tools/compose (a cold build compiles it: one to two minutes on 2 cores)"
  version=$(GOWORK=off go -C tools/compose list -m -f '{{.Version}}' github.com/docker/compose/v5 2>/dev/null || echo dev)
  if ! GOWORK=off go -C tools/compose build -trimpath \
      -ldflags "-s -w -X github.com/docker/compose/v5/internal.Version=$version" \
      -o "$plugin.tmp" github.com/docker/compose/v5/cmd; then
    rm -f "$plugin.tmp"
    if [ "${AGENTS_CI:-}" = "1" ]; then
      log "FAIL — Go could not build docker compose and AGENTS_CI=1 requires the compose check"
      exit 1
    fi
    log "SKIP — Go could not build docker compose (is the module proxy reachable?)"
    if [ -n "${AGENTS_SKIP_LOG:-}" ]; then
      mkdir -p "$(dirname "$AGENTS_SKIP_LOG")"
      echo "compose files check (docker compose config) — enable it with: make the Go module proxy reachable, then go tool task compose:check" >> "$AGENTS_SKIP_LOG"
    fi
    exit 0
  fi
  mv "$plugin.tmp" "$plugin"
fi

# Run with a clean slate: only the variables each case sets, none the
# caller happens to have exported nor a deploy/.env holds (--env-file).
clean=(env -u AGENTS_BASE_URL -u POSTGRES_PASSWORD -u AGENTS_IMAGE -u AGENTS_PORT
  -u AGENTS_SECRET_KEY_PATH -u COMPOSE_FILE -u COMPOSE_PROJECT_NAME -u COMPOSE_PROFILES)

# compose [VAR=value…] -- ARGS…: `docker compose ARGS` through the CLI when
# there is one, with only those variables set.
compose() {
  local vars=()
  while [ "$1" != "--" ]; do vars+=("$1"); shift; done
  shift
  if command -v docker >/dev/null 2>&1; then
    "${clean[@]}" "${vars[@]}" DOCKER_CONFIG="$root/.task/compose" docker compose "$@"
  else
    "${clean[@]}" "${vars[@]}" "$plugin" "$@"
  fi
}

out=$(mktemp -d)
trap 'rm -rf "$out"' EXIT
: >"$out/empty.env"

fail() { log "FAIL — $*"; exit 1; }

# valid FILE [VAR=value…]: `config` accepts the file with those variables.
valid() {
  local file=$1; shift
  if ! compose "$@" -- --env-file "$out/empty.env" -f "$file" config >"$out/config.yaml" 2>"$out/err"; then
    cat "$out/err" >&2
    fail "$file is refused with $*"
  fi
}

# refused FILE WANT [VAR=value…]: `config` refuses the file, naming WANT.
refused() {
  local file=$1 want=$2; shift 2
  if compose "$@" -- --env-file "$out/empty.env" -f "$file" config >"$out/config.yaml" 2>"$out/err"; then
    fail "$file is accepted without $want"
  fi
  if ! grep -q "required variable $want is missing" "$out/err"; then
    cat "$out/err" >&2
    fail "$file is refused without $want, but not for it"
  fi
}

# has WHAT TEXT: the resolved configuration holds TEXT.
has() {
  grep -qF -- "$2" "$out/config.yaml" || { cat "$out/config.yaml" >&2; fail "the resolved configuration lacks $1 ($2)"; }
}

team=deploy/compose.yaml
one=deploy/compose.sqlite.yaml

valid "$team" AGENTS_BASE_URL=https://agents.example.com POSTGRES_PASSWORD=example-password
has "the base URL" "AGENTS_BASE_URL: https://agents.example.com"
has "the Postgres URL" "AGENTS_DATABASE_URL: postgres://agents@postgres:5432/agents?sslmode=disable"
has "the database password" "PGPASSWORD: example-password"
has "the secret key file" "AGENTS_SECRET_KEY_FILE: /run/secrets/agents_secret_key"
has "the Postgres volume" "target: /var/lib/postgresql/data"
has "the server's volume" "target: /data"
refused "$team" AGENTS_BASE_URL POSTGRES_PASSWORD=example-password
refused "$team" POSTGRES_PASSWORD AGENTS_BASE_URL=https://agents.example.com

valid "$one"
has "the default base URL" "AGENTS_BASE_URL: http://127.0.0.1:9527"
has "the secret key file" "AGENTS_SECRET_KEY_FILE: /run/secrets/agents_secret_key"
has "the server's volume" "target: /data"
valid "$one" AGENTS_PORT=8080 AGENTS_IMAGE=agents-server:v1.2.3
has "the base URL following the port" "AGENTS_BASE_URL: http://127.0.0.1:8080"
has "the chosen image" "image: agents-server:v1.2.3"

log "ok: $team and $one are valid ($(compose -- version --short 2>/dev/null || echo compose)); a missing required variable is refused"
