#!/bin/sh
# Builds hoh-smoke-busybox:latest, the local base image of the harbor-smoke dataset: FROM scratch
# with a static busybox and its applets in /bin (nothing is pulled). Needs busybox-static and the
# docker CLI. Idempotent.
set -eu
bb=$(command -v busybox || true)
[ -n "$bb" ] || { echo "no busybox: apt-get install -y busybox-static" >&2; exit 1; }
ctx=$(mktemp -d)
trap 'rm -rf "$ctx"' EXIT
mkdir -p "$ctx/rootfs/bin" "$ctx/rootfs/tmp" "$ctx/rootfs/etc" "$ctx/rootfs/logs/agent" "$ctx/rootfs/logs/verifier"
cp "$bb" "$ctx/rootfs/bin/busybox"
for a in $("$bb" --list); do [ "$a" = busybox ] || ln -sf busybox "$ctx/rootfs/bin/$a"; done
echo 'root:x:0:0:root:/root:/bin/sh' > "$ctx/rootfs/etc/passwd"
printf 'FROM scratch\nCOPY rootfs/ /\nENV PATH=/usr/local/bin:/usr/bin:/bin\n' > "$ctx/Dockerfile"
docker build -q --network none -t hoh-smoke-busybox:latest "$ctx"
