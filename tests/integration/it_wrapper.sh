#!/bin/sh
# Wrapper mode: exit codes, signal forwarding, untouched stdout, final
# sample on exit, EPIPE on the output, --pid.
. "$(dirname "$0")/lib.sh"

code() { set +e; "$@" >/dev/null 2>&1; echo $?; set -e; }
[ "$(code "$RT" --quiet -- true)" -eq 0 ] || fail "exit 0"
[ "$(code "$RT" --quiet -- false)" -eq 1 ] || fail "exit 1"
[ "$(code "$RT" --quiet -- sh -c 'exit 42')" -eq 42 ] || fail "exit 42"
[ "$(code "$RT" --quiet -- sh -c 'kill -9 $$')" -eq 137 ] || fail "SIGKILL -> 137"
[ "$(code "$RT" --quiet -- /nonexistent/cmd)" -eq 127 ] || fail "not found -> 127"
[ "$(code "$RT" --quiet -- "$T")" -eq 126 ] || fail "not executable -> 126"
"$EXP" runs > "$T/runs"
grep -q killed "$T/runs" && grep -q failed "$T/runs" || fail "statuses: $(cat "$T/runs")"
ok "exit codes"

# SIGTERM to the tracker is forwarded; the tracker exits 128+15
"$RT" --quiet -i 0.05 -- sleep 30 &
tr=$!; track $tr
sleep 0.5
kill -TERM $tr
set +e; wait $tr; rc=$?; set -e
[ $rc -eq 143 ] || fail "forwarded SIGTERM: exit $rc"
ok "SIGTERM forwarded (143)"

# SIGUSR1 reaches the command
"$RT" --quiet -- sh -c 'trap "echo got >'"$T"'/usr1; exit 5" USR1; while :; do sleep 0.05; done' &
tr=$!; track $tr
sleep 0.5
kill -USR1 $tr
set +e; wait $tr; rc=$?; set -e
[ $rc -eq 5 ] && [ -f "$T/usr1" ] || fail "SIGUSR1 not forwarded (exit $rc)"
ok "SIGUSR1 forwarded"

# the command's stdout is untouched; metrics go to stderr
"$RT" -i 0.05 -- sh -c 'echo hello; sleep 0.2' > "$T/out" 2> "$T/err"
[ "$(cat "$T/out")" = "hello" ] || fail "stdout: $(cat "$T/out")"
grep -q '"process_cores_used"' "$T/err" || fail "no metrics on stderr"
ok "stdout untouched"

# exit is noticed at once; a final sample covers the partial interval
t0=$(date +%s.%N)
"$RT" -i 10 -o "$T/final.jsonl" -- sleep 0.3
t1=$(date +%s.%N)
python3 - "$T/final.jsonl" "$t0" "$t1" <<'PY' || fail "final sample"
import json, sys
rows = [json.loads(l) for l in open(sys.argv[1])]
took = float(sys.argv[3]) - float(sys.argv[2])
assert len(rows) == 1, len(rows)
assert took < 2.0, "tracker took %.2f s for a 0.3 s command at -i 10" % took
print("final sample after %.3f s; tracker done in %.3f s" % (rows[0]["timestamp"] - int(rows[0]["timestamp"]) if False else 0, took))
PY
ok "final sample, prompt exit"

# EPIPE on the output: the command and the recording go on
set +e
"$RT" -i 0.02 -o /dev/stdout -- sh -c 'sleep 0.5; exit 3' 2>"$T/err" | head -n 1 > /dev/null
rc=$?
set -e
n=$("$EXP" replay latest | wc -l)
[ "$n" -ge 15 ] || fail "only $n samples recorded after EPIPE"
ok "EPIPE: command ran on, $n samples recorded"

# --pid follows an existing tree; when it exits the tracker keeps running
sh -c 'sleep 0.6' &
target=$!; track $target
"$RT" --pid $target -i 0.1 --count 12 -o "$T/pid.jsonl"
python3 - "$T/pid.jsonl" "$target" <<'PY' || fail "--pid"
import json, sys
rows = [json.loads(l) for l in open(sys.argv[1])]
assert len(rows) == 12
assert all(r["tracked_pid"] == int(sys.argv[2]) for r in rows)
assert rows[-1]["cpu"]["process_child_count"] == 0 and rows[-1]["cpu"]["process_cores_used"] == 0
PY
ok "--pid"

