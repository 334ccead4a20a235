#!/bin/sh
# A crash or a restart of the node mode costs seconds, never runs (issue
# 55): 20 live jobs (one spinning throughout, the others asleep, then a
# short burn) under --jobs, while
#   1. the node's sampler is killed with SIGKILL (its watcher starts it
#      again within a second),
#   2. the watcher is killed with SIGKILL (the sampler hands its runs over
#      and ends; a node started again goes on with them),
#   3. the node is stopped with TERM and started again (a restart, an
#      upgrade).
# Every job keeps one run from its first sample to its end: the same run
# ids throughout, none crashed; each run's samples numbered on with no
# hole or double, time going forward (nothing lost or doubled); the gaps counted in its
# samples_skipped; its CPU its group's counter (read by the test), the
# gaps' CPU included. A new group made at a job's path is a new job.
# Needs root (cgroups); skips without.
. "$(dirname "$0")/lib.sh"
[ "$(id -u)" -eq 0 ] || { echo "skip: needs root (cgroups)"; exit 77; }
CG="python3 $(dirname "$0")/cgjobs.py"
TOP=/rt-restart-$$
$CG mk $TOP/probe 2> /dev/null || { echo "skip: cannot make cgroups here"; exit 77; }
$CG rm $TOP/probe
trap 'for f in $(find /sys/fs/cgroup/*$TOP /sys/fs/cgroup$TOP -name cgroup.procs 2> /dev/null); do
	for p in $(cat "$f" 2> /dev/null); do kill -9 "$p" 2> /dev/null || true; done; done
	$CG rm $TOP; [ -z "${KEEP_T:-}" ] || cp -r "$T" "$KEEP_T"; cleanup' EXIT
export RT_STORE="$T/st"
N=20
# job j0 spins 31 s; the others (g0..g18, made at once) sleep 30 s: every
# job outlives the three phases, whatever the load (the phases take about
# 15 s; jobs made one by one, the first ones ended before the last phase
# on a loaded machine)
$CG mk $TOP/j0
$CG job $TOP/j0 0 31 4 > /dev/null
$CG many $TOP $((N - 1)) 30 > /dev/null
node() { # NAME: the node in the background, W its watcher's pid
	"$REC" --jobs "$TOP/*" -i 0.25 2> "$T/$1.err" &
	W=$!
	track $W
}
runs_as() { # STATUS [JOB]: "id:job" of the runs in that state (of that job), sorted
	"$EXP" runs | awk -v s="$1" -v j="${2:-}" 'NR > 1 && $6 == s && (j == "" || $NF == j) {print $1 ":" $NF}' |
		sort | tr '\n' ' '
}
sampler_of() { pgrep -P "$1" -f -- "--jobs $TOP/" | head -1; }
node first
sleep 2
ids=$(runs_as running)
[ "$(echo "$ids" | wc -w)" = $N ] || fail "runs at the start: '$ids' ($("$EXP" runs))"

# 1. the sampler killed: started again by its watcher, the same runs
S1=$(sampler_of $W)
[ -n "$S1" ] || fail "no sampler below the watcher $W: $(pgrep -af -- "$TOP/")"
kill -9 "$S1"
for _ in $(seq 20); do
	S2=$(sampler_of $W)
	[ -n "$S2" ] && [ "$S2" != "$S1" ] && break
	sleep 0.1
done
[ -n "$S2" ] && [ "$S2" != "$S1" ] || fail "the watcher did not start a new sampler within 2 s"
sleep 1.5
[ "$(runs_as running)" = "$ids" ] || fail "after the sampler's SIGKILL: '$(runs_as running)', not '$ids'"
grep -q "the node's sampler (pid $S1) was killed by SIGKILL; started again" "$T/first.err" ||
	fail "the watcher's line: $(cat "$T/first.err")"
ok "the sampler killed with SIGKILL: a new one within 2 s, the same $N runs going on"

# 2. the watcher killed: its sampler hands over and ends; a new node goes on
kill -9 $W
for _ in $(seq 50); do [ -z "$(pgrep -f -- "--jobs $TOP/")" ] && break; sleep 0.1; done
[ -z "$(pgrep -f -- "--jobs $TOP/")" ] || fail "the dead watcher's sampler lives on"
node second
sleep 2
for _ in $(seq 50); do [ "$(runs_as running)" = "$ids" ] && break; sleep 0.1; done
[ "$(runs_as running)" = "$ids" ] ||
	fail "after the watcher's SIGKILL: '$(runs_as running)', not '$ids' ($("$EXP" runs); $(cat "$T/second.err"))"
ok "the watcher killed with SIGKILL: its sampler handed over, the node started again goes on with the same $N runs"

