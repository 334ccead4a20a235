#!/bin/sh
# Nothing around the job can break it, lose its exit code or reach the
# store: the family killed or crashed member by member, closed stdio, the
# job's descriptors and signal state, signals as a careful shell passes
# them on (a pty for the terminal's own).
. "$(dirname "$0")/lib.sh"

# pids of the family of guardian $1: the recorder (its first child, the
# same program) and the recorder's children (the exporters)
recorder_of() { pgrep -P "$1" -x resource-tracke | head -n 1; }
exporter_of() { # GUARDIAN VERB
	r=$(recorder_of "$1")
	[ -n "$r" ] || return 1
	for c in $(pgrep -P "$r"); do
		tr '\0' ' ' < /proc/$c/cmdline | grep -q " $2 " && echo "$c" && return 0
	done
	return 1
}

# ---- 1. the job's parent cannot fail: each other member dies mid-run
# (a closed port for the uploader and the pusher keeps them retrying)
for victim in recorder:KILL recorder:SEGV recorder:BUS live:KILL live:SEGV upload:KILL push:KILL; do
	who=${victim%%:*} sig=${victim#*:}
	case $who in
	upload | push) export SENTINEL_API_TOKEN=t SENTINEL_API_URL=http://127.0.0.1:1 TRACKER_REMOTE_WRITE_URL=http://127.0.0.1:1/w ;;
	esac
	"$RT" -i 0.1 --job-name "$who-$sig" -- sh -c 'sleep 1.5; echo done; exit 9' > "$T/v.out" 2> "$T/v.err" &
	g=$!; track $g
	i=0; pid=""
	while [ -z "$pid" ] && [ $i -lt 100 ]; do
		sleep 0.05; i=$((i + 1))
		if [ "$who" = recorder ]; then pid=$(recorder_of $g || true); else pid=$(exporter_of $g "$who" || true); fi
	done
	[ -n "$pid" ] || fail "$victim: no such member"
	sleep 0.3
	kill -"$sig" "$pid"
	set +e; wait_pid $g 20; wait $g; rc=$?; set -e
	[ $rc -eq 9 ] || fail "$victim: the job's exit code was lost (exit $rc): $(cat "$T/v.err")"
	grep -qx done "$T/v.out" || fail "$victim: the job did not run to its end"
	if [ "$who" = recorder ]; then
		n=$(grep -c "tracking stopped" "$T/v.err" || true)
		[ "$n" -eq 1 ] || fail "$victim: $n lines say tracking stopped: $(cat "$T/v.err")"
	fi
	unset SENTINEL_API_TOKEN SENTINEL_API_URL TRACKER_REMOTE_WRITE_URL
done
"$EXP" runs > "$T/runs"
for v in live-KILL live-SEGV upload-KILL push-KILL; do
	grep "$v" "$T/runs" | grep -q failed || fail "$v: the run lost its end: $(cat "$T/runs")"
done
ok "recorder, printer, uploader and pusher killed or crashed mid-run: the job ran on, exit code kept"

# a hung recorder (stopped, as in a hung disk): the job's exit code comes
# back within the guardian's bound, with one line
"$RT" -i 0.1 --quiet -- sh -c 'sleep 1; exit 4' 2> "$T/h.err" &
g=$!; track $g
wait_for recorder_of $g || fail "hung: no recorder"
sleep 0.3
r=$(recorder_of $g)
kill -STOP "$r"
t0=$(date +%s)
set +e; wait_pid $g 30; wait $g; rc=$?; set -e
took=$(($(date +%s) - t0))
kill -CONT "$r" 2>/dev/null || true
[ $rc -eq 4 ] || fail "hung recorder: exit $rc"
# (a stopped one is not waited for: it and its printer hold the caller's
# pipe, so they are killed at the job's end)
[ $took -le 3 ] || fail "stopped recorder: the job's exit took $took s"
grep -q "recorder is stopped" "$T/h.err" || fail "stopped recorder: $(cat "$T/h.err")"
ok "stopped recorder: exit code back in ${took} s with one line"

# the guardian holds no store, no ring, no socket but its link: only its
# caller's descriptors, the signalfd and the link
"$RT" -i 0.1 --quiet -- sleep 3 &
g=$!; track $g
wait_for recorder_of $g || fail "no recorder"
wait_for pgrep -P $g -x sleep || fail "no job"
# its own: those its caller (this shell) does not have
: > "$T/gfd"
for f in /proc/$g/fd/*; do
	n=${f##*/}
	[ "$(readlink "$f")" = "$(readlink /proc/$$/fd/$n 2>/dev/null)" ] || readlink "$f" >> "$T/gfd"
