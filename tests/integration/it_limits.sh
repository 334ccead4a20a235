#!/bin/sh
# The wrapper's promise under limits, pipes and fast exits (issue 38,
# items 8-12, 14, 15): the job runs as it would without rt under RLIMIT_NOFILE 6,
# a pids cgroup or RLIMIT_NPROC with little room; a job that ends at once
# ends the run at once at any interval; a stopped recorder or printer does
# not hold the caller's pipe; a printer killed mid-run is said, with the
# command that gives the rest.
. "$(dirname "$0")/lib.sh"
PY=$(command -v /usr/bin/python3 || command -v python3)
NEWPGRP='import os, sys; os.setpgid(0, 0); os.execvp(sys.argv[1], sys.argv[1:])'

# ---- 9. RLIMIT_NOFILE 6: no descriptor to spare, the job runs all the same
set +e
out=$(prlimit --nofile=6 "$RT" --quiet -- sh -c 'echo ran; exit 5' 2> "$T/nofile.err"); rc=$?
plain=$(prlimit --nofile=6 sh -c 'echo ran; exit 5'); prc=$?
set -e
[ $rc -eq $prc ] && [ "$out" = "$plain" ] || fail "RLIMIT_NOFILE 6: exit $rc, '$out' (without rt: $prc): $(cat "$T/nofile.err")"
grep -q "no private directory" "$T/nofile.err" && fail "descriptors, not directories, were short: $(cat "$T/nofile.err")"
ok "RLIMIT_NOFILE 6: the job ran and exited $rc, as without rt"

# ---- 10. little room for processes: rt steps aside, the job's forks work
FORKS='sleep 0.2 & sleep 0.2 & wait && echo ran; exit 5'
CG=""
if [ -w /sys/fs/cgroup/pids ]; then
	CG=/sys/fs/cgroup/pids/rt-limits-$$
elif grep -qw pids /sys/fs/cgroup/cgroup.controllers 2>/dev/null && [ -w /sys/fs/cgroup ]; then
	CG=/sys/fs/cgroup/rt-limits-$$
	grep -qw pids /sys/fs/cgroup/cgroup.subtree_control || echo +pids > /sys/fs/cgroup/cgroup.subtree_control || CG=""
fi
if [ -n "$CG" ] && mkdir "$CG" 2>/dev/null; then
	trap 'rmdir "$CG" 2>/dev/null || true; cleanup' EXIT
	echo 4 > "$CG/pids.max"
	set +e
	out=$(sh -c 'echo $$ > "$1/cgroup.procs"; shift; exec "$@"' sh "$CG" "$RT" --quiet -- sh -c "$FORKS" 2> "$T/pids.err"); rc=$?
	plain=$(sh -c 'echo $$ > "$1/cgroup.procs"; shift; exec "$@"' sh "$CG" sh -c "$FORKS"); prc=$?
	set -e
	[ $rc -eq 5 ] && [ $prc -eq 5 ] && [ "$out" = ran ] || fail "pids.max 4: exit $rc, '$out' (without rt $prc): $(cat "$T/pids.err")"
	[ "$(wc -l < "$T/pids.err")" -eq 1 ] && grep -q "running the command untracked" "$T/pids.err" || fail "pids.max 4: $(cat "$T/pids.err")"
	ok "a pids cgroup with room for 3: rt stepped aside with one line, the job's forks ran (exit $rc)"
else
	echo "skip: no writable pids cgroup controller on this machine"
fi
O=rtl$$
if useradd -M -N -s /bin/sh "$O" 2>/dev/null; then
	trap 'userdel "$O" 2>/dev/null || true; rmdir "$CG" 2>/dev/null || true; cleanup' EXIT
	chmod 711 "$T"
	mkdir -m 700 "$T/o" && chown "$O" "$T/o"
	set +e
	out=$(setpriv --reuid="$O" --regid="$(id -g "$O")" --clear-groups env RT_STORE="$T/o/store" RT_SHM_DIR="$T/o" \
		prlimit --nproc=5 "$RT" --quiet -- sh -c "$FORKS" 2> "$T/nproc.err"); rc=$?
	set -e
	[ $rc -eq 5 ] && [ "$out" = ran ] || fail "RLIMIT_NPROC 5: exit $rc, '$out': $(cat "$T/nproc.err")"
	grep -q "RLIMIT_NPROC allows 5.*untracked" "$T/nproc.err" || fail "RLIMIT_NPROC 5: $(cat "$T/nproc.err")"
	userdel "$O"
	trap 'rmdir "$CG" 2>/dev/null || true; cleanup' EXIT
	ok "RLIMIT_NPROC 5 for another user: rt stepped aside with one line, the job's forks ran"
else
	echo "skip: cannot add a user here"
