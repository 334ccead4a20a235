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