done
kill -0 $g || fail "the guardian ended before its descriptors were read"
wait $g
sort "$T/gfd" | sed 's/:.*//' | tr '\n' ' ' > "$T/gfd2"
[ "$(cat "$T/gfd2")" = "anon_inode socket " ] || fail "the guardian holds: $(cat "$T/gfd")"
ok "the guardian holds no store, ring or network"

# ---- 2. descriptors: closed stdio never lands in the store; the job gets
# exactly its caller's descriptors, signal mask and dispositions
export RT_STORE="$T/closed"
for i in 1 2; do
	set +e; "$RT" -i 0.05 -- sh -c 'sleep 0.2; exit 7' <&- >&- 2>&-; rc=$?; set -e
	[ $rc -eq 7 ] || fail "closed stdio: exit $rc"
done
set +e; "$RT" -i 0.05 -- sh -c 'sleep 0.2; exit 7' 2>&-; rc=$?; set -e
[ $rc -eq 7 ] || fail "closed stderr: exit $rc"
"$EXP" runs > "$T/runs" 2>&1 || fail "closed stdio damaged the store: $(cat "$T/runs")"
[ "$(grep -c failed "$T/runs")" -eq 3 ] || fail "closed stdio runs: $(cat "$T/runs")"
cmp -s "$RT_STORE/lock.mdb" /dev/null && fail "lock.mdb"
ok "closed stdin/stdout/stderr: the store is intact, exit codes kept"

python3 - "$RT" <<'PY' || fail "the job's descriptors or signal state"
import os, signal, sys, time
rt = sys.argv[1]
def job_of(pid):
    # the job is the process running sleep: pid itself, or its child
    for _ in range(200):
        for p in [pid] + [int(c) for c in open("/proc/%d/task/%d/children" % (pid, pid)).read().split()]:
            try:
                if open("/proc/%d/comm" % p).read().strip() == "sleep":
                    return p
            except OSError:
                pass
        time.sleep(0.02)
    raise SystemExit("no job")
def run(argv):
    # a caller with an extra descriptor (7), stdout closed, SIGPIPE and
    # SIGHUP ignored and SIGUSR1 blocked (as nohup or a CI runner may)
    pid = os.fork()
    if pid == 0:
        r, w = os.pipe()
        os.dup2(r, 7)
        os.close(r); os.close(w)
        os.close(1)
        null = os.open("/dev/null", os.O_WRONLY)
        os.dup2(null, 2); os.close(null)
        signal.signal(signal.SIGPIPE, signal.SIG_IGN)
        signal.signal(signal.SIGHUP, signal.SIG_IGN)
        signal.pthread_sigmask(signal.SIG_SETMASK, [signal.SIGUSR1])
        os.execvp(argv[0], argv)
    j = job_of(pid)
    time.sleep(0.3)
    fds = sorted(os.listdir("/proc/%d/fd" % j), key=int)
    sig = [l for l in open("/proc/%d/status" % j) if l.startswith(("SigBlk", "SigIgn"))]
    os.waitpid(pid, 0)
    return fds, sig
direct = run(["sleep", "1"])
wrapped = run([rt, "--quiet", "--", "sleep", "1"])
assert direct == wrapped, "direct %r, wrapped %r" % (direct, wrapped)
assert "7" in direct[0] and "1" not in direct[0], direct
assert "0000000000000200" in direct[1][0] and "1001" in direct[1][1], direct
PY
ok "the job gets its caller's descriptors (none of rt's), signal mask and dispositions"

# ---- 7. signals, as a careful shell passes them on
# a terminal hangup reaches the job when the tracker is the session leader
python3 - "$RT" "$T/hup" <<'PY' || fail "terminal hangup"
import os, pty, sys, time
rt, log = sys.argv[1], sys.argv[2]
pid, fd = pty.fork()
if pid == 0:
    os.execv(rt, [rt, "--quiet", "--", "sh", "-c",
                  'trap "echo HUP > %s; exit 3" HUP; i=0; while [ $i -lt 100 ]; do sleep 0.05; i=$((i+1)); done; exit 0' % log])
