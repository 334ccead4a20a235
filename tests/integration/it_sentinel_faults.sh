#!/bin/sh
# The uploader against a misbehaving Sentinel API: refusals, garbage, unsafe
# answers, slow answers, dropped connections and a down window. Delivery
# must stay exactly once; a refused run must not disturb local output.
. "$(dirname "$0")/lib.sh"
HERE=$(cd "$(dirname "$0")/../.." && pwd)
[ -d "$HERE/tests/peers/node_modules/@20minutes/s3rver" ] || fail "S3 peer not installed (tools/setup.sh runs npm ci in tests/peers)"
port() { python3 -c 'import socket; s=socket.socket(); s.bind(("127.0.0.1",0)); print(s.getsockname()[1])'; }
S3P=$(port)
node "$HERE/tests/peers/s3peer.js" $S3P "$T/s3" rt-test > "$T/s3.out" 2>&1 &
track $!
wait_for grep -q ready "$T/s3.out" || fail "S3 peer did not start"
api() {
	APIP=$(port)
	python3 "$HERE/tools/sentinel_server.py" $APIP "$T/api.log" "$@" > "$T/api.out" 2>&1 &
	APIPID=$!; track $APIPID
	wait_for grep -q ready "$T/api.out" || fail "Sentinel server did not start"
	export SENTINEL_API_URL=http://127.0.0.1:$APIP
}
export SENTINEL_API_TOKEN=test-token TRACKER_S3_ENDPOINT=http://127.0.0.1:$S3P RT_IMDS_ADDR=127.0.0.1:1
rec_only() { env -u SENTINEL_API_TOKEN "$REC" "$@"; }

delivered() { # RUN: every replayed line in the run's objects or inline data, once
	"$EXP" replay "$1" -f csv > "$T/replay.csv"
	python3 - "$T" "$1" <<'PY'
import glob, gzip, json, os, sys
from collections import Counter
t, run = sys.argv[1], sys.argv[2]
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
set -e
[ $rc -eq 5 ] || fail "exit $rc"
[ "$(wc -l < "$T/live.csv")" -ge 8 ] || fail "local output stopped: $(wc -l < "$T/live.csv") lines"
grep -q "Sentinel refused the run" "$T/err" || fail "message: $(cat "$T/err")"
kill $APIPID; wait $APIPID 2>/dev/null || true
ok "422 on start: local output and exit code unaffected"

# garbage, an unsafe run id, a dropped connection and a slow answer on start;
# 500 then garbage on refresh; garbage then 500 on finish
api --expire-secs 120 --faults start:garbage:1,start:badid:1,start:drop:1,start:slow:1,refresh-credentials:500:1,refresh-credentials:garbage:1,finish:garbage:1,finish:500:1
rec_only --quiet -i 0.02 --count 150 &
rec=$!; track $rec
wait_for sh -c "\"$EXP\" runs | grep -q running" || fail "recorder did not start"
TRACKER_UPLOAD_INTERVAL=0.3 "$EXP" upload latest 2> "$T/err" || fail "upload: $(cat "$T/err")"
wait $rec 2>/dev/null || true
delivered 2 || fail "delivery after faults"
[ "$(grep -c "retrying until it succeeds" "$T/err")" -le 3 ] || fail "too many warnings: $(cat "$T/err")"
kill $APIPID; wait $APIPID 2>/dev/null || true
ok "garbage, unsafe id, drops, slow answers: delivered once"

# the API is down (connections dropped) for 3 s at the start of a live run
api --down-secs 3
rec_only --quiet -i 0.02 --count 250 &
rec=$!; track $rec
wait_for sh -c "\"$EXP\" runs | grep -q running" || fail "recorder did not start"
TRACKER_UPLOAD_INTERVAL=0.3 "$EXP" upload latest 2> "$T/err" || fail "upload: $(cat "$T/err")"
wait $rec 2>/dev/null || true
delivered 3 || fail "delivery after the down window"
grep -q "succeeded again" "$T/err" || fail "no recovery line: $(cat "$T/err")"
ok "API down for 3 s: delivered once"
