#!/usr/bin/env bash
# Starts the Docker Engine in the background if it is not already answering on
# its unix socket, and waits until it does. Idempotent: safe to call repeatedly
# (CI calls it before `make test`). Needs root and the docker.io package.
set -euo pipefail

SOCK="${DOCKER_SOCK:-/var/run/docker.sock}"
LOG="${DOCKERD_LOG:-/var/log/hoh-dockerd.log}"
WAIT_SEC="${DOCKERD_WAIT_SEC:-60}"

ping_daemon() {
	# /_ping answers "OK" once the API is up; curl or the docker CLI, whichever exists.
	if command -v curl >/dev/null 2>&1; then
		[ "$(curl -s --max-time 2 --unix-socket "$SOCK" http://localhost/_ping 2>/dev/null)" = "OK" ]
	else
		DOCKER_HOST="unix://$SOCK" docker version >/dev/null 2>&1
	fi
}

if ping_daemon; then
	echo "dockerd already running on $SOCK"
	exit 0
fi

if ! command -v dockerd >/dev/null 2>&1; then
	echo "dockerd not found: apt-get install -y docker.io busybox-static" >&2
	exit 1
fi

# A stale pid file from a dead daemon blocks a new start.
# A pid file whose pid is dead, or now belongs to another process, is stale.
if [ -f /var/run/docker.pid ] && [ "$(cat "/proc/$(cat /var/run/docker.pid)/comm" 2>/dev/null)" != dockerd ]; then
	rm -f /var/run/docker.pid
fi

# setsid: the daemons get their own session, so whatever ends the caller's
# process group (a job runner, a test's group kill) does not end them.
if ! pgrep -x dockerd >/dev/null 2>&1; then
	if ! pgrep -x containerd >/dev/null 2>&1 && command -v containerd >/dev/null 2>&1; then
		setsid nohup containerd >>"${LOG%.log}-containerd.log" 2>&1 &
		sleep 1
	fi
	setsid nohup dockerd -H "unix://$SOCK" ${DOCKERD_ARGS:-} >>"$LOG" 2>&1 &
	echo "started dockerd (pid $!), log $LOG"
fi

for _ in $(seq 1 "$WAIT_SEC"); do
	if ping_daemon; then
		echo "dockerd is up on $SOCK"
		exit 0
	fi
	sleep 1
done
echo "dockerd did not answer on $SOCK within ${WAIT_SEC}s; last log lines:" >&2
tail -n 30 "$LOG" >&2 || true
exit 1
