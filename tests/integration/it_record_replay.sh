#!/bin/sh
# Record with the real binaries; live output equals replay; resolutions, ranges.
. "$(dirname "$0")/lib.sh"

"$RT" -i 0.05 --count 20 -f csv -o "$T/live.csv" -n itjob || fail "recorder exit $?"
"$EXP" replay 1 -f csv > "$T/replay.csv"
cmp "$T/live.csv" "$T/replay.csv" || fail "live CSV differs from replay"
[ "$(wc -l < "$T/live.csv")" -eq 21 ] || fail "expected header + 20 rows"
awk -F, '{ if (NF != 32) exit 1 }' "$T/live.csv" || fail "a CSV row without 32 columns"
ok "live CSV == replay CSV"

"$RT" -i 0.05 --count 20 -o "$T/live.jsonl" 2> "$T/err" || fail "recorder exit"
# (but a loaded host's "cannot keep up": the recorder flagging its own late sample)
[ -z "$(grep -v "cannot keep up" "$T/err")" ] || fail "stderr not empty with --output: $(cat "$T/err")"
"$EXP" replay 2 > "$T/replay.jsonl"
cmp "$T/live.jsonl" "$T/replay.jsonl" || fail "live JSON differs from replay"
python3 - "$T/replay.jsonl" <<'PY' || fail "JSON lines check"
import json, sys
lines = [json.loads(l) for l in open(sys.argv[1])]
assert len(lines) == 20, len(lines)
for i, d in enumerate(lines):
    assert d["seq"] == i + 1
    assert ("actual_interval_ms" in d) == (i > 0)
    for k in ("timestamp_secs", "cpu", "memory", "network", "disk", "gpu", "job_name",
              "tracked_pid", "resource-tracker-version"):
        assert k in d, k
    assert 0 <= d["cpu"]["utilization_pct"] <= len(d["cpu"]["per_core_pct"]) + 0.01
    assert all(n["interface"] != "lo" for n in d["network"])
PY
ok "JSON lines"

# metrics go to stderr by default; stdout stays clean; --quiet prints nothing
# (at -i 0.2: a loaded host, or the sanitizers, may not keep up with 0.02,
# which is a warning line of its own)
"$RT" -i 0.2 --count 3 > "$T/out" 2> "$T/err"
[ ! -s "$T/out" ] || fail "metrics on stdout"
[ "$(wc -l < "$T/err")" -eq 3 ] || fail "expected 3 lines on stderr: $(cut -c1-120 "$T/err")"
"$RT" -i 0.02 --count 3 --quiet > "$T/out" 2>&1
[ ! -s "$T/out" ] || fail "--quiet printed: $(cat "$T/out")"
ok "stderr default, --quiet"

# --every N: coarse lines average over N intervals; CPU seconds add up
"$EXP" replay 2 --every 5 > "$T/every.jsonl"
python3 - "$T/replay.jsonl" "$T/every.jsonl" <<'PY' || fail "--every"
import json, sys
fine = [json.loads(l) for l in open(sys.argv[1])]
coarse = [json.loads(l) for l in open(sys.argv[2])]
assert [d["seq"] for d in coarse] == [5, 10, 15, 20], [d["seq"] for d in coarse]
for k in ("utime_secs", "stime_secs"):
    a = sum(d["cpu"][k] for d in fine[:20]); b = sum(d["cpu"][k] for d in coarse)
    assert abs(a - b) < 1e-6, (k, a, b)
assert coarse[1]["actual_interval_ms"] > 200
PY
ok "--every"

# --from/--to with --every: windows start at --from, every sample of the
# range is in exactly one line, a short last window is kept (issue 39)
# (a store of its own: the checks below count this store's runs)
RT_TEST_CLOCK=1795000000 "$REC" --store "$T/wstore" --quiet -i 1 --count 30
"$EXP" --store "$T/wstore" replay 1 > "$T/w.fine"
"$EXP" --store "$T/wstore" replay 1 --from 1795000010 --to 1795000020 --every 5 > "$T/w.coarse"
"$EXP" --store "$T/wstore" replay 1 --every 7 > "$T/w.whole"
python3 - "$T/w.fine" "$T/w.coarse" "$T/w.whole" <<'PY' || fail "--from/--to --every windows"
import json, sys
fine = [json.loads(l) for l in open(sys.argv[1])]
coarse = [json.loads(l) for l in open(sys.argv[2])]
whole = [json.loads(l) for l in open(sys.argv[3])]
ts = [d["timestamp_secs"] for d in coarse]
assert ts == [1795000014, 1795000019, 1795000020], ts
inrange = [d for d in fine if 1795000010 <= d["timestamp_secs"] <= 1795000020]
for k in ("utime_secs", "stime_secs"):
    a = sum(d["cpu"][k] for d in inrange); b = sum(d["cpu"][k] for d in coarse)
    assert abs(a - b) < 1e-6, (k, a, b)