time.sleep(0.8)
os.close(fd)  # the terminal hangs up
_, status = os.waitpid(pid, 0)
code = os.waitstatus_to_exitcode(status)
assert open(log).read().strip() == "HUP", "the job never heard the hangup"
assert code == 3, "exit %d" % code
PY
ok "a terminal hangup reaches the job"

# Ctrl-C typed on the terminal reaches the job from the terminal, not
# through rt: however quick, it never counts toward killing a job that
# ignores it, as without rt (issue 45 item 3; three TERMs sent to rt from
# outside still do: it_signals)
python3 - "$RT" <<'PY' || fail "Ctrl-C on a job that ignores it"
import os, pty, sys, time
rt = sys.argv[1]
def run(gaps):
    pid, fd = pty.fork()
    if pid == 0:
        os.execv(rt, [rt, "--quiet", "--", "sh", "-c",
                      'trap "" INT; i=0; while [ $i -lt 90 ]; do sleep 0.05; i=$((i+1)); done; exit 5'])
    time.sleep(0.6)
    for g in gaps:
        os.write(fd, b"\x03")
        time.sleep(g)
    while True:
        try:
            if not os.read(fd, 1024):
                break
        except OSError:
            break
    _, status = os.waitpid(pid, 0)
    return os.waitstatus_to_exitcode(status)
quick = run([0.2, 0.2, 0])
assert quick == 5, "three quick Ctrl-C: exit %d (without rt: 5)" % quick
spread = run([1.6, 1.6, 0])
assert spread == 5, "Ctrl-C now and then: exit %d" % spread
PY
ok "Ctrl-C typed three times quickly, or now and then: a job that ignores it exits 5, as without rt"

# a double SIGTERM reaches the job at most twice
"$RT" --quiet -- sh -c 'n=0; trap "n=\$((n+1)); echo \$n > '"$T"'/terms" TERM; i=0; while [ $i -lt 30 ]; do sleep 0.05; i=$((i+1)); done; exit 0' &
g=$!; track $g
sleep 0.5
kill -TERM $g; sleep 0.2; kill -TERM $g
set +e; wait $g; rc=$?; set -e
[ "$(cat "$T/terms")" = 2 ] || fail "double SIGTERM: the job saw $(cat "$T/terms")"
[ $rc -eq 0 ] || fail "double SIGTERM: exit $rc"
ok "a double SIGTERM reaches the job twice"

