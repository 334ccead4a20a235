#!/bin/sh
# Never break the job: whatever happens to the tracker's own machinery (an
# unwritable home, no writable place at all, a full disk, no shm directory,
# a stale ring, a pids limit), the wrapped command runs with its stdin,
# stdout and exit code, metric lines are printed, and each degradation is
# said in one line. Needs root for tmpfs mounts, setpriv and cgroups; a part
# the machine cannot do is skipped with the reason printed.
. "$(dirname "$0")/lib.sh"

# The job: reads stdin, writes stdout, runs a little, exits 7.
JOB='read x; echo "got:$x"; sleep 0.4; exit 7'

# check NAME OUT ERR RC [MIN_LINES]: the job ran as if untracked, and the
# metric lines (JSON on stderr) are there
check() {
	[ "$4" -eq 7 ] || fail "$1: exit code $4, wanted the job's 7 ($(head -c 600 "$3"))"
	grep -qx "got:hello" "$2" || fail "$1: the job's stdin/stdout did not pass: $(cat "$2")"
	n=$(grep -c '^{' "$3" || true)
	[ "$n" -ge "${5:-3}" ] || fail "$1: $n metric lines on stderr: $(head -c 600 "$3")"
	if grep -v '^{' "$3" | grep -v '^resource-tracker: warning: ' | grep -q .; then
		fail "$1: unexpected stderr: $(grep -v '^{' "$3")"
	fi
}

# run NAME CMD... : the job under the tracker, stdin "hello"
run() {
	name=$1; shift
	set +e
	echo hello | "$@" > "$T/$name.out" 2> "$T/$name.err"
	rc=$?
	set -e
}

warned() { # NAME PATTERN: exactly one warning line, matching
	# (a loaded host's "sampling cannot keep up" is another matter: not counted)
	c=$(grep '^resource-tracker: warning:' "$T/$1.err" | grep -vc 'sampling cannot keep up' || true)
	[ "$c" -eq 1 ] || fail "$1: $c warning lines, wanted 1: $(grep -v '^{' "$T/$1.err")"
	grep -q -- "$2" "$T/$1.err" || fail "$1: warning lacks '$2': $(grep -v '^{' "$T/$1.err")"
}

# ---- no usable shm directory: live output through the pipe
run noshm env RT_SHM_DIR="$T/missing" "$RT" -i 0.1 -- sh -c "$JOB"
check noshm "$T/noshm.out" "$T/noshm.err" $rc
warned noshm "no live ring"
"$EXP" runs | grep -q " failed " || fail "noshm: run not stored: $("$EXP" runs)"
: > "$T/afile"
run shmfile env RT_SHM_DIR="$T/afile" "$RT" -i 0.1 -f csv -- sh -c "$JOB"
[ $rc -eq 7 ] || fail "shm dir is a file: exit $rc"
grep -q '^timestamp,' "$T/shmfile.err" || fail "shm dir is a file: no CSV header"
ok "no usable shm directory: the job runs, output via the pipe, one warning"

# ---- a crashed run's ring is left behind; the store is deleted and made anew
"$RT" --store "$T/s1" -i 0.05 --quiet & rp=$!
track $rp
wait_for sh -c "ls '$RT_SHM_DIR' | grep -q ring" || fail "no ring appeared"
kill -9 $rp
wait $rp 2>/dev/null || true
ls "$RT_SHM_DIR" | grep -q '\.ring$' || fail "the crashed run left no ring to collide with"
rm -rf "$T/s1"
run stale "$RT" --store "$T/s1" -i 0.1 -- sh -c "$JOB"
check stale "$T/stale.out" "$T/stale.err" $rc
grep -q warning "$T/stale.err" && fail "stale ring: a warning: $(grep warning "$T/stale.err")"
ok "a stale ring of a re-created store: no collision"

# ---- explicit store unusable: standalone stops before sampling, wrapper falls back
: > "$T/notadir"
set +e
"$RT" --store "$T/notadir/s" --count 2 -i 0.05 > "$T/sa.out" 2> "$T/sa.err"; rc=$?
set -e
[ $rc -eq 1 ] || fail "standalone, explicit unusable store: exit $rc"
[ "$(wc -l < "$T/sa.err")" -eq 1 ] || fail "standalone: not one line: $(cat "$T/sa.err")"
grep -q "cannot use --store $T/notadir/s" "$T/sa.err" || fail "message: $(cat "$T/sa.err")"
mkdir -p "$T/tmp"
run explicit env TMPDIR="$T/tmp" "$RT" --store "$T/notadir/s" -i 0.1 -- sh -c "$JOB"
check explicit "$T/explicit.out" "$T/explicit.err" $rc
warned explicit "stored in $T/tmp/resource-tracker-$(id -u) instead"
"$EXP" --store "$T/tmp/resource-tracker-$(id -u)" runs | grep -q " failed " \
	|| fail "the fallback store has no finished run"
