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