# ---- 3 and 6. another local user: what they plant is refused or never
# followed, never blocks, and the job always runs
A=rta$$ V=rtv$$
if useradd -M -N -s /bin/sh "$A" 2>/dev/null && useradd -M -N -s /bin/sh "$V" 2>/dev/null; then
	trap 'userdel "$A" 2>/dev/null; userdel "$V" 2>/dev/null; cleanup' EXIT
	chmod 711 "$T"
	SH="$T/shared"
	mkdir -m 1777 "$SH"
	# (TMPDIR: a refused store's private fallback lands here, not in /tmp
	# after the test's users are gone)
	as() { u=$1; shift; setpriv --reuid="$u" --regid="$(id -g "$u")" --clear-groups env HOME="$SH" RT_STORE="$SH/store-$u" RT_SHM_DIR="$SH" TMPDIR="$SH" "$@"; }
	# a FIFO, then another user's file, named resource-tracker.toml in a
	# shared working directory
	as "$A" mkfifo "$SH/resource-tracker.toml"
	set +e; (cd "$SH" && as "$V" timeout 20 "$RT" --quiet -- sh -c 'exit 3') 2> "$T/c.err"; rc=$?; set -e
	[ $rc -eq 3 ] || fail "FIFO config: exit $rc ($(cat "$T/c.err"))"
	grep -q "config file refused: .*not a regular file" "$T/c.err" || fail "FIFO config: $(cat "$T/c.err")"
	as "$A" rm "$SH/resource-tracker.toml"
	as "$A" sh -c "printf '[job]\nname = \"evil\"\n' > '$SH/resource-tracker.toml'"
	set +e; (cd "$SH" && as "$V" timeout 20 "$RT" --quiet -- sh -c 'exit 3') 2> "$T/c.err"; rc=$?; set -e
	[ $rc -eq 3 ] || fail "another user's config: exit $rc"
	grep -q "config file refused: .*belongs to another user" "$T/c.err" || fail "another user's config: $(cat "$T/c.err")"
	as "$V" "$EXP" runs | grep -q evil && fail "another user's config was used"
	as "$A" rm "$SH/resource-tracker.toml"
	ok "a FIFO or another user's resource-tracker.toml: refused in one line, the job ran"

	# a store another user owns or others can write: refused; the wrapped
	# job runs and is stored elsewhere, standalone stops in one line
	as "$A" mkdir -m 777 "$SH/astore"
	set +e; as "$V" "$RT" --store "$SH/astore" --quiet -- sh -c 'exit 4' 2> "$T/s.err"; rc=$?; set -e
	[ $rc -eq 4 ] || fail "another user's store: exit $rc"
	grep -q "belongs to another user.*stored in" "$T/s.err" || fail "another user's store: $(cat "$T/s.err")"
	set +e; as "$V" "$RT" --store "$SH/astore" --count 1 2> "$T/s.err" >/dev/null; rc=$?; set -e
	[ $rc -eq 1 ] && [ "$(wc -l < "$T/s.err")" -eq 1 ] || fail "standalone, another user's store: exit $rc: $(cat "$T/s.err")"
	as "$V" mkdir -m 777 "$SH/vww"
	set +e; as "$V" "$RT" --store "$SH/vww" --count 1 2> "$T/s.err" >/dev/null; rc=$?; set -e
	[ $rc -eq 1 ] && grep -q "can be written by other users.*chmod go-w" "$T/s.err" || fail "world-writable store: $rc $(cat "$T/s.err")"
	[ -z "$(ls "$SH/astore")" ] || fail "something was written into another user's store"
	ok "another user's store, or one others can write: refused in one line; a wrapped job runs"

	# the victim's own store: private files
	as "$V" "$RT" --quiet -- true
	for f in data.mdb lock.mdb; do
		[ "$(stat -c %a "$SH/store-$V/$f")" = 600 ] || fail "$f is $(stat -c %a "$SH/store-$V/$f")"
	done
	[ "$(stat -c %a "$SH/store-$V")" = 700 ] || fail "store dir $(stat -c %a "$SH/store-$V")"

	# links planted where the victim writes: never followed
	as "$V" sh -c "echo secret > '$SH/secret'"
	for f in out.html out.jsonl live.jsonl; do as "$A" ln -s "$SH/secret" "$SH/$f"; done
	set +e
	as "$V" "$EXP" report latest -o "$SH/out.html" 2> "$T/l.err"; r1=$?
	as "$V" "$EXP" replay latest -o "$SH/out.jsonl" 2>> "$T/l.err"; r2=$?
	as "$V" "$RT" -o "$SH/live.jsonl" -- true 2>> "$T/l.err"; r3=$?
	set -e
	[ "$(cat "$SH/secret")" = secret ] || fail "a planted link was followed: $(head -c 200 "$SH/secret")"
	# (the wrapped job runs all the same, without live output, one warning)
	[ $r1 -ne 0 ] && [ $r2 -ne 0 ] && [ $r3 -eq 0 ] &&
		grep -q "warning: cannot open the output file $SH/live.jsonl" "$T/l.err" ||
		fail "writes through planted links said nothing: $r1 $r2 $r3 $(cat "$T/l.err")"
	[ "$(grep -c . "$T/l.err")" -eq 3 ] || fail "one line each: $(cat "$T/l.err")"
	ls -a "$SH" | grep -q '\.rt-' && fail "temporary files left: $(ls -a "$SH")"
	ok "links planted at a report, a replay or the live output: not followed, one line each"
	userdel "$A"; userdel "$V"
	trap cleanup EXIT
else
	echo "skip: cannot add users here"
fi

# /dev/null stays a device; a regular file is replaced atomically
"$RT" --quiet --job-name devnull -- true
"$EXP" report latest -o /dev/null 2>"$T/dn.err" || fail "report to /dev/null: $(cat "$T/dn.err")"
[ -c /dev/null ] || fail "/dev/null was replaced"
echo old > "$T/r.html"
"$EXP" report latest -o "$T/r.html" 2>/dev/null
grep -q "<html" "$T/r.html" || fail "report not written"
ls -a "$T" | grep -q '\.rt-' && fail "temporary files left"
ok "report -o /dev/null writes the device; a file is replaced"

