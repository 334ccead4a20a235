#!/bin/sh
# The wrapper's promise under signals (issue 38, items 5 and 7): every
# catchable signal sent to the tracker reaches the job exactly once and
# none kills the guardian; a signal sent to the whole process group (kill
# -- -PGID, timeout(1)) reaches the job once, not again through rt.
. "$(dirname "$0")/lib.sh"
SC="$BUILD/rt-sigcount"
# count SIG: how many times the job got SIG (its log)
count() { awk -v s="$1" '$1 == s { n = $2 } END { print n + 0 }' "$T/log"; }
# NAME:NUMBER (Linux's numbers; dash's kill knows only the common names)
SIGS="ILL:4 TRAP:5 ABRT:6 BUS:7 FPE:8 SEGV:11 PIPE:13 ALRM:14 STKFLT:16 XCPU:24 XFSZ:25
VTALRM:26 PROF:27 IO:29 PWR:30 SYS:31 TSTP:20 CONT:18 WINCH:28 URG:23 TTIN:21 TTOU:22
USR1:10 USR2:12 HUP:1 TERM:15"
# (INT and QUIT are not among them: a background job of a script ignores
# them, and a signal the caller ignores stays ignored)
# in a process group of its own, as a CI runner or a shell's job starts it
# (the system's python: a shim such as pyenv's would be a process between)
PY=$(command -v /usr/bin/python3 || command -v python3)
NEWPGRP='import os, sys; os.setpgid(0, 0); os.execvp(sys.argv[1], sys.argv[1:])'

# ---- 5. each signal sent to the guardian alone: passed on once, the
# guardian lives and returns the job's code
rm -f "$T/log"
"$RT" --quiet -i 0.2 -- "$SC" "$T/log" 5 &
g=$!; track $g
wait_for pgrep -P $g -x rt-sigcount || fail "no job"
sleep 0.3
for s in $SIGS; do kill -"${s#*:}" $g; sleep 0.1; done
set +e; wait_pid $g 20; wait $g; rc=$?; set -e
[ $rc -eq 7 ] || fail "the guardian did not return the job's code: $rc"
bad=""
for s in $SIGS; do
	n=$(count "${s#*:}")
	[ "$n" -eq 1 ] || bad="$bad ${s%:*}:$n"
done
[ -z "$bad" ] || fail "signals not passed on exactly once:$bad"
ok "$(echo $SIGS | wc -w) signals sent to the tracker: each reached the job once, exit 7 kept"

# ---- 7. sent to the whole process group: the job hears each once
runs=6 twice=0
for i in $(seq $runs); do
	rm -f "$T/log"
	"$PY" -c "$NEWPGRP" "$RT" --quiet -i 0.2 -- "$SC" "$T/log" 1.2 &
	g=$!; track $g
	wait_for pgrep -P $g -x rt-sigcount || fail "no job"
	sleep 0.2
	kill -TERM -$g
	sleep 0.1
	kill -USR1 -$g
	sleep 0.1
	kill -HUP -$g
	set +e; wait_pid $g 20; wait $g; rc=$?; set -e
	[ $rc -eq 7 ] || fail "group signals: exit $rc"
	for s in 15 10 1; do
		[ "$(count $s)" -eq 1 ] || twice=$((twice + 1))
	done
done
[ $twice -eq 0 ] || fail "a signal sent to the process group reached the job twice ($twice of $((runs * 3)))"
ok "TERM, USR1 and HUP sent to the process group: each reached the job once ($runs runs)"

# timeout(1) sends TERM to its child (rt) and then to its group: the job
# gets the one meant for it and the group's, never a third
worst=0
for i in $(seq $runs); do
	rm -f "$T/log"
	set +e; timeout -s TERM 0.5 "$RT" --quiet -i 0.2 -- "$SC" "$T/log" 1.2; set -e
	n=$(count 15)
	[ "$n" -gt $worst ] && worst=$n
done
[ $worst -le 2 ] || fail "under timeout the job got $worst SIGTERMs"
ok "under timeout -s TERM the job got at most $worst SIGTERMs ($runs runs; timeout sends 2)"

