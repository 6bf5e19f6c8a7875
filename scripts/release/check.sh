#!/usr/bin/env bash
# Checks what `go tool task release:snapshot` left in dist/ as a person who
# downloads the linux/amd64 archive would use it: the checksums match, the
# SBOM is there, the archive's binary says the release's version, and it
# serves the built web UI (not the fallback page) once started.
#
# --rm-image: remove the snapshot's image once checked (the test task's
# runs would otherwise pile one up per commit in the daemon).
set -euo pipefail
cd "$(dirname "$0")/../.."
rm_image=0
[ "${1:-}" = "--rm-image" ] && rm_image=1

log() { echo "release:check: $*" >&2; }
fail() { log "FAIL — $*"; exit 1; }

dist=dist
[ -f "$dist/metadata.json" ] || fail "no $dist/metadata.json: run go tool task release:snapshot first"
# metadata.json: {"project_name":"agents-server","tag":"…","previous_tag":"…","version":"…",…}
want=$(sed -n 's/.*"version":"\([^"]*\)".*/\1/p' "$dist/metadata.json")
[ -n "$want" ] || fail "$dist/metadata.json names no version"
commit=$(sed -n 's/.*"commit":"\([^"]*\)".*/\1/p' "$dist/metadata.json")

archive="$dist/agents-server_${want}_linux_amd64.tar.gz"
sbom="$dist/agents-server_${want}_linux_amd64.cdx.json"
[ -s "$archive" ] || fail "no $archive"
[ -s "$sbom" ] || fail "no SBOM $sbom"
[ -s "$dist/checksums.txt" ] || fail "no $dist/checksums.txt"

for f in "$archive" "$sbom"; do
  grep -q "  $(basename "$f")\$" "$dist/checksums.txt" || fail "checksums.txt does not list $(basename "$f")"
done
(cd "$dist" && sha256sum --quiet -c checksums.txt) || fail "a checksum in checksums.txt does not match"
grep -q '"bomFormat": "CycloneDX"' "$sbom" || fail "$sbom is not a CycloneDX document"
grep -q '"name": "github.com/agents-server/agents-server"' "$sbom" || fail "$sbom does not describe the agents-server module"

tmp=$(mktemp -d)
pid=""
cleanup() {
  if [ -n "$pid" ] && kill -0 "$pid" 2>/dev/null; then
    kill -TERM "$pid" 2>/dev/null || true
    wait "$pid" 2>/dev/null || true
  fi
  rm -rf "$tmp"
}
trap cleanup EXIT

tar -xzf "$archive" -C "$tmp"
[ -f "$tmp/README.md" ] || fail "the archive holds no README.md"
bin="$tmp/agents-server"
[ -x "$bin" ] || fail "the archive holds no executable agents-server"

# `version` prints "agents-server <version>", "revision <commit>", the date.
"$bin" version >"$tmp/version.txt"
grep -qx "agents-server $want" "$tmp/version.txt" || { cat "$tmp/version.txt" >&2; fail "agents-server version does not start with its version line"; }
grep -qx "revision $commit" "$tmp/version.txt" || { cat "$tmp/version.txt" >&2; fail "agents-server version does not name the commit $commit"; }
if grep -qw dev "$tmp/version.txt"; then cat "$tmp/version.txt" >&2; fail "agents-server version says dev"; fi

# Port 0: the server picks a free port and its ready line names it.
mkdir "$tmp/data"
env -u AGENTS_SECRET_KEY -u AGENTS_SECRET_KEY_FILE -u AGENTS_DATABASE_URL -u AGENTS_BASE_URL -u AGENTS_ADDR \
  "$bin" --addr 127.0.0.1:0 --data-dir "$tmp/data" >"$tmp/out.txt" 2>"$tmp/err.txt" &
pid=$!
url=""
for _ in $(seq 1 300); do
  url=$(sed -n 's|^agents-server ready: \(http://[^/]*\)/.*|\1|p' "$tmp/out.txt")
  [ -n "$url" ] && break
  kill -0 "$pid" 2>/dev/null || { cat "$tmp/err.txt" >&2; fail "the archive's binary exited before it was ready"; }
  sleep 0.1
done
[ -n "$url" ] || { cat "$tmp/err.txt" >&2; fail "the archive's binary was not ready within 30s"; }

curl -fsS --max-time 10 "$url/" >"$tmp/index.html" || fail "GET $url/ failed"
# Only Vite's build has the app's root element and its hashed bundle; the
# fallback page says the UI was not built.
if grep -q "built without its web UI" "$tmp/index.html"; then fail "the archive's binary serves the fallback page, not the UI"; fi
grep -q '<div id="root"></div>' "$tmp/index.html" || { cat "$tmp/index.html" >&2; fail "GET / is not the built UI (no root element)"; }
asset=$(sed -n 's|.*src="\.\{0,1\}/\(assets/index-[^"]*\.js\)".*|\1|p' "$tmp/index.html" | head -1)
[ -n "$asset" ] || { cat "$tmp/index.html" >&2; fail "GET / names no built bundle (assets/index-….js)"; }
curl -fsS --max-time 10 -o /dev/null "$url/$asset" || fail "GET $url/$asset (the UI's bundle) failed"

kill -TERM "$pid"
wait "$pid" || fail "the archive's binary did not stop cleanly on SIGTERM"
pid=""
log "ok: $(basename "$archive") (checksums, CycloneDX SBOM) runs as $want and serves the built UI"

# The image, when the snapshot built one (a Docker daemon answered): its
# binary is the release's. The image suite (cmd/agents-server) covers the rest.
image="agents-server:$want"
if grep -qF "\"name\":\"$image\"" "$dist/artifacts.json"; then
  docker run --rm --network none "$image" version >"$tmp/image-version.txt" || fail "docker run $image version failed"
  grep -qx "agents-server $want" "$tmp/image-version.txt" || { cat "$tmp/image-version.txt" >&2; fail "the image $image does not run the release's binary"; }
  log "ok: the image $image runs the release's binary"
  if [ "$rm_image" = 1 ]; then docker image rm "$image" >/dev/null; fi
fi
