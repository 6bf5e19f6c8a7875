#!/usr/bin/env bash
# Stages beside the binary what deploy/Dockerfile copies into the image
# besides it: the host's CA bundle (ca-certificates.crt) and the empty
# data/ folder that becomes the /data volume. Used by scripts/image/build.sh
# and by the release's before hook (scripts/release/prepare.sh).
#   scripts/image/stage.sh DIR
set -euo pipefail
dir=${1:?usage: scripts/image/stage.sh DIR}
mkdir -p "$dir/data"
for f in /etc/ssl/certs/ca-certificates.crt /etc/pki/tls/certs/ca-bundle.crt /etc/ssl/cert.pem; do
  if [ -s "$f" ]; then cp "$f" "$dir/ca-certificates.crt"; exit 0; fi
done
echo "image: no CA certificate bundle on this host (install ca-certificates)" >&2
exit 1
