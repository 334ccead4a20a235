#!/bin/sh
# A job OOM-killed inside a small memory cgroup: the tracker exits with the
# job's 137 (SIGKILL), and the run says so: memory.oom_kills >= 1 in a live
# JSON line and in the replay. Needs root for the cgroup (skips without).
. "$(dirname "$0")/lib.sh"
if [ "$(id -u)" != 0 ]; then
	echo "skip: needs root (a memory cgroup)"
	exit 0
fi
SWAP=""
if [ -w /sys/fs/cgroup/memory ]; then
	CG=/sys/fs/cgroup/memory/rt-oom-$$
	LIMIT=memory.limit_in_bytes
	[ -e /sys/fs/cgroup/memory/memory.memsw.limit_in_bytes ] && SWAP=memory.memsw.limit_in_bytes
elif grep -qw memory /sys/fs/cgroup/cgroup.controllers 2>/dev/null && [ -w /sys/fs/cgroup ]; then
	CG=/sys/fs/cgroup/rt-oom-$$
	LIMIT=memory.max
	SWAP=memory.swap.max
	grep -qw memory /sys/fs/cgroup/cgroup.subtree_control ||
		echo +memory > /sys/fs/cgroup/cgroup.subtree_control || {
		echo "skip: cannot enable the memory controller"
		exit 0
	}
else
	echo "skip: no writable memory cgroup controller on this machine"
	exit 0
fi
mkdir "$CG" 2>/dev/null || {
	echo "skip: cannot make a memory cgroup here"
	exit 0
}
trap 'rmdir "$CG" 2>/dev/null; cleanup' EXIT
# a delegated or containerized hierarchy may refuse limits or moves: skip
if ! echo $((64 << 20)) > "$CG/$LIMIT" 2>/dev/null ||
	! sh -c 'echo $$ > "$1/cgroup.procs"' sh "$CG" 2>/dev/null; then
	echo "skip: this memory cgroup takes no limit or no process"
	exit 0
fi
# v1's memsw limit must be >= the memory limit; v2's swap.max: no swap at all
if [ -n "$SWAP" ] && [ -e "$CG/$SWAP" ]; then
	case $SWAP in
	memory.swap.max) echo 0 > "$CG/$SWAP" 2>/dev/null || true ;;
	*) echo $((64 << 20)) > "$CG/$SWAP" 2>/dev/null || true ;;
	esac
fi
set +e
"$RT" -i 0.2 -- sh -c 'echo $$ > "$1/cgroup.procs" && exec python3 -c "
import time
time.sleep(6)  # the tracker looks for this cgroup every 5 s
a = bytearray(512 << 20)
time.sleep(1)"' sh "$CG" 2> "$T/err"
rc=$?
set -e
[ $rc -eq 137 ] || fail "exit $rc, not 137 (the job's SIGKILL): $(tail -3 "$T/err")"
grep -q '"oom_kills":[1-9]' "$T/err" || fail "no live line with oom_kills >= 1: $(tail -2 "$T/err")"
# the job's cgroup: its limit, and the kill counted there too (v1 needs 4.13)
tail -1 "$T/err" | python3 -c '
import json, sys
cg = json.loads(sys.stdin.read())["cgroup"]
assert cg["memory_limit_mib"] == 64, cg
assert cg["oom_kills"] is None or cg["oom_kills"] >= 1, cg
assert cg["memory_peak_mib"] is None or cg["memory_peak_mib"] >= 60, cg
' || fail "cgroup object of the last line: $(tail -1 "$T/err" | head -c 300)"
"$EXP" replay latest -f json | grep -q '"oom_kills":[1-9]' || fail "the replay has no OOM kill"
"$EXP" show latest | grep -q '"status":.*"killed"' || fail "status: $("$EXP" show latest | grep status)"
# the answers say it, and the recommendation accounts for it
"$EXP" summary latest > "$T/summary" || fail "summary"
grep -q "the job was OOM-killed" "$T/summary" || fail "summary: $(cat "$T/summary")"
"$EXP" recommend latest --json | python3 -c '
import json, sys
r = json.load(sys.stdin)["recommendation"]
assert r["memory_mib"] >= 128, r
assert "OOM" in (r["raised_because"] or ""), r
assert r["memory_at_least"] is True, r
' || fail "recommendation: $("$EXP" recommend latest --json)"
# the memory at the kill is the cgroup's (at its limit), never a sample's
# from before the growth; the recommendation is a floor, said "at least"
# (it said "with 0.01 of 0.06 GiB in use" beside a 64 MiB peak: issue 39)
grep -q "the job was OOM-killed at [0-9:]* with 0.06 of 0.06 GiB in use" "$T/summary" ||
	fail "the OOM line: $(grep OOM "$T/summary")"
grep -q "recommended .*at least [0-9]* MiB memory" "$T/summary" || fail "not 'at least': $(grep recommended "$T/summary")"
"$EXP" summary latest --format json | python3 -c '
import json, sys
f = json.load(sys.stdin)["findings"]
assert f["cgroup_memory_peak_mib"] >= 60, f
' || fail "findings: $("$EXP" summary latest --format json | head -c 600)"
ok "OOM-killed job: exit 137, memory.oom_kills in the live line and the replay, status killed; the summary says so at the limit and memory is raised above it, 'at least'"
