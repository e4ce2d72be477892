#!/usr/bin/env bash
# Starts a single-node Slurm test cluster on this machine (munged, slurmctld
# and slurmd on localhost) unless one already answers, and waits until its
# node takes jobs. Idempotent: safe to call repeatedly (CI calls it before
# `make test`). Needs root and Debian's slurm-wlm and munge packages. A
# slurm.conf this script did not write (a real cluster's) is never touched.
set -euo pipefail

CONF=/etc/slurm/slurm.conf
MARK="# written by hoh scripts/start-slurm.sh"
LOGDIR=/var/log/slurm
WAIT_SEC="${SLURM_WAIT_SEC:-60}"

node_ready() {
	# The node of the default partition is idle, mixed or allocated: it takes jobs.
	local state
	state="$(sinfo -h -o '%t' 2>/dev/null | head -n1)" || return 1
	case "$state" in idle* | mix* | alloc* | comp*) return 0 ;; esac
	return 1
}

if command -v sinfo >/dev/null 2>&1 && scontrol ping >/dev/null 2>&1 && node_ready; then
	echo "slurm already running ($(sinfo -h -o '%P %D node(s) %t' | head -n1))"
	exit 0
fi

for bin in munged slurmctld slurmd sbatch; do
	if ! command -v "$bin" >/dev/null 2>&1; then
		echo "$bin not found: apt-get install -y slurm-wlm munge" >&2
		exit 1
	fi
done
if [ "$(id -u)" != 0 ]; then
	echo "start-slurm: need root to start munged, slurmctld and slurmd" >&2
	exit 1
fi

# munge: a key (the package's postinst usually made one) and a running daemon.
if [ ! -s /etc/munge/munge.key ]; then
	if command -v mungekey >/dev/null 2>&1; then
		mungekey --create --keyfile=/etc/munge/munge.key
	else
		dd if=/dev/urandom of=/etc/munge/munge.key bs=1024 count=1 status=none
	fi
fi
chown munge:munge /etc/munge/munge.key
chmod 0400 /etc/munge/munge.key
mkdir -p /run/munge /var/log/munge /var/lib/munge
chown munge:munge /run/munge /var/log/munge /var/lib/munge
if ! munge -n 2>/dev/null | unmunge >/dev/null 2>&1; then
	setsid runuser -u munge -- munged --force </dev/null >/dev/null 2>&1 || true
	for _ in $(seq 1 20); do
		munge -n 2>/dev/null | unmunge >/dev/null 2>&1 && break
		sleep 0.5
	done
	munge -n | unmunge >/dev/null
fi

host="$(hostname -s)"
if [ ! -f "$CONF" ] || head -n1 "$CONF" | grep -qF "$MARK"; then
	cpus="$(nproc)"
	# Four CPUs at least, so four one-CPU shards run at once on a small CI
	# machine (config_overrides lets the node claim more than it has).
	[ "$cpus" -lt 4 ] && cpus=4
	mem="$(awk '/MemTotal/ {print int($2/1024/2)}' /proc/meminfo)"
	mkdir -p /etc/slurm
	cat >"$CONF.new" <<EOF
$MARK: a single-node test cluster
ClusterName=hoh-test
SlurmctldHost=$host(127.0.0.1)
SlurmUser=root
AuthType=auth/munge
StateSaveLocation=/var/spool/slurmctld
SlurmdSpoolDir=/var/spool/slurmd
SlurmctldPidFile=/run/slurmctld.pid
SlurmdPidFile=/run/slurmd.pid
SlurmctldLogFile=$LOGDIR/slurmctld.log
SlurmdLogFile=$LOGDIR/slurmd.log
ProctrackType=proctrack/linuxproc
TaskPlugin=task/none
JobAcctGatherType=jobacct_gather/none
AccountingStorageType=accounting_storage/none
JobCompType=jobcomp/none
MpiDefault=none
SchedulerType=sched/backfill
SelectType=select/cons_tres
SelectTypeParameters=CR_CPU
ReturnToService=2
MinJobAge=3600
KillWait=10
SlurmdParameters=config_overrides
NodeName=$host NodeAddr=127.0.0.1 CPUs=$cpus RealMemory=$mem State=UNKNOWN
PartitionName=debug Nodes=ALL Default=YES MaxTime=INFINITE State=UP
EOF
	if ! cmp -s "$CONF.new" "$CONF"; then
		mv "$CONF.new" "$CONF"
		# A running daemon has the old config: start them again.
		for pid in /run/slurmctld.pid /run/slurmd.pid; do
			[ -f "$pid" ] && kill "$(cat "$pid")" 2>/dev/null || true
		done
		sleep 2
	else
		rm -f "$CONF.new"
	fi
fi
mkdir -p /var/spool/slurmctld /var/spool/slurmd "$LOGDIR"

# setsid: the daemons get their own session, so whatever ends the caller's
# process group does not end them.
pgrep -x slurmctld >/dev/null 2>&1 || setsid slurmctld </dev/null >/dev/null 2>&1
pgrep -x slurmd >/dev/null 2>&1 || setsid slurmd -N "$host" </dev/null >/dev/null 2>&1

for _ in $(seq 1 "$WAIT_SEC"); do
	if scontrol ping >/dev/null 2>&1; then
		state="$(sinfo -h -o '%t' 2>/dev/null | head -n1)"
		case "$state" in
		down* | drain* | fail*)
			# A node left down by an earlier stop comes back.
			scontrol update NodeName="$host" State=RESUME >/dev/null 2>&1 || true
			;;
		esac
		if node_ready; then
			echo "slurm running: $(sinfo -h -o '%P %D node(s) %c cpus %t' | head -n1)"
			exit 0
		fi
	fi
	sleep 1
done
echo "slurm did not come up within ${WAIT_SEC}s; see $LOGDIR/slurmctld.log and $LOGDIR/slurmd.log" >&2
tail -n 20 "$LOGDIR/slurmctld.log" "$LOGDIR/slurmd.log" >&2 || true
exit 1
