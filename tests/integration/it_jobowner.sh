#!/bin/sh
# What a job's owner can do to root's node mode (issue 52): a test user
# owns a delegated group and runs jobs in it.
#   2. nested 80 levels deep (below the walk's bound of 64): the run goes
#      on while the job runs (v2's cgroup.events decides its end), says
#      once that members below are hidden, and its CPU is its group's
#   3. who the job is and what it was given come from what it cannot
#      forge: a member's SLURM_JOB_USER=root, SLURM_CPUS_ON_NODE=1e12 and
#      CUDA_VISIBLE_DEVICES=0 (on a host without a GPU) are its claims
#   4. at a low RLIMIT_NOFILE: errors of the listing are not endings;
#      three jobs are each tracked to their real end
# Needs root (cgroups, a second user); skips without.
. "$(dirname "$0")/lib.sh"
[ "$(id -u)" -eq 0 ] || { echo "skip: needs root (cgroups)"; exit 77; }
CG="python3 $(dirname "$0")/cgjobs.py"
TOP=/rt-own-$$
$CG mk $TOP/probe 2>/dev/null || { echo "skip: cannot make cgroups here"; exit 77; }
U=rtown$$
useradd -M -N -s /bin/sh "$U" 2>/dev/null || { $CG rm $TOP; echo "skip: cannot add a user"; exit 77; }
# Slurm's v1 layout, below this test's own group (not at the top, where
# it_cgroup's --jobs slurm, which may run beside this test, looks)
SLP=$TOP/slurm
# at the end: every process still in the test's groups killed, then the
# groups removed (a job of section 5 runs 9 s)
sweep() {
	for f in $(find /sys/fs/cgroup/*$TOP /sys/fs/cgroup$TOP -name cgroup.procs 2> /dev/null); do
		for p in $(cat "$f" 2> /dev/null); do kill -9 "$p" 2> /dev/null || true; done
	done
	$CG rm $TOP
}
trap 'sweep; userdel "$U" 2>/dev/null || true; cleanup' EXIT
UID_U=$(id -u "$U")
delegate() { # PATH: the group and all below it the user's (a delegated subtree)
	for m in /sys/fs/cgroup /sys/fs/cgroup/*; do
		[ -d "$m$1" ] && chown -R "$U" "$m$1"
	done
	return 0
}
# record G INTERVAL NAME: rt-recorder --cgroup G in the background, its
# stderr in $T/NAME.err; R is its pid
record() {
	"$REC" --cgroup "$1" -i "$2" --quiet 2> "$T/$3.err" &
	R=$!
	track $R
	sleep 0.3
}
near() { python3 -c "import sys; a, b, tol = map(float, sys.argv[1:]); sys.exit(abs(a - b) > tol * b)" "$@"; }
run_cpu() { "$EXP" replay "$1" | python3 -c "
import json, sys
print(sum(json.loads(l)['cpu']['process_utime_secs'] + json.loads(l)['cpu']['process_stime_secs'] for l in sys.stdin))"; }

# --- 2. a job nested deeper than the walk's bound
G=$TOP/deep
deep=$G
for d in $(seq 80); do deep=$deep/d; done
$CG mk "$deep"
delegate $G
record $G 0.25 deep
$CG job "$deep" 0 5 1 AS="$U" > /dev/null
sleep 4.5
kill -0 $R 2>/dev/null || fail "the run of a job nested 80 deep ended while it ran: $(cat "$T/deep.err")"
wait_pid $R 15 || fail "the run did not end when the deep job did"
V2=$($CG v2)
if [ -n "$V2" ]; then
	st=$("$EXP" show latest | python3 -c "import json,sys; m=json.load(sys.stdin); print(m['status'], m['cgroup'].get('bounds_hit'))")
	[ "$st" = "finished ['depth']" ] || fail "the deep job's run: $st"
fi
[ "$(grep -c 'deeper than 64 levels' "$T/deep.err")" -eq 1 ] || fail "the hidden members not said once: $(cat "$T/deep.err")"
"$EXP" summary latest | grep -q "processes read .*nest deeper than 64 levels: its CPU and memory are its group's counters" ||
	fail "the summary does not say the members were read in part: $("$EXP" summary latest)"
truth=$($CG cpu $G)
got=$(run_cpu latest)
near "$got" "$truth" 0.03 || fail "the deep job's CPU: rt $got s, its group $truth s"
ok "a job 80 groups deep: tracked to its end (CPU $got s, its group's $truth s), the hidden members said once"

# --- 3. a forged identity and allocation
export RT_STORE="$T/forge"
G3=$SLP/uid_$UID_U/job_77
$CG mk $G3
delegate $SLP/uid_$UID_U
record $G3 0.25 forge
$CG job $G3 0 1 1 AS="$U" SLURM_JOB_ID=77 SLURM_JOB_NAME=forged SLURM_JOB_USER=root \
	SLURM_CPUS_ON_NODE=999999999999 SLURM_MEM_PER_NODE=99999999 CUDA_VISIBLE_DEVICES=0 > /dev/null
wait_pid $R 15 || fail "the forged job's run did not end"
"$EXP" show latest | python3 -c "
import json, sys
m = json.load(sys.stdin); c = m['cgroup']; a = m['allocation']
assert c['user'] == '$U' and c['job_id'] == '77' and c['name'] == 'forged', c
assert a['cpu_from'] in ('cgroup', 'host') and a['cpu'] <= $(nproc), a
assert a['memory_from'] in ('cgroup', 'host') and a['gpu'] == 0 and a['gpu_from'] == 'host', a
cl = a['claims']
assert cl['cpu'] == 999999999999 and cl['memory_bytes'] == 99999999 << 20 and cl['gpu'] == 1, cl
assert 'claims' in a['note'], a" || fail "the forged job's metadata: $("$EXP" show latest)"
"$EXP" summary latest > "$T/forge.txt" 2>&1 || fail "the forged job's summary: $(cat "$T/forge.txt")"
! grep -q "(Slurm)\|e+12 core" "$T/forge.txt" || fail "the summary says the claim as given: $(cat "$T/forge.txt")"
grep -q "claims 1e+12 CPUs" "$T/forge.txt" || fail "the summary does not say the claim: $(cat "$T/forge.txt")"
# a group of no scheduler's: its user is its members' (not root, not the environment's)
$CG mk $TOP/plain
delegate $TOP/plain
record $TOP/plain 0.25 plain
$CG job $TOP/plain 0 0.5 1 AS="$U" SLURM_JOB_USER=root USER=root > /dev/null
wait_pid $R 15 || fail "the plain group's run did not end"
u=$("$EXP" show latest | python3 -c "import json,sys; print(json.load(sys.stdin)['cgroup']['user'])")
[ "$u" = "$U" ] || fail "the plain group's user: '$u', its member ran as $U"
ok "a member's SLURM_JOB_USER=root, SLURM_CPUS_ON_NODE=1e12, CUDA_VISIBLE_DEVICES=0: the job is $U's, given what its group gives, the rest kept as its claims and said so"

# --- 4. a low RLIMIT_NOFILE: the listing's errors are not endings
# (LIMIT: the ulimit options; FULL: whether each job's CPU is its group's)
low_nofile() {
	LIMIT=$1 FULL=$2 S=$3
	export RT_STORE="$T/$S"
	for i in 1 2 3; do $CG mk $TOP/$S/j$i; done
	(ulimit $LIMIT 20 && exec "$REC" --jobs "$TOP/$S/j*" -i 0.25) 2> "$T/$S.err" &
	NODE=$!
	track $NODE
	sleep 0.5
	for i in 1 2 3; do $CG job $TOP/$S/j$i 0 4 1 > /dev/null; done
	sleep 5.5
	kill -TERM $NODE
	wait_pid $NODE 15 || fail "the node mode did not stop"
	"$EXP" runs > "$T/$S.txt" 2>&1 || fail "runs at ulimit $LIMIT 20: $(cat "$T/$S.txt")"
	n=$(awk 'NR > 1 && $1 ~ /^[0-9]+$/ && $6 == "finished"' "$T/$S.txt" | wc -l)
	[ "$n" -eq 3 ] || fail "$n finished runs for 3 jobs at ulimit $LIMIT 20: $(cat "$T/$S.txt"); $(cat "$T/$S.err")"
	for i in 1 2 3; do
		run=$(awk -v j="j$i" 'NR > 1 && $7 == j {print $1; exit}' "$T/$S.txt")
		dur=$("$EXP" show "$run" | python3 -c "import json,sys; m=json.load(sys.stdin); print((m['end_ns']-m['start_ns'])/1e9)")
		python3 -c "import sys; sys.exit(float(sys.argv[1]) < 3.5)" "$dur" ||
			fail "job j$i at ulimit $LIMIT 20: its run ended after $dur s, its job ran 4 s: $(cat "$T/$S.err")"
		[ "$FULL" = 1 ] || continue
		cpu=$(run_cpu "$run")
		truth=$($CG cpu $TOP/$S/j$i)
		near "$cpu" "$truth" 0.05 || fail "job j$i at ulimit $LIMIT 20: rt $cpu s, its group $truth s: $(cat "$T/$S.err")"
	done
}
low_nofile -Sn 1 soft
[ ! -s "$T/soft.err" ] || fail "a soft limit of 20 was said: $(cat "$T/soft.err")"
ok "ulimit -Sn 20: raised to the hard limit, three jobs each tracked to their end, their CPU their groups'"
low_nofile -n 0 hard
grep -q "cannot list the job's processes now: Too many open files (not its end" "$T/hard.err" ||
	fail "the listing's error was not said: $(cat "$T/hard.err")"
ok "ulimit -n 20 (hard): three jobs each tracked to their real end, the error said ($(grep -c . "$T/hard.err") lines for 3 runs)"

# --- 5. one running run per live job across the node's SIGKILL: the
# watcher killed, its sampler hands its runs over and ends; the node
# started again goes on with them (the same runs, none crashed); no
# process of the dead node left behind
export RT_STORE="$T/pd"
for i in 1 2; do $CG mk $TOP/pd/j$i; $CG job $TOP/pd/j$i 0 9 1 > /dev/null; done
"$REC" --jobs "$TOP/pd/j*" -i 0.25 2> "$T/pd1.err" &
W1=$!
track $W1
sleep 1.5
before=$("$EXP" runs | awk 'NR > 1 && $6 == "running" {print $1 ":" $NF}' | sort | tr '\n' ' ')
kill -9 $W1
for _ in $(seq 50); do [ -z "$(pgrep -f -- "$TOP/pd/")" ] && break; sleep 0.1; done
[ -z "$(pgrep -f -- "$TOP/pd/")" ] || fail "the dead watcher's sampler lives on: $(pgrep -af -- "$TOP/pd/")"
"$REC" --jobs "$TOP/pd/j*" -i 0.25 2> "$T/pd2.err" &
W2=$!
track $W2
sleep 2
running=$("$EXP" runs | awk 'NR > 1 && $6 == "running" {print $1 ":" $NF}' | sort | tr '\n' ' ')
[ "$running" = "$before" ] && [ "$(echo "$running" | wc -w)" = 2 ] ||
	fail "running runs after the node's kill -9 and a restart: '$running', before '$before' ($("$EXP" runs))"
"$EXP" runs | awk 'NR > 1 && $6 == "crashed"' | grep -q . && fail "crashed runs: $("$EXP" runs)"
procs=$(pgrep -f -- "$TOP/pd/" | wc -l)
[ "$procs" -eq 2 ] || fail "$procs processes for 2 jobs after the restart (a watcher and its sampler): $(pgrep -af -- "$TOP/pd/")"
kill -TERM $W2
wait_pid $W2 15 || fail "the second node did not stop"
[ -z "$(pgrep -f -- "$TOP/pd/")" ] || fail "processes outlived the node: $(pgrep -af -- "$TOP/pd/")"
ok "the node's watcher killed with SIGKILL and the node started again: its runs go on as the same runs ($running), none crashed, two processes (the watcher and its sampler)"

# --- 6. a watcher inside a group its own glob matches
export RT_STORE="$T/self"
$CG mk $TOP/self/w
$CG mk $TOP/self/j1
sh -c 'for m in /sys/fs/cgroup /sys/fs/cgroup/*; do [ -f "$m$1/cgroup.procs" ] && echo $$ > "$m$1/cgroup.procs"; done; shift; exec "$@"' \
	sh $TOP/self/w "$REC" --jobs "$TOP/self/*" -i 0.25 2> "$T/self.err" &
W=$!
track $W
sleep 0.5
$CG job $TOP/self/j1 0 1 1 > /dev/null
sleep 2
kill -TERM $W
wait_pid $W 15 || fail "the watcher in a matching group did not stop"
jobs_seen=$("$EXP" runs | awk 'NR > 1 && $1 ~ /^[0-9]+$/ {print $NF}' | sort | tr '\n' ' ')
[ "$jobs_seen" = "j1 " ] || fail "runs of a watcher inside a matching group: '$jobs_seen'"
grep -q "holds this process itself: not tracked as a job" "$T/self.err" || fail "not said: $(cat "$T/self.err")"
ok "a watcher inside a group its glob matches: its own group is no job (said once), the other job tracked"

# --- 7. bounded work per job: 300 processes (more than the 256 read a
# sample) and 600 empty groups (more than the 512 read a sample)
export RT_STORE="$T/big"
$CG mk $TOP/big
delegate $TOP/big
record $TOP/big 0.5 big
# (root puts the job in its group, as a scheduler does; the job makes its groups)
sh -c 'for m in /sys/fs/cgroup /sys/fs/cgroup/*; do [ -f "$m$1/cgroup.procs" ] && echo $$ > "$m$1/cgroup.procs"; done
	exec setpriv --reuid="$2" --regid="$(id -g "$2")" --clear-groups sh -c "$3" sh "$1"' sh $TOP/big "$U" '
	i=0; while [ $i -lt 600 ]; do mkdir "/sys/fs/cgroup/unified$1/e$i" 2>/dev/null || mkdir "/sys/fs/cgroup$1/e$i"; i=$((i + 1)); done
	i=0; while [ $i -lt 300 ]; do sleep 3 & i=$((i + 1)); done
	python3 -c "x = bytearray(64 << 20); import time; time.sleep(3)"; wait' 2> /dev/null
wait_pid $R 20 || fail "the big job's run did not end"
"$EXP" show latest | python3 -c "
import json, sys
b = json.load(sys.stdin)['cgroup'].get('bounds_hit')
assert b and 'members' in b, b" || fail "the member bound not in the metadata: $("$EXP" show latest)"
[ "$(grep -c '256 processes or more' "$T/big.err")" -eq 1 ] || fail "the member bound not said once: $(cat "$T/big.err")"
"$EXP" summary latest --json > "$T/big.json"
peak=$($CG peak $TOP/big)
python3 - "$T/big.json" "$peak" <<'PY' || fail "the big job's memory answer is below its group's peak ($peak B): $(head -c 600 "$T/big.json")"
import json, sys
s = json.load(open(sys.argv[1]))
rec, peak = s["recommendation"]["memory_mib"], int(sys.argv[2]) / 1048576
print("recommended %d MiB for a group peak of %.0f MiB" % (rec, peak))
assert rec >= peak, (rec, peak)
PY
"$EXP" summary latest | grep -q "processes read .*256 processes or more" || fail "the summary does not say the bound: $("$EXP" summary latest)"
ok "a job of 300 processes: 256 read a sample, said once, in the metadata and the summary; its memory answer from its group's counters"
# a Slurm job whose processes never name it: its environments read in 10
# samples, then never again (said in the metadata)
G8=$SLP/uid_$UID_U/job_78
$CG mk $G8
record $G8 0.1 env
$CG job $G8 0 2 1 AS="$U" > /dev/null
wait_pid $R 15 || fail "the unnamed job's run did not end"
"$EXP" show latest | python3 -c "
import json, sys
m = json.load(sys.stdin)
assert m['samples'] > 12 and m['cgroup'].get('bounds_hit') == ['environment'], m['cgroup']" ||
	fail "the environment bound: $("$EXP" show latest | grep -A3 bounds)"
ok "a Slurm job that never names itself: its environments read in 10 samples, then never (bounds_hit environment)"
