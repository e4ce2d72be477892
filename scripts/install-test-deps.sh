#!/usr/bin/env bash
# Installs and starts what `make test` needs on a fresh Debian machine, and
# does nothing that is already done: Debian's docker.io, busybox-static (test
# images are built from it, nothing is pulled), git, node/npm, strace and ripgrep
# (OpenCode's outside-connection test), chromium (the
# report viewer's browser tests drive it headless), sqlite3 (tests check the
# CLIs' databases after redaction), python3 and unshare (GameCraft's verifier), the pinned coding-agent
# CLIs from npm, a running dockerd, Debian's slurm-wlm and munge with a
# single-node Slurm cluster on localhost (hoh slurm's tests submit to it), and
# Debian's podman (uidmap, slirp4netns, fuse-overlayfs) with the rootless
# Podman service of an unprivileged user (scripts/start-podman.sh; the
# harbor-smoke and container red-team tests run against it). Needs root for
# apt-get and the daemons.
set -euo pipefail
cd "$(dirname "${BASH_SOURCE[0]}")/.."

need=()
command -v dockerd >/dev/null 2>&1 || need+=(docker.io)
[ -x /bin/busybox ] || command -v busybox >/dev/null 2>&1 || need+=(busybox-static)
command -v git >/dev/null 2>&1 || need+=(git)
command -v curl >/dev/null 2>&1 || need+=(curl)
command -v npm >/dev/null 2>&1 || need+=(nodejs npm)
command -v chromium >/dev/null 2>&1 || need+=(chromium)
command -v sqlite3 >/dev/null 2>&1 || need+=(sqlite3) # integrity checks of the CLIs' databases
command -v python3 >/dev/null 2>&1 || need+=(python3) # GameCraft-Bench's own verifier
command -v unshare >/dev/null 2>&1 || need+=(util-linux) # its private user+mount namespace
command -v slurmctld >/dev/null 2>&1 || need+=(slurm-wlm) # hoh slurm's tests
command -v munged >/dev/null 2>&1 || need+=(munge)
command -v strace >/dev/null 2>&1 || need+=(strace) # the CLIs' outside-connection tests
command -v rg >/dev/null 2>&1 || need+=(ripgrep)    # OpenCode downloads it from GitHub when none is on PATH
command -v podman >/dev/null 2>&1 || need+=(podman) # rootless Podman tests
command -v newuidmap >/dev/null 2>&1 || need+=(uidmap)
command -v slirp4netns >/dev/null 2>&1 || need+=(slirp4netns)
command -v fuse-overlayfs >/dev/null 2>&1 || need+=(fuse-overlayfs)
if [ "${#need[@]}" -gt 0 ]; then
	if [ "$(id -u)" != 0 ]; then
		echo "install-test-deps: need root to apt-get install ${need[*]}" >&2
		exit 1
	fi
	echo "install-test-deps: apt-get install ${need[*]}"
	export DEBIAN_FRONTEND=noninteractive
	apt-get update -qq
	apt-get install -y -qq "${need[@]}" >/dev/null
fi

scripts/install-harnesses.sh
scripts/start-dockerd.sh
scripts/start-slurm.sh
scripts/start-podman.sh
