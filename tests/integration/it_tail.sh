#!/bin/sh
# rt-export tail from another terminal, concurrently with the recorder,
# including a reader lapped by the ring that must catch up from the store.
. "$(dirname "$0")/lib.sh"

running() { "$EXP" runs | grep -q running; }

"$REC" -i 0.02 --count 100 --quiet &
rec=$!; track $rec
wait_for running || fail "recorder did not start"
"$EXP" tail --all -f csv > "$T/tail.csv" &
tail=$!; track $tail
wait_pid $rec 20 || fail "recorder did not finish"
wait_pid $tail 10 || fail "tail did not exit after the run ended"
"$EXP" replay latest -f csv > "$T/replay.csv"
cmp "$T/tail.csv" "$T/replay.csv" || fail "tail output differs from replay"
ok "concurrent tail == replay"

# lapped reader: 8-slot ring, the reader is stopped for 60 intervals
RT_RING_SLOTS=8 "$REC" -i 0.01 --count 300 --quiet &
rec=$!; track $rec
wait_for running || fail "recorder did not start"
"$EXP" tail --all -f json > "$T/tail.jsonl" &
tail=$!; track $tail
sleep 0.2
kill -STOP $tail
sleep 0.6
kill -CONT $tail
wait_pid $rec 30 || fail "recorder did not finish"
wait_pid $tail 10 || fail "lapped tail did not exit"
"$EXP" replay latest > "$T/replay.jsonl"
cmp "$T/tail.jsonl" "$T/replay.jsonl" || fail "lapped tail lost or changed samples"
[ "$(wc -l < "$T/tail.jsonl")" -eq 300 ] || fail "expected 300 lines"
ok "lapped tail caught up from the store without a gap"

# tail without a live run says so
"$EXP" tail 2> "$T/err" && fail "tail with nothing running should fail"
grep -q "no run is being recorded" "$T/err" || fail "message: $(cat "$T/err")"
ok "tail without a live run"
