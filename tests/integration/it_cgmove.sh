#!/bin/sh
# A wrapped job that moves itself into another CPU cgroup mid-run: the
# job's cgroup has one owner (recorder/cgroup.c), which notices the move
# within 5 s. The interval across the move has no cgroup CPU usage (null,
# not a jump or a wrong 0 from subtracting two cgroups' counters), and
# after it the usage is the new cgroup's alone: about one core for a job
# that spins one. Needs root (skips without).
. "$(dirname "$0")/lib.sh"
if [ "$(id -u)" != 0 ]; then
	echo "skip: needs root (a CPU cgroup)"
	exit 0
fi
if [ -w /sys/fs/cgroup/cpuacct ] && [ ! -e /sys/fs/cgroup/cgroup.controllers ]; then
	CGS="/sys/fs/cgroup/cpuacct/rt-move-$$"
	[ -d /sys/fs/cgroup/cpu ] && [ "$(readlink -f /sys/fs/cgroup/cpu)" != "$(readlink -f /sys/fs/cgroup/cpuacct)" ] &&
		CGS="$CGS /sys/fs/cgroup/cpu/rt-move-$$"
elif grep -qw cpu /sys/fs/cgroup/cgroup.controllers 2>/dev/null && [ -w /sys/fs/cgroup ]; then
	CGS="/sys/fs/cgroup/rt-move-$$"
else
	echo "skip: no writable CPU cgroup controller on this machine"
	exit 0
fi
for cg in $CGS; do
	mkdir "$cg" 2>/dev/null || {
		echo "skip: cannot make a cgroup here"
		exit 0
	}
done
trap 'for cg in $CGS; do rmdir "$cg" 2>/dev/null; done; cleanup' EXIT
# the job spins one core for 2 s where the recorder is, moves itself, spins 8 s more
"$RT" -i 0.5 -- sh -c '
spin() { python3 -c "import time
e = time.time() + $1
while time.time() < e: pass"; }
spin 2
for cg in "$@"; do echo $$ > "$cg/cgroup.procs" || exit 3; done
spin 8' sh $CGS 2> "$T/err" || fail "job or tracker: $(tail -3 "$T/err")"
python3 - "$T/err" <<'PY' || fail "cgroup usage across the move (lines in $T/err)"
import json, sys
lines = [json.loads(l) for l in open(sys.argv[1]) if l.startswith("{")]
use = [(l["cpu"]["cgroup_usage_secs"], l.get("actual_interval_ms", 0) / 1000) for l in lines]
print("cgroup_usage_secs per line:", [u for u, _ in use])
nulls = [i for i, (u, _) in enumerate(use) if u is None]
assert nulls, "no line without usage: the move was not noticed"
first = nulls[0]
assert any(u is not None for u, _ in use[:first]), "no usage before the move"
after = [(u, dt) for u, dt in use[first + 1:] if u is not None]
assert len(after) >= 4, "too few lines after the move: %r" % (after,)
for u, dt in after:
    # the new cgroup holds the spinning job alone: one core, give or take
    assert u <= dt * 1.15 + 0.02, (u, dt)
# the last line is the job's exit (a short interval): leave it out of the floor
for u, dt in after[:-1]:
    assert u >= dt * 0.25, (u, dt)
PY
ok "a job moving to another CPU cgroup: the interval across the move has no cgroup usage, the lines after it are the new cgroup's (about one core)"