fi

# ---- 11. a job that ends at once ends the run at once, at any interval
slow=0
for i in $(seq 12); do
	t0=$(date +%s%N)
	"$RT" -i 20 --quiet --job-name fast -- true
	ms=$((($(date +%s%N) - t0) / 1000000))
	[ $ms -lt 1500 ] || slow=$((slow + 1))
done
[ $slow -eq 0 ] || fail "-i 20 -- true was held up in $slow of 12 tries"
for i in $(seq 30); do "$RT" -i 1 --quiet --job-name fast1 -- true; done
long=$("$EXP" runs | awk '$7 ~ /^fast/ && $4 + 0 >= 0.5' | wc -l)
[ "$long" -eq 0 ] || fail "$long runs of 'true' were stored as lasting half a second or more: $("$EXP" runs | grep fast)"
ok "-- true at -i 20 (12 tries) and -i 1 (30 tries): never held up, stored as 0.0 s"

# ---- 12. a stopped recorder or printer does not hold the caller's pipe
for who in recorder printer; do
	t0=$(date +%s%N)
	set +e
	"$RT" -i 0.1 --job-name "stop$$" -- sh -c 'sleep 0.8; exit 4' 2>&1 >/dev/null | {
		# the caller reads the pipe to its end, as $(...) and | tee do
		cat > "$T/stop.$who"
	} &
	reader=$!
	set -e
	sleep 0.4
	# (this test's own: ctest runs others beside it)
	if [ $who = recorder ]; then pkill -STOP -n -f "resource-tracker -i 0.1 --job-name stop$$ " || true
	else pkill -STOP -f "rt-export live [0-9]* --store $RT_STORE " || true; fi
	wait_pid $reader 20 || fail "$who stopped: the caller's pipe stayed open 20 s"
	ms=$((($(date +%s%N) - t0) / 1000000))
	pkill -CONT -f "rt-export live [0-9]* --store $RT_STORE " 2>/dev/null || true
	[ $ms -lt 4000 ] || fail "$who stopped: the pipe closed after $ms ms"
	grep -q "stopped it" "$T/stop.$who" || fail "$who stopped: nothing said: $(cat "$T/stop.$who")"
done
ok "a stopped recorder or printer: the caller's pipe closed with the job, one line said why"

# ---- 8. the printer killed mid-run: one line, with the command for the rest
set +e
"$PY" -c "$NEWPGRP" "$RT" -i 0.1 -o "$T/live.jsonl" -- sh -c 'sleep 0.5; pkill -KILL -f "[r]t-export live [0-9]* --store $RT_STORE "; sleep 0.5; exit 3' 2> "$T/p.err"; rc=$?
set -e
[ $rc -eq 3 ] || fail "printer killed: exit $rc"
grep -q "live output stopped.*signal 9.*rt-export replay" "$T/p.err" || fail "printer killed: $(cat "$T/p.err")"
# the job's `kill -TERM 0` reaches the whole group: the printer goes on
set +e
"$PY" -c "$NEWPGRP" "$RT" -i 0.1 -o "$T/live2.jsonl" -- sh -c 'trap "" TERM; sleep 0.5; kill -TERM 0; sleep 0.6; exit 3' 2> "$T/p2.err"; rc=$?
set -e
run=$("$EXP" runs | awk 'END { print $1 }')
[ $rc -eq 3 ] || fail "kill -TERM 0: exit $rc: $(cat "$T/p2.err")"
[ "$(wc -l < "$T/live2.jsonl")" -eq "$("$EXP" replay "$run" | wc -l)" ] ||
	fail "kill -TERM 0: the live output has $(wc -l < "$T/live2.jsonl") lines, the run $("$EXP" replay "$run" | wc -l)"
ok "printer killed: one line with the replay command; the job's kill -TERM 0 leaves the output whole"

# ---- 14. a config of many table headers parses in linear time: the CPU
# the tracker spends on 100k headers against 25k (a quadratic parse: 16x)
"$PY" - "$RT" "$T" <<'PYEOF' || fail "config parse time is not linear in its headers"
import os, resource, subprocess, sys
rt, t = sys.argv[1], sys.argv[2]
def cpu(n):
    path = os.path.join(t, "h%d.toml" % n)
    with open(path, "w") as f:
        f.write("".join("[t%06d]\n" % i for i in range(n)))
    best = None
    for _ in range(3):
        before = resource.getrusage(resource.RUSAGE_CHILDREN)
        subprocess.run([rt, "--config", path, "--quiet", "--", "true"], check=True, timeout=120)
        after = resource.getrusage(resource.RUSAGE_CHILDREN)
        used = (after.ru_utime - before.ru_utime) + (after.ru_stime - before.ru_stime)
        best = used if best is None else min(best, used)
    return best