# Ctrl-C on a terminal reaches the command once (not once from the tty and
# again from the tracker), and the tracker exits with the command's code
python3 - "$RT" "$T/ctrlc" <<'PY' || fail "Ctrl-C on a terminal"
import os, pty, sys, time
rt, log = sys.argv[1], sys.argv[2]
script = 'trap "echo INT >> %s" INT; i=0; while [ $i -lt 20 ]; do sleep 0.05; i=$((i+1)); done; exit 7' % log
pid, fd = pty.fork()
if pid == 0:
    os.execv(rt, [rt, "--quiet", "--", "sh", "-c", script])
time.sleep(0.4)
os.write(fd, b"\x03")
out = b""
while True:
    try:
        chunk = os.read(fd, 1024)
    except OSError:
        break
    if not chunk:
        break
    out += chunk
_, status = os.waitpid(pid, 0)
code = os.waitstatus_to_exitcode(status)
lines = open(log).read().split()
assert lines == ["INT"], "the command saw SIGINT %d times" % len(lines)
assert code == 7, "exit code %d" % code
PY
ok "Ctrl-C on a terminal: delivered once"

# A job shorter than every cadence (status and fds every 5 s) still has
# every process value in every line: what is read on a cadence is read for
# each process the sample it first appears, and at the last sample
"$RT" -i 0.5 -o "$T/short.jsonl" -- sh -c 'sleep 2' || fail "short job"
python3 - "$T/short.jsonl" <<'PY' || fail "a short job's lines lack a value"
import json, sys
rows = [json.loads(l)["cpu"] for l in open(sys.argv[1])]
assert len(rows) >= 4, len(rows)
keys = ("process_threads", "process_open_fds", "process_major_faults",
        "process_voluntary_ctx_switches", "process_involuntary_ctx_switches",
        "process_peak_rss_mib")
for i, r in enumerate(rows):
    missing = [k for k in keys if not isinstance(r.get(k), (int, float))]
    assert not missing, "line %d: %s null" % (i + 1, missing)
assert max(r["process_open_fds"] for r in rows) >= 3, "stdin, stdout, stderr at least"
assert max(r["process_peak_rss_mib"] for r in rows) >= 1
PY
ok "a 2-second job: threads, fds, faults, context switches and peak RSS in every line"

# The guardian never dies of its own output (issue 38, item 6): stderr is a
# pipe whose reader has left (head), the recorder is killed, and the
# guardian's warning line meets the closed pipe; the job's exit code still
# comes back (it was 141, SIGPIPE, and the job ran on untracked)
pipe_rc() {
	rm -f "$T/pipe.rc"
	{ set +e; "$RT" -i 0.5 -- sh -c 'sleep 2.5; exit 5' 2>&1; echo $? > "$T/pipe.rc"; } | head -c 100 > /dev/null &
	sleep 1
	# the recorder: a resource-tracker whose parent is a resource-tracker (the guardian)
	rec=$(ps -eo pid=,ppid=,args= | awk '/sleep 2.5; exit 5/ && /resource-tracker/ {p[$1]=$2}
		END {for (k in p) if (p[p[k]] != "") print k}')
	[ -z "$rec" ] || kill -KILL $rec 2>/dev/null || true
	i=0
	while [ ! -s "$T/pipe.rc" ] && [ $i -lt 100 ]; do sleep 0.1; i=$((i + 1)); done
	cat "$T/pipe.rc" 2>/dev/null || echo "none"
}
for try in 1 2 3; do
	rc=$(pipe_rc)
	[ "$rc" = 5 ] || fail "a closed stderr pipe: exit $rc, want the job's 5 (try $try)"
done
ok "stderr a closed pipe, the recorder killed: the guardian's warning costs nothing, exit 5 (3 of 3)"