ok "explicit unusable store: standalone exits 1 in one line, wrapper falls back"

if [ "$(id -u)" -ne 0 ]; then
	echo "skip: the rest needs root (setpriv, tmpfs mounts, cgroups)"
	exit 0
fi

# ---- an unprivileged user whose HOME is read-only (readOnlyRootFilesystem, nobody)
if command -v setpriv >/dev/null 2>&1; then
	chmod 755 "$T"
	mkdir -p "$T/bin" "$T/ro" "$T/pub" "$T/run"
	cp "$BUILD/rt-recorder" "$BUILD/rt-export" "$T/bin/"
	ln -sf rt-recorder "$T/bin/resource-tracker"
	chmod 755 "$T/bin" "$T/bin"/*
	chmod 555 "$T/ro"
	chmod 1777 "$T/pub"
	chown 65534 "$T/run"
	chmod 700 "$T/run"
	NB="setpriv --reuid=65534 --regid=65534 --clear-groups env -i PATH=/usr/bin:/bin HOME=$T/ro RT_SHM_DIR=$T/pub"
	sanitizer_env=""
	[ -n "${RT_SANITIZE:-}" ] && [ "$RT_SANITIZE" != OFF ] && sanitizer_env="ASAN_OPTIONS=detect_leaks=0"
	run nobody_tmp $NB $sanitizer_env TMPDIR="$T/pub" "$T/bin/resource-tracker" -i 0.1 -- sh -c "$JOB"
	check nobody_tmp "$T/nobody_tmp.out" "$T/nobody_tmp.err" $rc
	warned nobody_tmp "stored in $T/pub/resource-tracker-65534 instead"
	[ "$(stat -c %a "$T/pub/resource-tracker-65534")" = 700 ] || fail "fallback store is not 0700"
	run nobody_xdg $NB $sanitizer_env XDG_RUNTIME_DIR="$T/run" "$T/bin/resource-tracker" -i 0.1 -- sh -c "$JOB"
	check nobody_xdg "$T/nobody_xdg.out" "$T/nobody_xdg.err" $rc
	warned nobody_xdg "stored in $T/run/resource-tracker instead"
	run nobody_none $NB $sanitizer_env TMPDIR="$T/ro" RT_SHM_DIR="$T/ro" "$T/bin/resource-tracker" -i 0.1 -- sh -c "$JOB"
	check nobody_none "$T/nobody_none.out" "$T/nobody_none.err" $rc
	warned nobody_none "printed but not stored"
	ok "unprivileged user, read-only HOME: private store, XDG_RUNTIME_DIR, or memory only"
else
	echo "skip: no setpriv on this machine (util-linux)"
fi

# ---- the store on a filesystem that is full, or fills up and frees again
FULL="$T/full"
mkdir -p "$FULL"
if mount -t tmpfs -o size=1m rt-test "$FULL" 2>/dev/null; then
	trap 'umount "$FULL" 2>/dev/null || true; cleanup' EXIT
	# full before the run starts (LMDB's lock file would be a sparse mapping)
	mkdir -p "$FULL/s" "$T/tmp2"
	dd if=/dev/zero of="$FULL/fill" bs=4k 2>/dev/null || true
	run full_start env TMPDIR="$T/tmp2" "$RT" --store "$FULL/s" -i 0.1 -- sh -c "$JOB"
	check full_start "$T/full_start.out" "$T/full_start.err" $rc
	warned full_start "No space left on device"
	rm -rf "$FULL/fill" "$FULL/s"
	# fills during the run, then frees: counted, reported, storing resumes
	# (a ring of 8 slots: groups of 4 samples are committed during the fill;
	# no zeroed pages ahead, which would carry the store through a short fill).
	# The job frees the disk once the tracker has said it is full, and ends
	# once it has said it stores again (each wait bounded at 20 s), so a slow
	# machine cannot miss the window.
	saw="n=0; until grep -q \"\$1\" $T/full_mid.err || [ \$n -ge 200 ]; do sleep 0.1; n=\$((n+1)); done"
	run full_mid env RT_RING_SLOTS=8 RT_STORE_AHEAD_KB=0 "$RT" --store "$FULL/s" -i 0.05 -- sh -c \
		"saw() { $saw; }; read x; echo got:\$x; sleep 0.5; dd if=/dev/zero of=$FULL/fill bs=4k 2>/dev/null;
		 saw 'cannot write samples'; sleep 0.2; rm $FULL/fill; saw 'storing samples again'; sleep 0.3; exit 7"
	check full_mid "$T/full_mid.out" "$T/full_mid.err" $rc 20
	grep -q "cannot write samples in the store $FULL/s (No space left on device)" "$T/full_mid.err" \
		|| fail "full_mid: no disk-full line: $(grep -v '^{' "$T/full_mid.err")"
	grep -q "storing samples again in $FULL/s" "$T/full_mid.err" || fail "full_mid: storing did not resume"
	grep -q "storing samples again in $FULL/s ([1-9][0-9]* waited, 0 lost)" "$T/full_mid.err" \
		|| fail "full_mid: no count of what waited: $(grep -v '^{' "$T/full_mid.err")"
	"$EXP" --store "$FULL/s" show 1 > "$T/full_mid.show"
	"$EXP" --store "$FULL/s" replay 1 > "$T/full_mid.replay"
	python3 - "$T/full_mid.show" "$T/full_mid.err" "$T/full_mid.replay" <<'PY' || fail "full_mid: metadata"
import json, sys
m = json.load(open(sys.argv[1]))
lines = [l for l in open(sys.argv[2]) if l.startswith("{")]
stored = [json.loads(l)["seq"] for l in open(sys.argv[3])]
assert m["status"] == "failed" and m["exit_code"] == 7, m
assert m.get("samples_not_stored", 0) == 0 and m["samples_waited"] > 0, m
# every sample printed live is in the store: the full disk lost none
assert len(lines) >= 20, len(lines)
assert stored == list(range(1, len(lines) + 1)), (len(stored), len(lines))
PY
	ok "full disk: before the run (fallback) and during it (samples wait, all stored, no SIGBUS)"
	# the ring's directory is full: the ring cannot be allocated, output still flows
	dd if=/dev/zero of="$FULL/fill" bs=4k 2>/dev/null || true
	run full_shm env RT_SHM_DIR="$FULL" "$RT" --store "$T/s3" -i 0.1 -- sh -c "$JOB"
	check full_shm "$T/full_shm.out" "$T/full_shm.err" $rc
	warned full_shm "no live ring"
	umount "$FULL"
	ok "full shm directory: no ring, no SIGBUS, output via the pipe"
else
	echo "skip: cannot mount a tmpfs here (not permitted)"
fi

# ---- a pids limit: no process to spare for the printer, or even the command
CG=""
if [ -w /sys/fs/cgroup/pids ]; then
	CG=/sys/fs/cgroup/pids/rt-degrade-$$
elif grep -qw pids /sys/fs/cgroup/cgroup.controllers 2>/dev/null && [ -w /sys/fs/cgroup ]; then
	CG=/sys/fs/cgroup/rt-degrade-$$
	grep -qw pids /sys/fs/cgroup/cgroup.subtree_control || echo +pids > /sys/fs/cgroup/cgroup.subtree_control || CG=""
fi
if [ -n "$CG" ] && mkdir "$CG" 2>/dev/null; then
	trap 'rmdir "$CG" 2>/dev/null || true; umount "$FULL" 2>/dev/null || true; cleanup' EXIT
	# so little room that rt's own processes would be the job's (fewer
	# than 32 left: issue 38): it runs untracked, in rt's place, with one
	# line; so at pids.max 3, 2 and 1
	NOFORK='read x; echo "got:$x"; i=0; while [ $i -lt 1000000 ]; do i=$((i+1)); done; exit 7'
	for n in 3 2 1; do
		run pids$n sh -c 'echo $$ > "$1/cgroup.procs"; echo $2 > "$1/pids.max"; shift 2; exec "$@"' \
			sh "$CG" $n "$RT" -i 0.1 -- sh -c "$NOFORK"
		[ $rc -eq 7 ] || fail "pids.max $n: exit $rc ($(cat "$T/pids$n.err"))"
		grep -qx "got:hello" "$T/pids$n.out" || fail "pids.max $n: job output"
		warned pids$n "running the command untracked"
	done
	echo max > "$CG/pids.max"
	ok "pids limit: the job runs untracked in rt's place, with its exit code"
else
	echo "skip: no writable pids cgroup controller on this machine"
fi
exit 0
