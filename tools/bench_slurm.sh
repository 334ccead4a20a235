#!/bin/sh
# bench_slurm.sh [JOBS] [SECONDS] - the node mode beside Slurm's own
# polling, in the same run (as root, Debian's slurm-wlm and munge): a
# single-node Slurm of this machine (its config, state and munge socket
# in a temporary directory, nothing in /etc touched; the node declares
# JOBS CPUs, config_overrides, so that JOBS one-CPU jobs run at once),
# jobacct_gather/cgroup, JOBS batch jobs that sleep.
#   1. the jobs with Slurm's polling at 1 s (JobAcctGatherFrequency=task=1) and
#      `resource-tracker --jobs slurm -i 1` following them: over SECONDS
#      (default 30) after a 12 s warm-up, the CPU of every slurmstepd and
#      of the node's processes (/proc/PID/schedstat), per job and second,
#      and their PSS (smaps_rollup);
#      (PERF=FILE: `perf record -g` of the node's sampler meanwhile);
#   2. the same jobs again with Slurm's polling off (task=0, reconfigured)
#      and no rt: slurmstepd's CPU without polling, the baseline.
# Slurm's polling is (1) less (2), per job and sample.
set -eu
cd "$(dirname "$0")/.."
N=${1:-100}
SECS=${2:-30}
B=$(pwd)/build
for p in slurmctld slurmd sbatch squeue scancel munged; do
	command -v $p > /dev/null || { echo "needs $p (Debian's slurm-wlm, munge)"; exit 1; }
done
T=$(mktemp -d)
port() { python3 -c 'import socket; s=socket.socket(); s.bind(("127.0.0.1",0)); print(s.getsockname()[1])'; }
fail() { echo "$*" >&2; exit 1; }
. tests/integration/slurm_lib.sh
mkdir -p "$S/ctld" "$S/d"
slurm_munged
slurm_conf rtbench "$N" "SlurmdParameters=config_overrides
MaxJobCount=100000
JobAcctGatherFrequency=task=1" "OverSubscribe=YES"
printf 'CgroupPlugin=autodetect\nConstrainCores=no\nConstrainRAMSpace=yes\n' > "$S/cgroup.conf"
NODEPID=""
stop_all() {
	[ -n "$NODEPID" ] && kill -TERM "$NODEPID" 2> /dev/null || true
	scancel -u root 2> /dev/null || true
	sleep 2
	for f in ctld.pid d.pid munged.pid; do [ -f "$S/$f" ] && kill "$(cat "$S/$f")" 2> /dev/null || true; done
	sleep 1
	rm -rf "$T"
}
trap stop_all EXIT
slurmctld -f "$SLURM_CONF"
slurmd -f "$SLURM_CONF"
for _ in $(seq 100); do sinfo -h -o %t 2> /dev/null | grep -q idle && break; sleep 0.2; done
sinfo -h -o %t | grep -q idle || { echo "this Slurm did not come up: $(tail -3 "$S/d.log")"; exit 1; }

cpu() { # the on-CPU ns of the pids, every thread of each, summed
	for p in "$@"; do cat /proc/$p/task/*/schedstat 2> /dev/null || echo 0; done |
		awk '{s += $1} END {printf "%.0f\n", s}'
}
pss() { # their PSS in KiB, summed
	for p in "$@"; do awk '/^Pss:/ {print $2}' "/proc/$p/smaps_rollup" 2> /dev/null || echo 0; done |
		awk '{s += $1} END {printf "%.0f\n", s}'
}
family() { # the pid and everything below it
	fam="$1" at="$1"
	while [ -n "$at" ]; do
		next=""
		for p in $at; do next="$next $(pgrep -P "$p" | tr '\n' ' ')"; done
		at=$(echo $next)
		fam="$fam $at"
	done
	echo $fam
}
# JOBS sleeping jobs at FREQ (task=FREQ), all running; their slurmstepds
submit() {
	sed -i "s/^JobAcctGatherFrequency=.*/JobAcctGatherFrequency=task=$1/" "$S/slurm.conf"
	scontrol reconfigure
	sleep 2
	for i in $(seq "$N"); do
		sbatch --parsable -J "b$i" -c 1 --mem=16M -o /dev/null --wrap "sleep 3600" > /dev/null
	done
	for _ in $(seq 300); do
		[ "$(squeue -h -t R | wc -l)" -ge "$N" ] && break
		sleep 0.2
	done
	[ "$(squeue -h -t R | wc -l)" -ge "$N" ] || { echo "only $(squeue -h -t R | wc -l) of $N jobs run"; exit 1; }
}
echo "$N jobs, $SECS s each measure, this machine ($(nproc) CPUs)"
submit 1
"$B/rt-recorder" --jobs slurm -i 1 --store "$T/st" 2> "$T/node.err" &
NODEPID=$!
sleep 12
STEPD=$(pgrep -x slurmstepd | tr '\n' ' ')
NODEFAM=$(family "$NODEPID")
c0s=$(cpu $STEPD) c0n=$(cpu $NODEFAM)
if [ -n "${PERF:-}" ]; then # (PERF=FILE: the node's sampler profiled meanwhile)
	perf record -g -o "$PERF" -p "$(pgrep -P "$NODEPID" | head -1)" -- sleep "$SECS" > /dev/null 2>&1 &
fi
sleep "$SECS"
c1s=$(cpu $STEPD) c1n=$(cpu $NODEFAM)
ps1=$(pss $STEPD) pn=$(pss $NODEFAM)
runs=$("$B/rt-export" --store "$T/st" runs | awk 'NR > 1 && $6 == "running"' | wc -l)
kill -TERM "$NODEPID"
NODEPID=""
scancel -u root
for _ in $(seq 150); do [ -z "$(squeue -h)" ] && break; sleep 0.2; done
sleep 3
submit 0
sleep 12
STEPD0=$(pgrep -x slurmstepd | tr '\n' ' ')
c0b=$(cpu $STEPD0)
sleep "$SECS"
c1b=$(cpu $STEPD0)
pb=$(pss $STEPD0)
awk -v n="$N" -v s="$SECS" -v sp="$((c1s - c0s))" -v nd="$((c1n - c0n))" -v bs="$((c1b - c0b))" \
	-v ps1="$ps1" -v pn="$pn" -v pb="$pb" -v runs="$runs" 'BEGIN {
	poll = (sp - bs) / 1000 / n / s
	rt = nd / 1000 / n / s
	printf "slurmstepd, polling at 1 s:  %7.1f us a job and second, PSS %7.1f MiB\n", sp / 1000 / n / s, ps1 / 1024
	printf "slurmstepd, polling off:     %7.1f us a job and second, PSS %7.1f MiB\n", bs / 1000 / n / s, pb / 1024
	printf "Slurm'\''s polling (the two apart): %7.1f us a job and second\n", poll
	printf "rt --jobs slurm -i 1 (%d runs):  %7.1f us a job and sample, PSS %7.1f MiB\n", runs, rt, pn / 1024
	if (rt > 0) printf "Slurm'\''s polling / rt: %.2fx (goal >= 5x)\n", poll / rt
}'
