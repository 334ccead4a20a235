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

# tail --no-wait without a live run says so
"$EXP" tail --no-wait 2> "$T/err" && fail "tail --no-wait with nothing running should fail"
grep -q "no run is being recorded" "$T/err" || fail "message: $(cat "$T/err")"
ok "tail --no-wait without a live run: exit 1, one line"

# tail started before the recorder waits for the run, as tail -F waits for
# its file (issue 45 item 8): said once on stderr, then every line of the
# run, the same as its replay; also before the store itself exists
for where in "$RT_STORE" "$T/later"; do
	RT_STORE="$where" "$EXP" tail > "$T/early.jsonl" 2> "$T/early.err" &
	tw=$!; track $tw
	sleep 0.5
	kill -0 $tw 2> /dev/null || fail "tail before the run ($where) did not wait: $(cat "$T/early.err")"
	grep -q "waiting for a run to be recorded in" "$T/early.err" || fail "tail did not say it waits: $(cat "$T/early.err")"
	RT_STORE="$where" "$RT" -i 0.05 --quiet -n early -- sleep 0.6
	wait_pid $tw 10 || fail "tail that waited did not end with the run"
	RT_STORE="$where" "$EXP" replay latest > "$T/early.replay"
	cmp -s "$T/early.jsonl" "$T/early.replay" || fail "tail that waited ($where): $(wc -l < "$T/early.jsonl") lines, the run has $(wc -l < "$T/early.replay")"
	[ "$(wc -l < "$T/early.err")" -eq 1 ] || fail "tail that waited said more: $(cat "$T/early.err")"
done
ok "tail started before the run (and before its store): waits, says so once, prints the whole run"

# A running job is visible to every verb that reads a run: its samples are
# in the ring long before the store's group commit (every 30 s)
# (15 s: the verbs below, slow under the sanitizers, all run while it does)
"$RT" -i 0.2 --quiet -n live-job -- sleep 15 &
live=$!; track $live
sleep 3
"$EXP" runs | awk '$NF == "live-job" && $6 == "running" && $5 >= 10 { ok = 1 } END { exit !ok }' ||
	fail "runs: $("$EXP" runs)"
[ "$("$EXP" replay latest -f csv | wc -l)" -ge 11 ] || fail "replay of a live run: $("$EXP" replay latest -f csv | wc -l) lines"
"$EXP" show latest | grep -q '"samples":[[:space:]]*[1-9][0-9]' || fail "show: $("$EXP" show latest)"
"$EXP" summary latest --json | python3 -c '
import json, sys
j = json.load(sys.stdin)
assert j["run"]["status"] == "running", j["run"]
assert j["run"]["samples"] >= 10, j["run"]
assert j["recommendation"] is not None
' || fail "summary of a live run: $("$EXP" summary latest | head -3)"
"$EXP" summary latest | grep -q "still being recorded" || fail "summary does not say it is running"
"$EXP" report latest -o "$T/live.html" 2>/dev/null || fail "report of a live run"
grep -q "ended before" "$T/live.html" && fail "the report says a running run ended"
wait_pid $live 40 || fail "live job"
# a range that misses the run says when the run ran
"$EXP" replay latest --from 2001-01-01T00:00:00Z --to 2001-01-02T00:00:00Z > "$T/out" 2> "$T/err" &&
	fail "a range that misses the run exits 0"
grep -q "no samples in that range: it ran from" "$T/err" || fail "range miss: $(cat "$T/err")"
ok "a live run's samples in runs, show, replay, summary and report; a range that misses says when the run ran"

# the summary shows the command shell-quoted: bash reads back the same words
"$RT" --quiet -i 0.05 -- sh -c ': "$@"' x "a b" "it's" "$(printf 'l1\nl2')" '$HOME' || fail "quoted job"
line=$("$EXP" summary latest | sed -n 's/^  command: //p')
bash -c 'eval "set -- $1"; printf "%s\n" "$#" "$@"' _ "$line" > "$T/words"
printf '%s\n' 8 sh -c ': "$@"' x "a b" "it's" "$(printf 'l1\nl2')" '$HOME' > "$T/want"
cmp -s "$T/words" "$T/want" || fail "the command does not read back: $line"
ok "the summary's command reads back as the same words"

# tail -n N starts N samples back from the newest, which the ring has
# before the store (it takes samples in groups a few seconds late): 4 s
# into a 10 Hz run, tail -n 3 prints 3 lines and then only new ones
"$RT" --quiet -i 0.1 -n tailn -- sleep 6 &
J=$!
track $J
sleep 4
timeout 0.6 "$EXP" tail -n 3 > "$T/tn" 2>/dev/null || true
timeout 0.6 "$EXP" tail > "$T/t1" 2>/dev/null || true
wait $J
n=$(wc -l < "$T/tn"); n1=$(wc -l < "$T/t1")
# 0.6 s at 10 Hz is at most ~7 new lines (a loaded machine: fewer)
[ "$n" -ge 3 ] && [ "$n" -le 11 ] || fail "tail -n 3 printed $n lines in 0.6 s (the store's lag dumped?)"
[ "$n1" -ge 1 ] && [ "$n1" -le 9 ] || fail "tail printed $n1 lines in 0.6 s"
ok "tail -n N starts N samples back from the ring's newest ($n lines in 0.6 s with -n 3, $n1 with the default 1)"

# tail's exit says how the run ended: 0 when it finished (above), 1 when
# its recorder died without finishing it, said in one line (issue 38,
# item 15: it was 0)
"$REC" -i 0.1 --quiet -n tailk &
rec=$!; track $rec
sleep 1
"$EXP" tail > /dev/null 2> "$T/tailk.err" &
tk=$!; track $tk
sleep 1
kill -9 $rec
i=0
while kill -0 $tk 2>/dev/null && [ $i -lt 200 ]; do sleep 0.05; i=$((i + 1)); done
tkrc=0
wait $tk || tkrc=$?
[ "$tkrc" = 1 ] || fail "tail exited $tkrc after the recorder died: $(cat "$T/tailk.err")"
grep -q "stopped without finishing\|not being recorded any more" "$T/tailk.err" ||
	fail "tail did not say the recorder died: $(cat "$T/tailk.err")"
ok "tail after its recorder died: exit 1 and one line ($(head -c 90 "$T/tailk.err"))"
