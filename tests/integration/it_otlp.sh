#!/bin/sh
# rt-export push --to otlp: every request body checked against the official
# OTLP schema (the OpenTelemetry JavaScript packages' protobuf types:
# fromObject, verify, an encode/decode round trip that keeps every value),
# the points against the replay (gauges as they are, counters the running
# sum, times to the ns), the OTEL_* variables, and the lifecycle against
# tools/otlp_receiver.py answering 429 with Retry-After, 503, garbage,
# partial success, 400 and silence: one line for what is refused, resumed
# by the next push, every point once. Skips without node or the npm peers.
. "$(dirname "$0")/lib.sh"
HERE=$(cd "$(dirname "$0")/../.." && pwd)
PEERS="$HERE/tests/peers"
command -v node > /dev/null 2>&1 && [ -d "$PEERS/node_modules/@opentelemetry/otlp-transformer" ] || {
	echo "skip: no node or no tests/peers/node_modules (tools/test.sh installs them)"
	exit 0
}
PORT=$(port)
R="$T/recv"
mkdir -p "$R"
serve otlp python3 "$HERE/tools/otlp_receiver.py" "$PORT" "$R"
export OTEL_EXPORTER_OTLP_ENDPOINT="http://127.0.0.1:$PORT/"
export OTEL_EXPORTER_OTLP_HEADERS="x-tenant=team%20a,authorization=Bearer t0k"
export OTEL_RESOURCE_ATTRIBUTES="deployment.environment=ci,service.name=overridden"
export OTEL_SERVICE_NAME=trainer

# check RUN FIRST: the accepted bodies pass the schema; the points of RUN are
# the replay's, each once (FIRST: the first accepted body of this run)
check() {
	"$EXP" replay "$1" -f json > "$T/replay$1.jsonl"
	node "$PEERS/otlp_check.js" "$R/accepted" > "$T/points.jsonl" 2> "$T/schema.err" ||
		fail "a body failed the OTLP schema: $(head -3 "$T/schema.err")"
	python3 - "$1" "$T/replay$1.jsonl" "$T/points.jsonl" << 'PY'
import json, sys
run, replay, points = sys.argv[1], sys.argv[2], sys.argv[3]
lines = [json.loads(l) for l in open(replay)]
raw = [l.split('"timestamp":', 1)[1].split(",", 1)[0] for l in open(replay)]
us = [int(r.split(".")[0]) * 1000000 + int(r.split(".")[1]) for r in raw]
pts = [json.loads(l) for l in open(points)]
pts = [p for p in pts if p["resource"].get("rt.run.id") == run]
assert pts, "no points of run " + run
res = pts[0]["resource"]
assert res["service.name"] == "trainer", res          # OTEL_SERVICE_NAME wins
assert res["deployment.environment"] == "ci", res       # OTEL_RESOURCE_ATTRIBUTES
assert res.get("host.name") and res.get("rt.store"), res
# the run's end: each series ends with one point flagged as no recorded
# value (Prometheus turns it into a staleness marker), after its last
stale = [p for p in pts if p["flags"] & 1]
pts = [p for p in pts if not p["flags"] & 1]
assert all(p.get("value") is None for p in stale), stale[:1]
ends = {}
for p in pts:
    k = (p["metric"], json.dumps(p["attrs"], sort_keys=True))
    ends[k] = max(ends.get(k, 0), int(p["time"]))
sk = [(p["metric"], json.dumps(p["attrs"], sort_keys=True)) for p in stale]
assert sorted(sk) == sorted(ends), ("one end marker per series", len(sk), len(ends))
assert all(int(p["time"]) > ends[(p["metric"], json.dumps(p["attrs"], sort_keys=True))] for p in stale)
seen = {}
for p in pts:
    key = (p["metric"], json.dumps(p["attrs"], sort_keys=True), p["time"])
    assert key not in seen, ("twice", key)
    seen[key] = p
def series(metric, attrs):
    a = json.dumps(attrs, sort_keys=True)
    s = sorted((int(p["time"]), p) for (m, at, t), p in seen.items() if m == metric and at == a)
    return [p for _, p in s]
def same(got, want, what):
    assert len(got) == len(want), (what, "points", len(got), "lines", len(want))
    for p, (t, v) in zip(got, want):
        assert int(p["time"]) // 1000 == t, (what, p["time"], t)
        assert abs(p["value"] - v) <= 1e-9 * max(1.0, abs(v)), (what, p["value"], v)
mem = series("process.memory.usage", {})
same(mem, [(t, l["cpu"]["process_pss_mib"] * 1048576) for t, l in zip(us, lines)], "memory")
assert all(p["kind"] == "gauge" and p["unit"] == "By" for p in mem)
acc, want = 0.0, []
for t, l in zip(us, lines):
    acc += l["cpu"]["process_utime_secs"]
    want.append((t, acc))
cpu = series("process.cpu.time", {"cpu.mode": "user"})
same(cpu, want, "cpu")
assert all(p["kind"] == "sum" and p["temporality"] == 2 and p["monotonic"] for p in cpu), cpu[0]
assert len({p["start"] for p in cpu}) == 1 and int(cpu[0]["start"]) < int(cpu[0]["time"])
print("run %s: %d lines; memory and CPU points once each, values equal" % (run, len(lines)))
PY
}