assert whole[-1]["seq"] == fine[-1]["seq"], (whole[-1]["seq"], fine[-1]["seq"])
for k in ("utime_secs", "stime_secs"):
    a = sum(d["cpu"][k] for d in fine); b = sum(d["cpu"][k] for d in whole)
    assert abs(a - b) < 1e-6, (k, a, b)
PY
ok "--from/--to --every: windows from --from, each sample in one line, the short last one kept"

# --every: the wrapper's last sample, taken when the command ended a moment
# after the one before, joins the last window rather than making a line
# that repeats its time (issue 45 item 10)
"$RT" --store "$T/fstore" -i 0.5 --quiet -- sleep 2.7
"$EXP" --store "$T/fstore" replay 1 > "$T/f.fine"
"$EXP" --store "$T/fstore" replay 1 --every 5 > "$T/f.coarse"
"$EXP" --store "$T/fstore" replay 1 -f csv --every 5 > "$T/f.csv"
python3 - "$T/f.fine" "$T/f.coarse" "$T/f.csv" <<'PY' || fail "--every with the wrapper's last sample"
import json, sys
fine = [json.loads(l) for l in open(sys.argv[1])]
coarse = [json.loads(l) for l in open(sys.argv[2])]
gap = fine[-1]["timestamp"] - fine[-2]["timestamp"]
assert gap < 0.45, ("the last sample was not a short one: nothing tested", gap)
ts = [d["timestamp"] for d in coarse]
assert all(b - a > 0.45 for a, b in zip(ts, ts[1:])), ("lines less than an interval apart", ts)
assert coarse[-1]["seq"] == fine[-1]["seq"], (coarse[-1]["seq"], fine[-1]["seq"])
for k in ("utime_secs", "stime_secs"):
    a = sum(d["cpu"][k] for d in fine); b = sum(d["cpu"][k] for d in coarse)
    assert abs(a - b) < 1e-6, (k, a, b)
rows = [l.split(",")[0] for l in open(sys.argv[3])][1:]
assert len(rows) == len(set(rows)), ("a repeated timestamp in the CSV", rows)
PY
ok "--every: the wrapper's short last sample joins the last window (no repeated time), CPU seconds add up"

# --from/--to select by time
# (the text of "timestamp", not a float that may lose its last digit)
from=$(sed -n 5p "$T/replay.jsonl" | sed 's/.*"timestamp":\([0-9.]*\).*/\1/')
to=$(sed -n 9p "$T/replay.jsonl" | sed 's/.*"timestamp":\([0-9.]*\).*/\1/')
"$EXP" replay 2 --from "$from" --to "$to" > "$T/range.jsonl"
python3 -c "
import json,sys
s=[json.loads(l)['seq'] for l in open('$T/range.jsonl')]
assert s == [5,6,7,8,9], s" || fail "--from/--to"
ok "--from/--to"

"$EXP" runs > "$T/runs"
grep -q "itjob" "$T/runs" || fail "runs does not list the job"
[ "$(grep -c finished "$T/runs")" -eq 4 ] || fail "runs: $(cat "$T/runs")"
"$EXP" show 1 | python3 -c '
import json,sys
m=json.load(sys.stdin)
assert m["status"]=="finished" and m["samples"]==20 and m["metadata"]["job_name"]=="itjob", m' \
	|| fail "show"
ok "runs, show"

# default store: per user, under XDG_DATA_HOME or ~/.local/share
( unset RT_STORE XDG_DATA_HOME; HOME="$T/home" "$RT" --count 1 -i 0.01 --quiet ) || fail "default store"
[ -f "$T/home/.local/share/resource-tracker/data.mdb" ] || fail "no store under HOME"
ok "default store location"
