#!/bin/sh
# The uploader against a misbehaving Sentinel API: refusals, garbage, unsafe
# answers, slow answers, dropped connections and a down window. Delivery
# must stay exactly once; a refused run must not disturb local output.
. "$(dirname "$0")/lib.sh"
# a loaded host may add its "cannot keep up" warning to any run's stderr:
# not what these runs are about
quiet_load() { sed -i '/warning: sampling cannot keep up/d' "$1"; }
HERE=$(cd "$(dirname "$0")/../.." && pwd)
[ -d "$HERE/tests/peers/node_modules/@20minutes/s3rver" ] || fail "S3 peer not installed (tools/setup.sh runs npm ci in tests/peers)"
S3P=$(port)
serve s3 node "$HERE/tests/peers/s3peer.js" $S3P "$T/s3" rt-test
api() {
	APIP=$(port)
	rm -f "$T/api.log"
	serve api python3 "$HERE/tools/sentinel_server.py" $APIP "$T/api.log" "$@"
	APIPID=$SERVED
	export SENTINEL_API_URL=http://127.0.0.1:$APIP
}
export SENTINEL_API_TOKEN=test-token TRACKER_S3_ENDPOINT=http://127.0.0.1:$S3P RT_IMDS_ADDR=127.0.0.1:1
rec_only() { env -u SENTINEL_API_TOKEN "$REC" "$@"; }

delivered() { # RUN: every replayed line in the run's objects or inline data, once
	"$EXP" replay "$1" -f csv > "$T/replay.csv"
	python3 - "$T" "$1" "$EXP" <<'PY'
import glob, gzip, json, os, subprocess, sys
from collections import Counter
t, run, exp = sys.argv[1], sys.argv[2], sys.argv[3]
sid = json.load(open(os.path.join(t, "store", "upload", run + ".json")))["sentinel_run"]
assert sid and "/" not in sid and ".." not in sid, sid
calls = [json.loads(l) for l in open(os.path.join(t, "api.log"))]
# finish calls the server accepted (2xx): not refused or dropped by a fault
fin = [c for c in calls if c["kind"] == "finish" and sid in c["path"]
       and c.get("fault") in (None, "slow", "garbage")]
assert len(fin) == 1, "finish accepted %d times" % len(fin)
want = open(os.path.join(t, "replay.csv")).read().splitlines()[1:]
got = []
body = fin[0]["body"]
# the allocation is known once the run is over: the same rule as the summary
summary = json.loads(subprocess.check_output([exp, "summary", run, "--json"]))
assert body.get("host_server_allocation") == summary["allocation"], (
    body.get("host_server_allocation"), summary["allocation"])
tracked = summary["stats"]["process_cpu_usage"]["mean"] is not None
assert summary["allocation"] in (("shared", "dedicated") if tracked else (None,)), summary
if body["data_source"] == "inline":
    got = body["data_csv"].splitlines()[1:]
else:
    for o in glob.glob(os.path.join(t, "s3", "rt-test", "uploads", sid, "*._S3rver_object")):
        got += gzip.decompress(open(o, "rb").read()).decode().splitlines()[1:]
assert Counter(got) == Counter(want), "lost %d, duplicated %d" % (
    sum((Counter(want) - Counter(got)).values()), sum((Counter(got) - Counter(want)).values()))
print("run %s: %d samples delivered once" % (run, len(want)))
PY
}

# 422 on start: streaming is off for that run, the job and its local output go on
api --faults start:422:99
set +e
"$RT" -i 0.05 -o "$T/live.csv" -f csv -- sh -c 'sleep 0.5; exit 5' 2> "$T/err"
rc=$?
quiet_load "$T/err"
set -e
[ $rc -eq 5 ] || fail "exit $rc"
[ "$(wc -l < "$T/live.csv")" -ge 8 ] || fail "local output stopped: $(wc -l < "$T/live.csv") lines"
grep -q "Sentinel refused the run" "$T/err" || fail "message: $(cat "$T/err")"
kill $APIPID; wait $APIPID 2>/dev/null || true
ok "422 on start: local output and exit code unaffected"

