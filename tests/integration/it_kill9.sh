#!/bin/sh
# kill -9 the recorder mid-run: the store keeps every committed sample, a
# tailing reader exits by itself, the next recorder marks the run crashed.
. "$(dirname "$0")/lib.sh"

running() { "$EXP" runs | grep -q running; }

"$REC" -i 0.02 --quiet &
rec=$!; track $rec
wait_for running || fail "recorder did not start"
"$EXP" tail --all -f csv > "$T/tail.csv" 2> "$T/tail.err" &
tail=$!; track $tail
sleep 1
kill -9 $rec
wait $rec 2>/dev/null || true
wait_pid $tail 5 || fail "tail did not notice the dead recorder"
grep -q "stopped without finishing" "$T/tail.err" || fail "tail message: $(cat "$T/tail.err")"
"$EXP" replay 1 -f csv > "$T/replay.csv" || fail "replay after kill -9"
n=$(wc -l < "$T/replay.csv")
[ "$n" -gt 10 ] || fail "only $n lines survived"
cmp "$T/tail.csv" "$T/replay.csv" || fail "tail and replay disagree after the crash"
"$EXP" runs | grep -q crashed || fail "run not shown as crashed"
ok "kill -9: $((n - 1)) samples kept, tail exited, run shown crashed"

"$REC" --count 1 -i 0.01 --quiet
"$EXP" show 1 | grep -q '"status":.*"crashed"' || fail "crash not recorded by the next recorder"
[ -z "$(ls "$RT_SHM_DIR")" ] || fail "stale ring left in shm: $(ls "$RT_SHM_DIR")"
ok "next recorder marks the run crashed and removes its ring"

# kill -9 at random moments of 20 Hz runs, many times: every sample the
# recorder took before the kill (everything a follower printed) is in the
# store after salvage, once, with contiguous seqs; no ring is left behind.
# Odd cycles use a tiny ring (groups of 2 samples committed while running,
# kills during commits), even ones the default (the whole run uncommitted,
# all of it salvaged).
# (c, not i: lib.sh's wait helpers count with i)
cycles=${RT_KILL9_CYCLES:-12}
c=0
while [ $c -lt $cycles ]; do
	c=$((c + 1))
	slots=""
	[ $((c % 2)) -eq 1 ] && slots=4
	RT_RING_SLOTS=$slots "$REC" -i 0.05 --quiet &
	rec=$!; track $rec
	wait_for running || fail "cycle $c: recorder did not start"
	"$EXP" tail --all -f csv > "$T/tail$c.csv" 2> /dev/null &
	tail=$!; track $tail
	sleep "$(python3 -c 'import random; print(round(random.uniform(0.2, 2.0), 3))')"
	kill -9 $rec
	wait $rec 2>/dev/null || true
	wait_pid $tail 5 || fail "cycle $c: tail did not notice the dead recorder"
	run=$("$EXP" runs | awk 'NR>1{id=$1} END{print id}')
	# two more readers salvaging at once find nothing left to add
	"$EXP" runs > /dev/null & a=$!
	"$EXP" runs > /dev/null & b=$!
	wait $a; wait $b
	"$EXP" replay "$run" -f csv > "$T/replay$c.csv" || fail "cycle $c: replay"
	cmp -s "$T/tail$c.csv" "$T/replay$c.csv" ||
		fail "cycle $c: the follower printed $(wc -l < "$T/tail$c.csv") lines, the store replays $(wc -l < "$T/replay$c.csv")"
	lines=$(($(wc -l < "$T/replay$c.csv") - 1))
	samples=$("$EXP" show "$run" | python3 -c 'import json,sys; m=json.load(sys.stdin); print(m["samples"], m["status"])')
	[ "$samples" = "$lines crashed" ] || fail "cycle $c: show says '$samples', replay has $lines lines (a hole or a duplicate)"
	[ "$lines" -ge 2 ] || fail "cycle $c: only $lines lines"
	[ -z "$(ls "$RT_SHM_DIR")" ] || fail "cycle $c: ring left in shm: $(ls "$RT_SHM_DIR")"
	total=$((${total:-0} + lines))
done
ok "$cycles kills at random moments of 20 Hz runs: all $total samples printed before the kills stored once, contiguous, rings removed"