# GITHUB_STEP_SUMMARY: a FIFO nobody reads, a full device: the job's exit
# is not held up, no printer is left behind
mkfifo "$T/gh"
t0=$(date +%s%N)
set +e; GITHUB_STEP_SUMMARY="$T/gh" "$RT" --summary -i 0.1 -- sh -c 'exit 6' 2> "$T/gh.err" >/dev/null; rc=$?; set -e
took=$((($(date +%s%N) - t0) / 1000000))
[ $rc -eq 6 ] || fail "step summary FIFO: exit $rc"
[ $took -lt 5000 ] || fail "step summary FIFO: the job's exit took $took ms"
sleep 0.3
# (this test's printers alone: ctest runs other tests beside it)
pgrep -f "rt-export live .*--store $T/.*--summary" && fail "a printer was left behind"
grep -q "cannot write the step summary" "$T/gh.err" || fail "step summary FIFO: $(cat "$T/gh.err")"
set +e; GITHUB_STEP_SUMMARY=/dev/full "$RT" --summary -i 0.1 -- sh -c 'exit 6' 2> "$T/gh.err" >/dev/null; rc=$?; set -e
[ $rc -eq 6 ] && grep -q "cannot write the step summary /dev/full: No space" "$T/gh.err" || fail "step summary /dev/full: $rc $(cat "$T/gh.err")"
ok "GITHUB_STEP_SUMMARY: a FIFO with no reader or a full device costs the job nothing (${took} ms)"

# Markdown escapes what rt did not write (issue 45 item 7): a job name from
# a branch name becomes no HTML, image or link on the job's page, rendered
# as GitHub-flavoured Markdown by marked (tests/peers); the page shows it
MARKED="$(cd "$(dirname "$0")/../peers" && pwd)/node_modules/marked"
[ -d "$MARKED" ] || fail "marked is not installed (tools/test.sh runs npm ci in tests/peers)"
evil='x <img src=https://evil.example/p.png> ![t](https://evil.example/t.png) [l](http://evil.example) www.evil.example <b>&amp; *e* `c` | ~s~'
GITHUB_STEP_SUMMARY="$T/evil.md" "$RT" --summary -i 0.1 --job-name "$evil" -- sh -c 'true' 2> /dev/null > /dev/null
"$EXP" summary latest --format markdown > "$T/evil2.md"
for md in "$T/evil.md" "$T/evil2.md"; do
	node "$(dirname "$0")/md_check.js" "$MARKED" "$md" "$evil" || fail "the Markdown of $md"
done
ok "a job name of HTML, images, links and Markdown: shown as written in the step summary and summary --format markdown, nothing made of it"

# ---- 8. output and exit codes
"$RT" --quiet --job-name "$(printf 'evil\033[2J\033]0;title\007name')" -- true
for v in runs "show latest" "summary latest" "summary latest --format json" "recommend latest" "replay latest"; do
	set +e; "$EXP" $v > /dev/full 2> "$T/full.err"; rc=$?; set -e
	[ $rc -ne 0 ] || fail "$v to /dev/full exits 0"
	[ "$(wc -l < "$T/full.err")" -eq 1 ] || fail "$v to /dev/full: $(cat "$T/full.err")"
done
"$EXP" runs | head -n 1 > /dev/null || fail "runs | head"
"$EXP" runs > "$T/runs.txt"
if LC_ALL=C grep -q "$(printf '\033')" "$T/runs.txt"; then fail "runs prints terminal escapes raw"; fi
grep -q 'evil\\x1b\[2J' "$T/runs.txt" || fail "runs: $(cat -v "$T/runs.txt")"
"$EXP" summary latest > "$T/sum.txt" 2>&1
if LC_ALL=C grep -q "$(printf '\033')" "$T/sum.txt"; then fail "summary prints terminal escapes raw"; fi
code() { set +e; "$@" >/dev/null 2>&1; echo $?; set -e; }
[ "$(code "$RT" --interval 0x10 --count 1)" -eq 2 ] || fail "--interval 0x10 taken"
[ "$(code "$RT" --interval 1e1 --count 1)" -eq 2 ] || fail "--interval 1e1 taken"
[ "$(code "$EXP" replay latest --from 2026-02-30)" -eq 2 ] || fail "--from 2026-02-30 taken"
[ "$(code "$EXP" replay latest --from 2023-02-29T00:00:00Z)" -eq 2 ] || fail "--from 2023-02-29 taken"
long="$T/$(python3 -c 'print("d/" * 2000)')"
set +e; "$RT" --store "$long" --count 1 2> "$T/long.err"; rc=$?; set -e
[ $rc -eq 1 ] && grep -q "the path is too long" "$T/long.err" || fail "long store path: $rc $(cat "$T/long.err")"
ok "outputs that cannot be written exit non-zero; control bytes escaped; bad numbers and dates refused"