# 3. TERM and a start again (a restart, an upgrade)
kill -TERM $W
wait_pid $W 15 || fail "the node did not stop on TERM"
[ "$(runs_as finished)" = "$ids" ] || fail "handed over at TERM: '$(runs_as finished)'"
sleep 0.5
node third
t0=$(date +%s.%N)
for _ in $(seq 50); do [ "$(runs_as running)" = "$ids" ] && break; sleep 0.1; done
[ "$(runs_as running)" = "$ids" ] ||
	fail "after TERM and a start: '$(runs_as running)', not '$ids' ($("$EXP" runs); $(cat "$T/third.err"))"
echo "every run going on $(python3 -c "import time; print('%.1f' % (time.time() - $t0))") s after the start"

# every job to its end, then the runs judged against the groups
for _ in $(seq 400); do
	[ -z "$(runs_as running)" ] && break
	sleep 0.1
done
[ "$(runs_as finished)" = "$ids" ] || fail "at the jobs' ends: $("$EXP" runs)"
crashed=$(runs_as crashed)
[ -z "$crashed" ] || fail "crashed runs: $crashed"
for r in $ids; do
	id=${r%%:*} job=${r#*:}
	truth=$($CG cpu $TOP/$job)
	"$EXP" show "$id" > "$T/m$id.json"
	"$EXP" replay "$id" -f json | python3 -c "
import json, sys
m = json.load(open('$T/m$id.json'))
L = [json.loads(l) for l in sys.stdin]
# (a line per interval: sample 0 is the base of the first)
seqs = [l['seq'] for l in L]
assert seqs == list(range(1, len(L) + 1)), ('seqs', seqs[:5], len(L))
t = [l['timestamp_secs'] for l in L]
assert all(b >= a for a, b in zip(t, t[1:])), 'time goes back'
assert all(l['actual_interval_ms'] > 0 for l in L[1:]), 'an interval of no time'
assert m['last_seq'] == len(L), (m['last_seq'], len(L))
skipped = m.get('samples_skipped') or 0
# three gaps, the last at least 0.5 s (two deadlines at 0.25 s); the
# samples and the skipped ones cover the run's span (below)
assert skipped >= 2, ('skipped', skipped)
span = t[-1] - t[0]
assert abs((len(L) - 1 + skipped) * 0.25 - span) <= 0.25 * 8, ('coverage', len(L), skipped, span)
cpu = (m['cgroup']['cpu_before_secs'] or 0) + sum(l['cpu']['process_utime_secs'] + l['cpu']['process_stime_secs'] for l in L)
truth = float('$truth')
assert abs(cpu - truth) <= 0.02 * truth + 0.02, ('cpu', cpu, truth)
print('$job', len(L), skipped, round(cpu, 3), truth)" > "$T/judge$id" 2>&1 ||
		fail "run $id ($job): $(cat "$T/judge$id")"
done
echo "job samples skipped cpu truth: $(cat "$T"/judge* | sort -V | head -3 | tr '\n' ';') ..."

# a new group made at a job's path while no node runs is a new job: the
# run handed over stays as it ended (the other jobs' groups, empty now,
# are idle jobs of the next node, as at any start)
kill_in() { for f in $(find /sys/fs/cgroup/*$1 /sys/fs/cgroup$1 -name cgroup.procs 2> /dev/null); do
	for p in $(cat "$f" 2> /dev/null); do kill -9 "$p" 2> /dev/null || true; done; done; }
$CG rm $TOP/g1
$CG mk $TOP/g1
$CG job $TOP/g1 0 20 1 > /dev/null
sleep 1.5
r1=$(runs_as running g1)
[ "$(echo "$r1" | wc -w)" = 1 ] || fail "the group made again at g1's path: '$r1' ($("$EXP" runs))"
kill -TERM $W
wait_pid $W 15 || fail "the node did not stop"
kill_in $TOP/g1
$CG rm $TOP/g1
$CG mk $TOP/g1
$CG job $TOP/g1 0 20 1 > /dev/null
node fourth
sleep 1.5
r2=$(runs_as running g1)
[ "$(echo "$r2" | wc -w)" = 1 ] && [ "$r2" != "$r1" ] ||
	fail "a new group at a handed-over run's path: running '$r2', the handed-over run '$r1' ($("$EXP" runs))"
[ "$(runs_as finished g1 | grep -c "${r1% }")" = 1 ] || fail "the handed-over run of the old group: $("$EXP" runs)"
kill -TERM $W
wait_pid $W 15 || fail "the last node did not stop"
ok "$N jobs across the sampler's SIGKILL, the watcher's SIGKILL and a TERM and start: one run each from its first sample to its end (the same ids), samples numbered on with no hole or double, the gaps in samples_skipped, CPU its group's counter; a group made again at a job's path is a new job (${r1}then $r2)"