# ---- issue 45 item 3: only signals rt passed on count toward killing the
# job. Ctrl-C typed three times on a terminal reaches the job (a REPL that
# catches it) from the terminal itself: it lives on, as without rt
PJ="$(dirname "$0")/ptyjob.py"
rm -f "$T/log"
seen=$("$PY" "$PJ" "1.0:03,1.3:03,1.6:03" "$RT" --quiet -i 0.2 -- "$SC" "$T/log" 3)
[ "$seen" = "exit 7" ] || fail "three Ctrl-C on a terminal: the shell saw '$seen', not 'exit 7' (without rt: 7)"
[ "$(count 2)" -eq 3 ] || fail "three Ctrl-C: the job got SIGINT $(count 2) times, not 3"
ok "three Ctrl-C typed within 3 s: the job got each once and exited 7, as without rt"
# a job that ignores TERM and sends it to its own group three times
set +e
"$PY" -c "$NEWPGRP" "$RT" --quiet -i 0.2 -- sh -c 'trap "" TERM; kill -TERM 0; sleep 0.2; kill -TERM 0; sleep 0.2; kill -TERM 0; sleep 0.3; exit 5'
rc=$?
set -e
[ $rc -eq 5 ] || fail "a job's own kill -TERM 0, three times: exit $rc, not 5"
ok "a job that ignores TERM and signals its own group three times exits 5, as without rt"
# three TERMs sent to rt by someone outside the job still kill a job that
# ignores them (the escalation rt promises)
"$RT" --quiet -i 0.2 -- sh -c 'trap "" TERM; sleep 5' &
g=$!; track $g
wait_for pgrep -P $g -x sh || fail "no job"
sleep 0.3
for i in 1 2 3; do kill -TERM $g; sleep 0.2; done
set +e; wait_pid $g 10; wait $g; rc=$?; set -e
[ $rc -eq 137 ] || fail "three TERMs sent to rt: exit $rc, not 137"
ok "three TERMs sent to rt from outside within 3 s kill a job that ignores them (137)"

# ---- issue 45 item 4: stop signals sent to the group reach the job once,
# and a job stopped by Ctrl-Z is seen by the shell as stopped by SIGTSTP
twice=0
for i in $(seq $runs); do
	rm -f "$T/log"
	"$PY" -c "$NEWPGRP" "$RT" --quiet -i 0.2 -- "$SC" "$T/log" 1.2 &
	g=$!; track $g
	wait_for pgrep -P $g -x rt-sigcount || fail "no job"
	sleep 0.2
	for s in 20 21 22; do kill -$s -$g; sleep 0.15; done
	set +e; wait_pid $g 20; wait $g; rc=$?; set -e
	[ $rc -eq 7 ] || fail "group stop signals: exit $rc"
	for s in 20 21 22; do
		[ "$(count $s)" -eq 1 ] || twice=$((twice + 1))
	done
done
[ $twice -eq 0 ] || fail "a stop signal sent to the process group did not reach the job once ($twice of $((runs * 3)))"
ok "TSTP, TTIN and TTOU sent to the process group: each reached the job once ($runs runs)"
seen=$("$PY" "$PJ" "0.8:1a" "$RT" --quiet -i 0.2 -- sleep 1.5 | tr '\n' ' ')
[ "$seen" = "stopped 20 exit 0 " ] || fail "Ctrl-Z: the shell saw '$seen', not 'stopped 20 exit 0' (148, then fg)"
ok "Ctrl-Z: the shell sees the job stopped by SIGTSTP (148, as without rt), and fg resumes it to exit 0"

# a tracker stopped while it starts (a Python tracker stopped at once, a
# step shorter than its first sample): the run is never left "running",
# to be listed as crashed. Stops from 1 to 50 ms after the start: each
# either ends a stored run as finished or comes before any run is stored.
ST="$T/starts"
for d in 0.001 0.002 0.003 0.005 0.008 0.01 0.015 0.02 0.03 0.05; do
	for k in 1 2; do
		"$REC" --store "$ST" --pid $$ -i 1 -o /dev/null 2>/dev/null &
		p=$!
		sleep $d
		kill -TERM $p
		set +e; wait $p; set -e
	done
done
"$EXP" --store "$ST" runs > "$T/starts.txt"
n=$(awk 'NR > 1' "$T/starts.txt" | wc -l)
bad=$(awk 'NR > 1 && $6 != "finished"' "$T/starts.txt" | wc -l)
[ "$n" -ge 10 ] && [ "$bad" -eq 0 ] || fail "trackers stopped as they started: $bad of $n runs not finished: $(cat "$T/starts.txt")"
ok "20 trackers stopped 1-50 ms after their start: $n runs stored, every one finished (none crashed)"