# 1. a wrapped run
env -u OTEL_EXPORTER_OTLP_ENDPOINT "$RT" -i 0.1 -n otel --quiet -- python3 -c '
import time
a = bytearray(30 << 20)
e = time.time() + 1.2
while time.time() < e: pass' || fail "the wrapped run"
"$EXP" push latest --to otlp -v 2> "$T/push.err" || fail "push: $(cat "$T/push.err")"
check 1 || fail "run 1"
python3 - "$R/requests.log" << 'PY' || fail "request headers: $(head -1 "$R/requests.log")"
import json, sys
for l in open(sys.argv[1]):
    h = {k.lower(): v for k, v in json.loads(l)["headers"].items()}
    r = json.loads(l)
    assert r["path"] == "/v1/metrics", r["path"]
    assert h["content-type"] == "application/json" and h["content-encoding"] == "gzip", h
    assert h["x-tenant"] == "team a" and h["authorization"] == "Bearer t0k", h
PY
ok "OTLP JSON: every body passes the official schema and keeps its values; points equal the replay, once; OTEL_* endpoint, headers, resource and service name"

# 2. faults: 429 (Retry-After), 503, garbage, then ok, partial success, ok, 400
env -u OTEL_EXPORTER_OTLP_ENDPOINT "$RT" -i 0.05 -n otel --quiet -- sleep 3 || fail "run 2"
echo "429 503 garbage ok partial ok 400" > "$R/script"
set +e
TRACKER_PUSH_BATCH_LINES=7 "$EXP" push 2 --to otlp > /dev/null 2> "$T/f1.err"
rc=$?
set -e
[ $rc -eq 1 ] || fail "push against 400: exit $rc ($(cat "$T/f1.err"))"
grep -q "rejected 3 data points" "$T/f1.err" || fail "partial success not said: $(cat "$T/f1.err")"
grep -q "refused samples .*(HTTP 400" "$T/f1.err" || fail "400 not said: $(cat "$T/f1.err")"
[ "$(wc -l < "$T/f1.err")" -eq 2 ] || fail "not one line each: $(cat "$T/f1.err")"
# silence: bounded by the request timeout and the retry bound
echo "silence silence silence silence silence silence" > "$R/script"
set +e
TRACKER_PUSH_BATCH_LINES=7 TRACKER_PUSH_TIMEOUT_SECS=1 TRACKER_PUSH_RETRY_SECS=1 \
	"$EXP" push 2 --to otlp > /dev/null 2> "$T/f2.err"
