#!/usr/bin/env bash
# Starts rootless Podman's Docker-compatible API for an unprivileged user
# (default hoh-podman), unless it already answers: creates the user with
# subordinate uid/gid ranges, its XDG_RUNTIME_DIR (/run/user/<uid>), and runs
# `podman system service` as that user on $XDG_RUNTIME_DIR/podman/podman.sock.
# Idempotent: safe to call repeatedly (CI calls it before `make test`), also
# after its processes were killed. Needs root and Debian's podman, uidmap,
# slirp4netns and fuse-overlayfs. Prints the socket's DOCKER_HOST on its last line.
set -euo pipefail

USER_NAME="${HOH_PODMAN_USER:-hoh-podman}"
WAIT_SEC="${PODMAN_WAIT_SEC:-60}"

for bin in podman newuidmap newgidmap; do
	if ! command -v "$bin" >/dev/null 2>&1; then
		echo "$bin not found: apt-get install -y podman uidmap slirp4netns fuse-overlayfs" >&2
		exit 1
	fi
done
if [ "$(id -u)" != 0 ]; then
	echo "start-podman: need root to create $USER_NAME and start its podman service" >&2
	exit 1
fi

if ! id -u "$USER_NAME" >/dev/null 2>&1; then
	useradd -m -s /bin/sh "$USER_NAME"
fi
uid="$(id -u "$USER_NAME")"
home="$(getent passwd "$USER_NAME" | cut -d: -f6)"
# useradd adds ranges on Debian; an older user may lack them.
for f in /etc/subuid /etc/subgid; do
	touch "$f"
	if ! grep -q "^$USER_NAME:" "$f"; then
		# A range above any other entry's.
		start="$(awk -F: 'BEGIN {m = 100000} {e = $2 + $3; if (e > m) m = e} END {print m}' "$f")"
		echo "$USER_NAME:$start:65536" >>"$f"
	fi
done

run="/run/user/$uid"
mkdir -p "$run"
chown "$USER_NAME:" "$run"
chmod 0700 "$run"
sock="$run/podman/podman.sock"
as_user() {
	runuser -u "$USER_NAME" -- env -i HOME="$home" USER="$USER_NAME" LOGNAME="$USER_NAME" \
		XDG_RUNTIME_DIR="$run" PATH=/usr/local/sbin:/usr/local/bin:/usr/sbin:/usr/bin:/sbin:/bin "$@"
}
ping_service() {
	[ "$(curl -s --max-time 2 --unix-socket "$sock" http://d/_ping 2>/dev/null)" = "OK" ]
}

if ! ping_service; then
	# When the service, its pause process and conmons were killed (a machine whose
	# processes were stopped but whose /run was kept), podman refuses every command
	# with "invalid internal status" until `podman system migrate` resets the pause
	# process and marks the dead containers stopped.
	if ! as_user podman info >/dev/null 2>&1; then
		echo "start-podman: podman's state outlived its processes; podman system migrate" >&2
		as_user podman system migrate >&2 || true
	fi
	# No systemd here: the service runs until killed (--time=0), detached.
	mkdir -p "$run/podman"
	chown "$USER_NAME:" "$run/podman"
	rm -f "$sock"
	log="$home/podman-service.log"
	as_user sh -c "setsid podman system service --time=0 unix://$sock </dev/null >>'$log' 2>&1 &"
	for _ in $(seq 1 "$((WAIT_SEC * 2))"); do
		ping_service && break
		sleep 0.5
	done
	if ! ping_service; then
		echo "start-podman: the service did not answer on $sock within ${WAIT_SEC}s; its log:" >&2
		tail -n 20 "$log" >&2 || true
		exit 1
	fi
fi
echo "rootless podman ($USER_NAME, uid $uid) answers:"
echo "DOCKER_HOST=unix://$sock"