# a 2xx start answer that cannot be used (not JSON, an unsafe run id) is a
# configuration error: one line, one registration (no orphan runs), no wait
for fault in garbage badid; do
	api --faults start:$fault:99
	set +e
	start=$(date +%s%N)
	"$RT" -i 0.05 -o "$T/live.csv" -f csv -- sh -c 'sleep 0.5; exit 5' 2> "$T/err"
	rc=$?
	took=$(( ($(date +%s%N) - start) / 1000000 ))
	quiet_load "$T/err"
	set -e
	[ $rc -eq 5 ] || fail "$fault: exit $rc"
	[ "$(wc -l < "$T/live.csv")" -ge 8 ] || fail "$fault: local output stopped"
	[ "$(wc -l < "$T/err")" -eq 1 ] || fail "$fault: not one line: $(cat "$T/err")"
	grep -q "answer to start the run cannot be used.*streaming is off.*rt-export upload" "$T/err" \
		|| fail "$fault: message: $(cat "$T/err")"
	n=$(grep -c '"kind": *"start"' "$T/api.log" || true)
	[ "$n" -eq 1 ] || fail "$fault: $n start calls (orphan runs on Sentinel)"
	[ $took -lt 4000 ] || fail "$fault: the tracker took $took ms to exit"
	kill $APIPID; wait $APIPID 2>/dev/null || true
	rm -f "$T/api.log"
done
# a malformed SENTINEL_API_URL: one line, streaming off, job unaffected
set +e
SENTINEL_API_URL="ftp://nowhere" "$RT" -i 0.05 -o "$T/live.csv" -- sh -c 'sleep 0.3; exit 4' 2> "$T/err"
rc=$?
quiet_load "$T/err"
set -e
[ $rc -eq 4 ] || fail "bad URL: exit $rc"
grep -q "SENTINEL_API_URL='ftp://nowhere' is not an https URL" "$T/err" || fail "bad URL: $(cat "$T/err")"
[ "$(wc -l < "$T/err")" -eq 1 ] || fail "bad URL: not one line: $(cat "$T/err")"
ok "unusable start answers and a bad URL: one line, no retry loop, no orphan runs"
# a token that would split the request's headers, a URL longer than rt
# sends whole: refused before any request (the API hears nothing), one
# line, the job's exit code kept, the run kept in the store
api
for bad in "SENTINEL_API_TOKEN=$(printf 'tok\r\nX-Evil: 1')" \
	"SENTINEL_API_URL=$SENTINEL_API_URL/$(head -c 1200 /dev/zero | tr '\0' a)"; do
	set +e
	env "$bad" "$RT" -i 0.05 -o "$T/live.csv" -- sh -c 'sleep 0.3; exit 4' 2> "$T/err"
	rc=$?
	quiet_load "$T/err"
	set -e
	what=${bad%%=*}
	[ $rc -eq 4 ] || fail "$what: exit $rc"
	[ "$(wc -l < "$T/err")" -eq 1 ] || fail "$what: not one line: $(cat "$T/err")"
	grep -q "$what .*\(control character\|longer than 1000 bytes\)" "$T/err" || fail "$what: $(cat "$T/err")"
	! grep -q '"kind"' "$T/api.log" 2>/dev/null || fail "$what: a request reached the API: $(cat "$T/api.log")"
done
kill $APIPID; wait $APIPID 2>/dev/null || true
rm -f "$T/api.log"
ok "a token with CR LF and an over-long URL: refused before any request, one line"