# ---- 9. the wall clock stepped back, then forward, mid-run (an LD_PRELOAD
# fixture steps CLOCK_REALTIME for the recorder alone)
if [ -z "${RT_SANITIZE:-}" ] || [ "$RT_SANITIZE" = OFF ]; then
	for step in -3600 7200; do
		st="$T/clock$step"
		LD_PRELOAD="$BUILD/rt-clockstep.so" RT_TEST_STEP="1 $step" \
			"$RT" --store "$st" -i 0.1 -o "$T/step.jsonl" -- sleep 2.5
		"$EXP" --store "$st" show 1 > "$T/step.show"
		python3 - "$T/step.jsonl" "$T/step.show" "$step" <<'PY' || fail "clock stepped by $step s"
import json, sys
rows = [json.loads(l) for l in open(sys.argv[1])]
m = json.load(open(sys.argv[2]))
ts = [r["timestamp"] for r in rows]
assert all(b > a for a, b in zip(ts, ts[1:])), "timestamps out of order"
assert all(0 < b - a < 0.5 for a, b in zip(ts, ts[1:])), "a gap in the timeline"
assert m["end"] >= m["start"], (m["start"], m["end"])
# the samples' timeline starts at the run's start, whichever way the clock went
import datetime
start = datetime.datetime.strptime(m["start"], "%Y-%m-%dT%H:%M:%SZ").replace(tzinfo=datetime.timezone.utc).timestamp()
assert -1 <= ts[0] - start <= 2, (ts[0], start)
for r in rows:
    c = r["cpu"]
    assert 0 <= c["utilization_pct"] <= 100.0001, c["utilization_pct"]
    assert 0 <= c["process_cores_used"] < 64, c["process_cores_used"]
    assert 0 <= r.get("actual_interval_ms", 100) < 1000, r.get("actual_interval_ms")
PY
		"$EXP" --store "$st" runs > "$T/step.runs"
		python3 - "$T/step.runs" <<'PY' || fail "runs after a clock step: $(cat "$T/step.runs")"
import sys
row = open(sys.argv[1]).read().splitlines()[1].split()
start, end, dur = row[1], row[2], row[3]
assert end >= start, (start, end)
assert dur.endswith("s") and 2.3 <= float(dur[:-1]) <= 3.5, dur
PY
		# --from/--to: the middle second of the run, by its own timestamps
		from=$(python3 -c "import json;r=[json.loads(l) for l in open('$T/step.jsonl')];print('%.3f'%r[8]['timestamp'])")
		to=$(python3 -c "import json;r=[json.loads(l) for l in open('$T/step.jsonl')];print('%.3f'%r[17]['timestamp'])")
		n=$("$EXP" --store "$st" replay 1 --from "$from" --to "$to" | wc -l)
		[ "$n" -ge 8 ] && [ "$n" -le 11 ] || fail "--from/--to after a step of $step s: $n lines"
	done
	ok "the wall clock stepped back an hour or forward two mid-run: timestamps in order, END after START, rates and --from/--to right"
fi

# ---- 10. under load it says what it missed: a 3000-thread job at -i 0.01
# either keeps the schedule or counts the samples it skipped; samples taken
# plus skipped cover the run
"$RT" --store "$T/load" -i 0.01 --quiet -- python3 -c "
import threading, time
ev = threading.Event()
ts = [threading.Thread(target=ev.wait) for _ in range(3000)]
[t.start() for t in ts]; time.sleep(2.5); ev.set(); [t.join() for t in ts]" 2> "$T/load.err"
"$EXP" --store "$T/load" replay 1 > "$T/load.jsonl"
"$EXP" --store "$T/load" show 1 > "$T/load.show"
"$EXP" --store "$T/load" summary 1 > "$T/load.sum"
python3 - "$T/load.jsonl" "$T/load.show" "$T/load.sum" "$T/load.err" <<'PY' || fail "skipped samples"
import json, sys
rows = [json.loads(l) for l in open(sys.argv[1])]
m = json.load(open(sys.argv[2]))
summary, err = open(sys.argv[3]).read(), open(sys.argv[4]).read()
span = rows[-1]["timestamp"] - rows[0]["timestamp"]
skipped = m.get("samples_skipped", 0)
want = span / 0.01
assert abs(len(rows) + skipped - want) <= 0.05 * want + 3, (len(rows), skipped, want)
if skipped:
    assert "skipped: %d samples" % skipped in summary, summary
    assert err.count("cannot keep up") == 1, err
