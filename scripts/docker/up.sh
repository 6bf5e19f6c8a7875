#!/usr/bin/env bash
# Starts a private Docker daemon for the docker sandbox tests and builds the
# test image agents-sandbox:test without any registry. Idempotent: a running
# daemon and an existing image are reused. The last line printed is
# DOCKER_HOST=unix://…, for `eval "$(scripts/docker/up.sh | tail -1)"`.
#
# Why a private daemon: the tests must not depend on (or disturb) a system
# daemon, and this one needs flags that work inside a VM without iptables or
# overlayfs (vfs storage, no bridge).
set -euo pipefail

DIR=${AGENTS_DOCKER_DIR:-/tmp/agents-docker}
SOCK="$DIR/docker.sock"
IMAGE=agents-sandbox:test
# The CLI may be newer than Debian's 20.10 daemon; pin the API it speaks.
export DOCKER_API_VERSION=1.41
export DOCKER_HOST="unix://$SOCK"

log() { echo "docker-up: $*" >&2; }

apt_install() {
  export DEBIAN_FRONTEND=noninteractive
  if ! apt-get install -y --no-install-recommends "$@" >&2; then
    apt-get update >&2
    apt-get install -y --no-install-recommends "$@" >&2
  fi
}

answers() { curl -fsS --max-time 2 --unix-socket "$SOCK" http://localhost/_ping >/dev/null 2>&1; }

if ! command -v dockerd >/dev/null 2>&1 || ! command -v docker >/dev/null 2>&1; then
  log "installing docker.io"
  # Keep the package from starting the system daemon (overlayfs, iptables):
  # this script runs its own. policy-rc.d exit 101 = "do not start services".
  policy=/usr/sbin/policy-rc.d
  own_policy=0
  if [ ! -e "$policy" ]; then
    printf '#!/bin/sh\nexit 101\n' >"$policy" && chmod +x "$policy" && own_policy=1
  fi
  apt_install docker.io
  if [ "$own_policy" = 1 ]; then rm -f "$policy"; fi
fi
if ! command -v curl >/dev/null 2>&1; then
  apt_install curl ca-certificates
fi

mkdir -p "$DIR"
if ! answers; then
  if [ -f "$DIR/dockerd.pid" ] && kill -0 "$(cat "$DIR/dockerd.pid")" 2>/dev/null; then
    log "dockerd $(cat "$DIR/dockerd.pid") is running but not answering yet"
  else
    rm -f "$DIR/dockerd.pid" "$SOCK"
    log "starting dockerd (log: $DIR/dockerd.log)"
    # setsid: the daemon must outlive the shell (and CI step) that started it.
    setsid dockerd --storage-driver=vfs --iptables=false --bridge=none \
      --host "unix://$SOCK" --data-root "$DIR/data" --exec-root "$DIR/exec" \
      --pidfile "$DIR/dockerd.pid" </dev/null >"$DIR/dockerd.log" 2>&1 &
  fi
  for _ in $(seq 1 300); do
    answers && break
    sleep 0.1
  done
  if ! answers; then
    log "dockerd did not answer on $SOCK within 30s; last log lines:"
    tail -n 20 "$DIR/dockerd.log" >&2 || true
    exit 1
  fi
fi

if ! docker image inspect "$IMAGE" >/dev/null 2>&1; then
  log "building $IMAGE from Debian's busybox-static and bash"
  work=$(mktemp -d)
  trap 'rm -rf "$work"' EXIT
  mkdir -p "$work/debs" "$work/root"
  # bash is dynamically linked: its libraries come along.
  pkgs=(busybox-static bash libc6 libtinfo6)
  if ! (cd "$work/debs" && apt-get -o APT::Sandbox::User=root download "${pkgs[@]}" >&2); then
    apt-get update >&2
    (cd "$work/debs" && apt-get -o APT::Sandbox::User=root download "${pkgs[@]}" >&2)
  fi
  for deb in "$work"/debs/*.deb; do dpkg -x "$deb" "$work/root"; done
  root="$work/root"
  rm -rf "$root/usr/share/doc" "$root/usr/share/man" "$root/usr/share/info" \
    "$root/usr/share/locale" "$root/usr/lib/x86_64-linux-gnu/gconv" "$root/usr/share/lintian"
  mkdir -p "$root/bin" "$root/sbin" "$root/usr/bin" "$root/usr/sbin" "$root/etc" \
    "$root/tmp" "$root/workspace" "$root/root" "$root/home/agent" "$root/proc" "$root/sys" "$root/dev"
  chmod 1777 "$root/tmp"
  # Applet links, never over a real file (bash stays bash).
  "$root/bin/busybox" --list-full | while read -r applet; do
    [ -e "$root/$applet" ] || [ -L "$root/$applet" ] || ln -s /bin/busybox "$root/$applet"
  done
  ln -sf /bin/busybox "$root/bin/sh"
  cat >"$root/etc/passwd" <<'PASSWD'
root:x:0:0:root:/root:/bin/sh
agent:x:1000:1000:agent:/home/agent:/bin/sh
nobody:x:65534:65534:nobody:/nonexistent:/bin/false
PASSWD
  cat >"$root/etc/group" <<'GROUP'
root:x:0:
agent:x:1000:
nogroup:x:65534:
GROUP
  chown 1000:1000 "$root/home/agent"
  tar -C "$root" -cf - . | docker import \
    --change 'CMD ["/bin/sh"]' --change 'ENV PATH=/usr/local/sbin:/usr/local/bin:/usr/sbin:/usr/bin:/sbin:/bin' \
    - "$IMAGE" >&2
fi

echo "DOCKER_HOST=unix://$SOCK"