small, big = cpu(25000), cpu(100000)
good = big < 8 * max(small, 0.01)
print("%s: 25k headers: %.3f s of CPU, 100k: %.3f s (x%.1f; a quadratic parse is x16)"
      % ("ok" if good else "measured", small, big, big / max(small, 1e-3)))
sys.exit(0 if good else 1)
PYEOF

# ---- 15. small ones
# a stray RT_TEST_CLOCK is not a fake clock: the run is today's, 1-3 samples
set +e
env -u RT_TEST_HOOKS RT_TEST_CLOCK=1 "$RT" --quiet -i 1 --job-name strayclock -- sleep 1.2; rc=$?
set -e
[ $rc -eq 0 ] || fail "stray RT_TEST_CLOCK: exit $rc"
"$EXP" runs | awk '$7 == "strayclock"' > "$T/stray"
grep -q "1970-" "$T/stray" && fail "a stray RT_TEST_CLOCK made a 1970 run: $(cat "$T/stray")"
[ "$(awk '{ print $5 }' "$T/stray")" -le 3 ] || fail "a stray RT_TEST_CLOCK: $(cat "$T/stray")"
# a recorder stopped mid-run: one line says it did not run, not that it
# cannot keep up
set +e
"$RT" -i 0.1 --quiet -- sh -c 'sleep 2.5' 2> "$T/pause.err" &
g=$!
set -e
wait_for pgrep -P $g -x resource-tracke || fail "pause: no recorder"
sleep 0.3
r=$(pgrep -P $g -x resource-tracke | head -n 1)
kill -STOP "$r"; sleep 1.3; kill -CONT "$r"
wait_pid $g 20
grep -q "recorder was stopped for" "$T/pause.err" && ! grep -q "cannot keep up" "$T/pause.err" ||
	fail "a paused recorder: $(cat "$T/pause.err")"
# a crashed run's ring that cannot be opened (its recorder died making it)
# is removed by the next reader
"$RT" -i 0.1 --quiet --job-name emptyring -- sleep 2 2> /dev/null &
g=$!
wait_for pgrep -P $g -x resource-tracke || fail "ring: no recorder"
sleep 0.3
kill -9 "$(pgrep -P $g -x resource-tracke | head -n 1)"
sleep 0.3
ring=$(ls "$RT_SHM_DIR"/rt-*.ring | head -n 1)
: > "$ring"
"$EXP" runs > /dev/null
[ -e "$ring" ] && fail "an unreadable ring of a crashed run stayed: $ring"
wait_pid $g 20
ok "a stray RT_TEST_CLOCK is ignored; a paused recorder says so; an unreadable dead ring is removed"

# HOME unset and stderr closed (cron): the fallback store's warning is lost,
# so the run's metadata says where it went and why (issue 39)
mkdir -p "$T/tmpd"
env -u HOME -u RT_STORE -u XDG_DATA_HOME -u XDG_RUNTIME_DIR TMPDIR="$T/tmpd" \
	sh -c 'exec 2>&-; exec "$1" --quiet -- true' sh "$RT" || fail "cron-like run: exit $?"
"$EXP" --store "$T/tmpd/resource-tracker-$(id -u)" show latest > "$T/cron.show" ||
	fail "cron-like run: not in the fallback store: $(ls "$T/tmpd")"
grep -q '"store_note":.*the default store could not be used (.*HOME' "$T/cron.show" ||
	fail "cron-like run: the metadata does not say why: $(head -c 400 "$T/cron.show")"
ok "HOME unset, stderr closed: the run's metadata says where it went and why"

# a run that ended while its disk is full is shown with its real end, not
# as crashed (its final metadata waits beside its ring)
FULL="$T/full"
mkdir -p "$FULL"
if mount -t tmpfs -o size=4m tmpfs "$FULL" 2>/dev/null; then
	trap 'umount "$FULL" 2>/dev/null || true; rmdir "$CG" 2>/dev/null || true; cleanup' EXIT
	RT_RING_SLOTS=8 RT_STORE_AHEAD_KB=0 "$RT" --store "$FULL/s" -i 0.05 --quiet -- \
		sh -c "sleep 0.3; dd if=/dev/zero of='$FULL/fill' bs=64k 2>/dev/null; sleep 0.5" 2> /dev/null
	st=$("$EXP" --store "$FULL/s" runs | awk 'NR == 2 { print $6 }')
	[ "$st" = finished ] || fail "a run ended on a full disk shows as '$st'"
	rm "$FULL/fill"
	umount "$FULL"
	trap 'rmdir "$CG" 2>/dev/null || true; cleanup' EXIT
	ok "a run that ended on a full disk shows as finished"
else
	echo "skip: cannot mount a tmpfs here"
fi