rc=$?
set -e
[ $rc -eq 1 ] && grep -q "no answer" "$T/f2.err" || fail "silence: exit $rc ($(cat "$T/f2.err"))"
# a Retry-After of 31 years: TRACKER_PUSH_RETRY_SECS still bounds the wait
echo "429long 429long 429long" > "$R/script"
t0=$(date +%s)
set +e
TRACKER_PUSH_BATCH_LINES=7 TRACKER_PUSH_RETRY_SECS=2 "$EXP" push 2 --to otlp > /dev/null 2> "$T/f4.err"
rc=$?
set -e
took=$(($(date +%s) - t0))
[ $rc -eq 1 ] && [ $took -le 6 ] || fail "Retry-After beat the retry bound: exit $rc after $took s ($(cat "$T/f4.err"))"
: > "$R/script"
TRACKER_PUSH_BATCH_LINES=7 "$EXP" push 2 --to otlp -v 2> "$T/f3.err" || fail "resumed push: $(cat "$T/f3.err")"
grep -q "resumes at sample" "$T/f3.err" || fail "did not resume: $(cat "$T/f3.err")"
check 2 || fail "run 2 after the faults"
# this host has no GPU: no GPU series was sent (all zeros for every dashboard)
! cat "$R"/accepted/* | grep -qi '"name":"[^"]*gpu' || fail "GPU series sent from a host without a GPU"
ok "OTLP faults: 429 waits its Retry-After, 503 and garbage are retried, partial success said once, 400 and silence stop with one line and resume later; every point once"

# 3. bad variables: one line, exit 2, nothing sent
set +e
OTEL_EXPORTER_OTLP_HEADERS="no-equals-sign" "$EXP" push 1 --to otlp > /dev/null 2> "$T/b1"; r1=$?
env -u OTEL_EXPORTER_OTLP_ENDPOINT "$EXP" push 1 --to otlp > /dev/null 2> "$T/b2"; r2=$?
OTEL_RESOURCE_ATTRIBUTES="=x" "$EXP" push 1 --to otlp > /dev/null 2> "$T/b3"; r3=$?
TRACKER_REMOTE_WRITE_URL="http://127.0.0.1:1/w" TRACKER_REMOTE_WRITE_BEARER_TOKEN="$(printf 'tok\r\nX-Evil: 1')" \
	"$EXP" push 1 --to prometheus > /dev/null 2> "$T/b4"; r4=$?
# values longer than their bound: refused whole, never sent cut
long() { python3 -c "import sys; print('$1' + 'a' * int(sys.argv[1]))" "$2"; }
OTEL_EXPORTER_OTLP_HEADERS="$(long X- 60000)=1" "$EXP" push 1 --to otlp > /dev/null 2> "$T/b5"; r5=$?
OTEL_EXPORTER_OTLP_HEADERS="x-key=$(long v 1200)" "$EXP" push 1 --to otlp > /dev/null 2> "$T/b6"; r6=$?
OTEL_EXPORTER_OTLP_ENDPOINT="http://127.0.0.1:1/$(long p 70000)" "$EXP" push 1 --to otlp > /dev/null 2> "$T/b7"; r7=$?
OTEL_RESOURCE_ATTRIBUTES="team=$(long t 300)" "$EXP" push 1 --to otlp > /dev/null 2> "$T/b8"; r8=$?
OTEL_SERVICE_NAME="$(printf 'svc\001x')" "$EXP" push 1 --to otlp > /dev/null 2> "$T/b9"; r9=$?
set -e
for b in 5 6 7 8 9; do
	eval "r=\$r$b"
	[ "$r" -eq 2 ] && [ "$(wc -l < "$T/b$b")" -eq 1 ] && grep -q "longer than\|control character" "$T/b$b" ||
		fail "an over-long or control-character value (case $b): exit $r $(head -c 300 "$T/b$b")"
done
[ $r4 -eq 2 ] && grep -q "TRACKER_REMOTE_WRITE_BEARER_TOKEN holds a control character" "$T/b4" ||
	fail "a token with a line break: $r4 $(cat "$T/b4")"
[ $r1 -eq 2 ] && grep -q "OTEL_EXPORTER_OTLP_HEADERS" "$T/b1" || fail "bad headers: $r1 $(cat "$T/b1")"
[ $r2 -eq 2 ] && grep -q "OTEL_EXPORTER_OTLP_ENDPOINT" "$T/b2" || fail "no endpoint: $r2 $(cat "$T/b2")"
[ $r3 -eq 2 ] && grep -q "OTEL_RESOURCE_ATTRIBUTES" "$T/b3" || fail "bad resource: $r3 $(cat "$T/b3")"
ok "malformed OTEL_* variables or none, values over their bound or with control bytes: one line, exit 2"

# 4. streamed as it is recorded: the OTLP endpoint variables make the
# recorder start the push (its own process beside a Prometheus one that is
# down: that one fails alone)
: > "$R/script"
TRACKER_REMOTE_WRITE_URL="http://127.0.0.1:1/api/v1/write" TRACKER_PUSH_RETRY_SECS=2 \
	"$RT" -i 0.5 -n otel --quiet -- sleep 15 2> "$T/live.err" &
J=$!
track $J
sleep 13
mid=$(cat "$R"/accepted/* | grep -o '"rt.run.id","value":{"stringValue":"3"}' | wc -l)
wait $J || fail "the streamed run: $(cat "$T/live.err")"
[ "$mid" -ge 1 ] || fail "nothing arrived while run 3 was recorded"
check 3 || fail "the streamed run, once it ended"
ok "OTEL_EXPORTER_OTLP_ENDPOINT: the run streamed while it ran and every point arrived once; a Prometheus endpoint that is down did not stop it"

# 5. an engine that is down at the job's end costs it at most
# TRACKER_PUSH_EXIT_WAIT_SECS (default 3 s, was 10), one line, and its exit
# code; the run is pushed later, every point once
start=$(date +%s%N)
set +e
OTEL_EXPORTER_OTLP_ENDPOINT="http://127.0.0.1:1/" "$RT" -i 0.2 -n down --quiet -- sh -c 'sleep 1; exit 6' 2> "$T/down.err"
rc=$?
set -e
took=$(( ($(date +%s%N) - start) / 1000000 ))
[ $rc -eq 6 ] || fail "a dead engine changed the exit code: $rc $(cat "$T/down.err")"
[ $took -le 5500 ] || fail "a dead engine held the job's exit for $took ms"
[ "$(wc -l < "$T/down.err")" -eq 1 ] && grep -q "did not finish within 3 s.*rt-export push 4 --to otlp" "$T/down.err" ||
	fail "the dead engine's line: $(cat "$T/down.err")"
"$EXP" push 4 --to otlp > /dev/null 2> "$T/later.err" || fail "the later push: $(cat "$T/later.err")"
check 4 || fail "run 4, pushed after the engine came back"
ok "a dead metrics engine costs the job ${took} ms in all (a 1 s job; exit wait 3 s), one line and nothing else; the run is pushed later, every point once"