# a bad TRACKER_UPLOAD_INTERVAL: one warning and the default (60 s), so a
# run shorter than that finishes inline (seed T-EOR-03)
for bad in abc 1m -5; do
	api
	set +e
	TRACKER_UPLOAD_INTERVAL=$bad "$RT" -i 0.05 --quiet -- sh -c 'sleep 1.5' 2> "$T/err"
	quiet_load "$T/err"
	set -e
	grep -q "warning: TRACKER_UPLOAD_INTERVAL='$bad' is not a number of seconds" "$T/err" \
		|| fail "interval '$bad': $(cat "$T/err")"
	[ "$(wc -l < "$T/err")" -eq 1 ] || fail "interval '$bad': $(cat "$T/err")"
	python3 - "$T/api.log" <<'PY' || fail "interval '$bad': not inline"
import json, sys
calls = [json.loads(l) for l in open(sys.argv[1])]
fin = [c for c in calls if c["kind"] == "finish"]
assert len(fin) == 1 and fin[0]["body"]["data_source"] == "inline", fin
PY
	kill $APIPID; wait $APIPID 2>/dev/null || true
	rm -f "$T/api.log"
done
# all went well: nothing on stderr but metrics; -v says it finished
api
"$RT" -i 0.05 -o "$T/live.jsonl" -- sh -c 'sleep 0.3' 2> "$T/err"
quiet_load "$T/err"
[ ! -s "$T/err" ] || fail "a successful upload printed: $(cat "$T/err")"
# a wrapped run: finish says how the host was shared, by the summary's rule
python3 - "$T/api.log" "$("$EXP" summary latest --json)" <<'PY' || fail "host_server_allocation in finish"
import json, sys
fin = [json.loads(l) for l in open(sys.argv[1]) if '"finish"' in l]
want = json.loads(sys.argv[2])["allocation"]
assert want in ("shared", "dedicated"), want
assert fin and fin[-1]["body"]["host_server_allocation"] == want, (fin, want)
PY
"$RT" -v -i 0.05 -o "$T/live.jsonl" -- sh -c 'sleep 0.3' 2> "$T/err"
quiet_load "$T/err"
grep -q "finished on Sentinel" "$T/err" || fail "-v: $(cat "$T/err")"
kill $APIPID; wait $APIPID 2>/dev/null || true
rm -f "$T/api.log"
ok "TRACKER_UPLOAD_INTERVAL validated; short runs inline; quiet unless -v"

# a dropped connection, a 500 and a slow answer on start; 500 then garbage
# on refresh; garbage then 500 on finish: retried, delivered once
api --expire-secs 120 --faults start:drop:1,start:500:1,start:slow:1,refresh-credentials:500:1,refresh-credentials:garbage:1,finish:garbage:1,finish:500:1
rec_only --quiet -i 0.02 --count 150 &
rec=$!; track $rec
wait_for sh -c "\"$EXP\" runs | grep -q running" || fail "recorder did not start"
TRACKER_UPLOAD_INTERVAL=0.3 "$EXP" upload latest 2> "$T/err" || fail "upload: $(cat "$T/err")"
wait $rec 2>/dev/null || true
delivered "$("$EXP" runs | tail -1 | cut -d" " -f1)" || fail "delivery after faults"
[ "$(grep -c "retrying until it succeeds" "$T/err")" -le 3 ] || fail "too many warnings: $(cat "$T/err")"
kill $APIPID; wait $APIPID 2>/dev/null || true
ok "drops, 500s, slow answers, garbage on refresh and finish: delivered once"

# the API is down (connections dropped) for 3 s at the start of a live run
api --down-secs 3
rec_only --quiet -i 0.02 --count 250 &
rec=$!; track $rec
wait_for sh -c "\"$EXP\" runs | grep -q running" || fail "recorder did not start"
TRACKER_UPLOAD_INTERVAL=0.3 "$EXP" upload latest 2> "$T/err" || fail "upload: $(cat "$T/err")"
wait $rec 2>/dev/null || true
delivered "$("$EXP" runs | tail -1 | cut -d" " -f1)" || fail "delivery after the down window"
grep -q "succeeded again" "$T/err" || fail "no recovery line: $(cat "$T/err")"
ok "API down for 3 s: delivered once"