print("3000 threads at -i 0.01: %d samples taken, %d skipped, over %.2f s" % (len(rows), skipped, span))
PY
ok "under load: the samples skipped are counted and said"

# one store however its path is spelled: a run recorded with a relative
# --store is followed live through the absolute one (ring names agree)
mkdir -p "$T/relwd"
(cd "$T/relwd" && "$RT" --store rel -i 0.1 -o /dev/null -- sleep 2) &
rp=$!; track $rp
wait_for test -e "$T/relwd/rel/data.mdb" || fail "no relative store"
sleep 0.5
timeout 10 "$EXP" --store "$T/relwd/rel" tail -n 1 > "$T/rel.tail" 2> "$T/rel.err" || true
wait $rp
grep -q '^{' "$T/rel.tail" || fail "a relative --store's live run not followed through its absolute path: $(cat "$T/rel.err")"
ok "a store is one store however its path is spelled (live ring found)"

# ---- nothing outlives the job holding its output: targets that block
# A FIFO whose reader never reads, as -o, and as GITHUB_STEP_SUMMARY with
# its buffer already full; and the caller's own pipe, read only after the
# job. Each time the job's exit code comes back and the caller's pipe
# reaches EOF within 2 s of the job's end.
mkfifo "$T/slow"
python3 - "$RT" "$T" <<'PY' || fail "a blocked output target held the job's output"
import os, subprocess, sys, time
rt, t = sys.argv[1], sys.argv[2]
fifo = os.path.join(t, "slow")
job = ["sh", "-c", "sleep 1.5; date +%s.%N > " + os.path.join(t, "jobend") + "; exit 3"]
bad = []
def trial(name, argv, env=None, hold=False, fill=False, late_read=False):
    holder = None
    if hold:  # a reader that never reads (the FIFO full when asked)
        holder = os.open(fifo, os.O_RDWR | os.O_NONBLOCK)
        if fill:
            try:
                while True:
                    os.write(holder, b"x" * 4096)
            except BlockingIOError:
                pass
    e = dict(os.environ); e.update(env or {})
    p = subprocess.Popen(argv, stdout=subprocess.PIPE, stderr=subprocess.PIPE, env=e)
    if late_read:  # the caller's own pipe, read from only once the job ended
        while not os.path.exists(os.path.join(t, "jobend")):
            time.sleep(0.05)
    out, err = p.communicate()  # both pipes to EOF, and the exit
    eof = time.time()
    rc = p.returncode
    end = float(open(os.path.join(t, "jobend")).read())
    os.unlink(os.path.join(t, "jobend"))
    if holder is not None:
        os.close(holder)
    # (a loaded host may warn that sampling cannot keep up with the
    # interval: that line is the load's, not the blocked output's)
    lines = [l for l in err.decode(errors="replace").splitlines()
             if l.startswith(("rt-export:", "resource-tracker:")) and "cannot keep up" not in l]
    print("%-18s exit %d, EOF %.2f s after the job's end, %d line(s) on stderr"
          % (name, rc, eof - end, len(lines)))
    if rc != 3 or eof - end > 2.0 or len(lines) > 1:
        bad.append((name, rc, eof - end, lines))
trial("-o FIFO unread", [rt, "-i", "0.02", "-o", fifo, "--"] + job, hold=True)
trial("summary FIFO full", [rt, "-i", "0.05", "--quiet", "--summary", "--"] + job,
      {"GITHUB_STEP_SUMMARY": fifo}, hold=True, fill=True)
trial("stdout read late", [rt, "-i", "0.02", "--"] + job, late_read=True)
assert not bad, bad
PY
ok "a FIFO or pipe that blocks costs the job at most a second and one line; its output reaches EOF within 2 s"
