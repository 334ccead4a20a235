#!/bin/sh
# rt-export compact: the store rewritten without the space of deleted runs,
# every remaining run replaying the same bytes; refused while a recorder
# writes to the store.
. "$(dirname "$0")/lib.sh"

# the fake clock: thousands of samples in a moment
fast() { RT_TEST_CLOCK=1795000000 "$REC" --quiet "$@"; }
for n in 1 2 3 4; do fast -i 1 --count 400 -n "c$n"; done
for n in 1 2 3; do fast -i 1 --count 3000 -n big; done
"$EXP" runs > "$T/runs"
[ "$(wc -l < "$T/runs")" -ge 5 ] || fail "runs: $(cat "$T/runs")"
for id in $("$EXP" runs | awk 'NR > 1 { print $1 }'); do
	"$EXP" replay "$id" -f csv | md5sum > "$T/before-$id"
done
size0=$(stat -c %s "$RT_STORE/data.mdb")
"$EXP" compact > "$T/out" || fail "compact: $(cat "$T/out")"
grep -q "compacted $RT_STORE" "$T/out" || fail "compact said: $(cat "$T/out")"
size1=$(stat -c %s "$RT_STORE/data.mdb")
[ "$size1" -le "$size0" ] || fail "compact grew the store: $size0 -> $size1"
[ "$(stat -c %a "$RT_STORE/data.mdb")" = 600 ] || fail "compacted store is not 0600"
"$EXP" runs | cmp -s - "$T/runs" || fail "runs differ after compact"
for id in $("$EXP" runs | awk 'NR > 1 { print $1 }'); do
	"$EXP" replay "$id" -f csv | md5sum | cmp -s - "$T/before-$id" || fail "run $id replays differently"
done
ok "compact: $size0 -> $size1 bytes, $(($(wc -l < "$T/runs") - 1)) runs replay the same"

# a store whose oldest runs the size cap deleted shrinks
fast -i 1 --count 50000 --store-max-mb 1 -n capped # (about 32 bytes a sample: 1.6 MB)
n_after=$("$EXP" runs | awk 'NR > 1' | wc -l)
[ "$n_after" -lt 8 ] || fail "the cap deleted nothing ($n_after runs)"
size2=$(stat -c %s "$RT_STORE/data.mdb")
"$EXP" compact > /dev/null || fail "second compact"
size3=$(stat -c %s "$RT_STORE/data.mdb")
[ "$size3" -lt "$size2" ] || fail "no space given back: $size2 -> $size3"
fast -i 1 --count 100 -n after-compact || fail "recording after compact"
last=$("$EXP" runs | awk 'NR > 1 { id = $1 } END { print id }')
[ "$("$EXP" replay "$last" -f csv | wc -l)" -eq 101 ] || fail "the run after compact" # header + 100
ok "the cap's deleted runs given back: $size2 -> $size3 bytes; recording goes on"

# refused, in one line, while a recorder writes
"$REC" --quiet -i 0.05 --count 200 &
rec=$!; track $rec
wait_for sh -c "\"$EXP\" runs | grep -q running" || fail "recorder did not start"
set +e
"$EXP" compact > "$T/out" 2> "$T/err"
rc=$?
set -e
[ $rc -eq 1 ] || fail "compact during a run: exit $rc"
[ "$(wc -l < "$T/err")" -eq 1 ] && grep -q "compact it when" "$T/err" || fail "message: $(cat "$T/err")"
kill $rec; wait $rec 2>/dev/null || true
ok "compact refused while a recorder writes (one line, exit 1), recording goes on after it"

# delete: one run, a job's runs before a date, never a running one; then compact
"$REC" --quiet -i 0.02 --count 3 -n old
"$REC" --quiet -i 0.02 --count 3 -n old
"$REC" --quiet -i 0.02 --count 3 -n keep
"$RT" --quiet -i 0.1 -n old -- sleep 2 &
rec=$!; track $rec
wait_for sh -c "\"$EXP\" runs | grep -q running" || fail "recorder did not start"
set +e
"$EXP" delete --job old --before 2099-01-01T00:00:00Z > "$T/out" 2> "$T/err"
rc=$?
set -e
[ $rc -eq 1 ] || fail "delete with a running run: exit $rc"
grep -q "still running: not deleted" "$T/err" || fail "message: $(cat "$T/err")"
[ "$(grep -c "^deleted run" "$T/out")" -eq 2 ] || fail "deleted: $(cat "$T/out")"
"$EXP" runs | grep -q " keep" || fail "another job's run was deleted"
wait $rec
"$EXP" delete latest --compact > "$T/out" || fail "delete latest --compact"
grep -q "^compacted" "$T/out" || fail "no compact: $(cat "$T/out")"
[ "$("$EXP" runs | grep -c ' old')" -eq 0 ] || fail "runs of old remain: $("$EXP" runs)"
ok "delete: a run, a job's runs before a date (a running one refused), then compact"
