#!/bin/sh
# rt-export upload against real peers on 127.0.0.1: the Sentinel test server
# (tools/sentinel_server.py) and an S3 server that verifies SigV4
# (@20minutes/s3rver). Every recorded sample must reach the bucket exactly
# once and finish must be called once with every object, across kill -9 of
# the uploader, Sentinel errors and an S3 outage.
. "$(dirname "$0")/lib.sh"
HERE=$(cd "$(dirname "$0")/../.." && pwd)
[ -d "$HERE/tests/peers/node_modules/@20minutes/s3rver" ] || fail "S3 peer not installed (tools/setup.sh runs npm ci in tests/peers)"
S3P=$(port); APIP=$(port)
start_s3() { serve s3 node "$HERE/tests/peers/s3peer.js" $S3P "$T/s3" rt-test; S3PID=$SERVED; }
start_api() { serve api python3 "$HERE/tools/sentinel_server.py" $APIP "$T/api.log" "$@"; APIPID=$SERVED; }
start_s3
start_api
export SENTINEL_API_TOKEN=test-token SENTINEL_API_URL=http://127.0.0.1:$APIP
export TRACKER_S3_ENDPOINT=http://127.0.0.1:$S3P
# cloud discovery probes go to a closed local port (refused at once)...
export RT_IMDS_ADDR=127.0.0.1:1
# recorders that must not start their own uploader (steps 1-5 upload by hand)
rec_only() { env -u SENTINEL_API_TOKEN "$REC" "$@"; }

# check RUN: the objects of the run's Sentinel id, unzipped and unioned,
# hold every replayed line exactly once; finish was called once with them
check() {
	"$EXP" replay "$1" -f csv > "$T/replay.csv"
	python3 - "$T" "$1" <<'PY' || fail "delivery check for run $1"
import glob, gzip, json, os, sys
t, run = sys.argv[1], sys.argv[2]
cp = json.load(open(os.path.join(t, "store", "upload", run + ".json")))
sid = cp["sentinel_run"]
calls = [json.loads(l) for l in open(os.path.join(t, "api.log"))]
fin = [c for c in calls if c["kind"] == "finish" and sid in c["path"]]
assert len(fin) == 1, "finish called %d times" % len(fin)
replay = open(os.path.join(t, "replay.csv")).read().splitlines()
header, want = replay[0], replay[1:]
got = []
objs = sorted(glob.glob(os.path.join(t, "s3", "rt-test", "uploads", sid, "*.csv.gz._S3rver_object")))
body = fin[0]["body"]
if body["data_source"] == "inline":
    assert not objs
    lines = body["data_csv"].splitlines()
    assert lines[0] == header
    got = lines[1:]
else:
    uris = sorted(body["data_uris"])
    keys = sorted("s3://rt-test/uploads/%s/%s" % (sid, os.path.basename(o)[:-len("._S3rver_object")]) for o in objs)
    assert uris == keys, (uris, keys)
    for o in objs:
        lines = gzip.decompress(open(o, "rb").read()).decode().splitlines()
        assert lines[0] == header
        got += lines[1:]
# lines can repeat on an idle host: compare as multisets
from collections import Counter
cw, cg = Counter(want), Counter(got)
dups = sum((cg - cw).values())
missing = sum((cw - cg).values())
print("run %s: %d samples recorded, %d delivered, %d duplicated, %d missing, %d objects"
      % (run, len(want), len(got), dups, missing, len(objs)))
assert dups == 0 and missing == 0
PY
}

# 1. a finished run that never uploaded: finish carries it inline
rec_only --quiet -i 0.02 --count 20 -n inline-job
TRACKER_UPLOAD_INTERVAL=60 "$EXP" upload 1 || fail "upload 1"
check 1
grep -rq test-token "$T/store/upload" && fail "the token was written to the checkpoint"
[ "$(stat -c %a "$T/store/upload/1.json")" = 600 ] || fail "checkpoint not 0600"
"$EXP" upload 1 -v 2>&1 | grep -q "already finished" || fail "second upload should say finished"
ok "inline finish"

# 2. a live run in several batches, with a concurrent uploader refused
rec_only --quiet -i 0.02 --count 150 &
rec=$!; track $rec
wait_for sh -c "\"$EXP\" runs | grep -q running" || fail "recorder did not start"
TRACKER_UPLOAD_INTERVAL=0.5 "$EXP" upload latest &
up=$!; track $up
sleep 0.5
echo "uploader RSS while streaming: $(ps -o rss= -p $up) KiB"
"$EXP" upload latest 2> "$T/err" && fail "a second uploader was not refused"
grep -q "already being uploaded" "$T/err" || fail "message: $(cat "$T/err")"
wait_pid $rec 20 || fail "recorder"
wait_pid $up 30 || fail "uploader did not finish"
check 2
ok "live run in batches"

# 3. kill -9 the uploader again and again while it uploads a live run;
#    Sentinel fails the first start twice
kill $APIPID; wait $APIPID 2>/dev/null || true
start_api --fail-start 2
# RT_SOAK_CYCLES=60 for the long soak (a separate command, not in CI)
cycles=${RT_SOAK_CYCLES:-12}
RT_RING_SLOTS=16 rec_only --quiet -i 0.01 --count $((cycles * 40 + 400)) & # committed as it runs
rec=$!; track $rec
wait_for sh -c "\"$EXP\" runs | grep -q running" || fail "recorder did not start"
cycle=0
while [ $cycle -lt $cycles ]; do
	TRACKER_UPLOAD_INTERVAL=0.1 "$EXP" upload latest 2>/dev/null &
	up=$!; track $up
	sleep 0.$(( (cycle * 37) % 5 + 1 ))
	kill -9 $up 2>/dev/null || true
	wait $up 2>/dev/null || true
	cycle=$((cycle + 1))
done
# 4. S3 goes away mid-upload and comes back
kill $S3PID; wait $S3PID 2>/dev/null || true
TRACKER_UPLOAD_INTERVAL=0.1 "$EXP" upload latest 2> "$T/outage.err" &
up=$!; track $up
sleep 1.5
start_s3
wait_pid $up 60 || fail "uploader did not finish after the outage"
wait_pid $rec 20 || fail "recorder"
check 3
grep -q "retrying until it succeeds" "$T/outage.err" || fail "no outage warning: $(cat "$T/outage.err")"
[ "$(grep -c "retrying" "$T/outage.err")" -le 2 ] || fail "more than one warning per outage"
ok "$cycle kill -9 cycles, Sentinel errors and an S3 outage: every sample exactly once"

# credentials that expire within 5 minutes are refreshed before a PUT
kill $APIPID; wait $APIPID 2>/dev/null || true
start_api --expire-secs 120
RT_RING_SLOTS=16 rec_only --quiet -i 0.02 --count 100 & # groups of 8: committed as it runs
rec=$!; track $rec
wait_for sh -c "\"$EXP\" runs | grep -q running" || fail "recorder did not start"
TRACKER_UPLOAD_INTERVAL=0.3 "$EXP" upload latest || fail "upload with short credentials"
wait_pid $rec 20 || true
run=$("$EXP" runs | awk 'NR>1{id=$1} END{print id}')
check "$run"
grep -q refresh-credentials "$T/api.log" || fail "credentials were not refreshed"
ok "short-lived credentials refreshed"

# 5. a wrong signature is refused by S3: nothing is stored, the uploader retries
kill $APIPID; wait $APIPID 2>/dev/null || true
start_api --secret WRONG
RT_RING_SLOTS=16 rec_only --quiet -i 0.02 --count 200 &
rec=$!; track $rec
wait_for sh -c "\"$EXP\" runs | grep -q running" || fail "recorder did not start"
TRACKER_UPLOAD_INTERVAL=0.01 "$EXP" upload latest 2> "$T/sig.err" &
up=$!; track $up
sleep 2
kill -9 $up
wait_pid $rec 20 || true
grep -q "SignatureDoesNotMatch" "$T/sig.err" || fail "S3 did not refuse a bad signature: $(cat "$T/sig.err")"
ok "S3 checks the signature"

# no token: no upload
( unset SENTINEL_API_TOKEN; "$EXP" upload 1 2> "$T/tok.err" ) && fail "upload without token"
grep -q "SENTINEL_API_TOKEN (or SENTINEL_API_KEY) is not set" "$T/tok.err" || fail "message: $(cat "$T/tok.err")"
ok "no token, no upload"

# 6. wrapper mode: the recorder streams its own run (token passed through the
#    environment only) and the tracker exits with the command's code once
#    the run is finished on Sentinel
kill $APIPID; wait $APIPID 2>/dev/null || true
start_api
# ...except here, where an AWS-like metadata service answers
IMDSP=$(port)
serve imds python3 "$HERE/tools/imds_server.py" $IMDSP aws
set +e
RT_IMDS_ADDR=127.0.0.1:$IMDSP TRACKER_SUPPRESS_FIELDS=host_ip,host_hostname TRACKER_UPLOAD_INTERVAL=0.3 \
	"$RT" --quiet -i 0.05 -n wrapped -- sh -c "sleep 1.5; date +%s.%N > '$T/exit_t'; exit 3"
rc=$?
set -e
[ $rc -eq 3 ] || fail "wrapper exit $rc"
run=$("$EXP" runs | awk 'NR>1{id=$1} END{print id}')
check "$run"
python3 - "$T" <<'PY' || fail "finish of the wrapped run"
import json, sys
t = sys.argv[1]
calls = [json.loads(l) for l in open(t + "/api.log")]
fin = [c for c in calls if c["kind"] == "finish"][-1]
assert fin["body"]["exit_code"] == 3 and fin["body"]["run_status"] == "failed", fin["body"]
start = [c for c in calls if c["kind"] == "start"][-1]
assert start["body"]["job_name"] == "wrapped" and json.loads(start["body"]["command"])[0] == "sh"
assert "pid" not in start["body"]
b = start["body"]
assert b["host_vcpus"] >= 1 and b["host_memory_mib"] > 0 and b["host_storage_gb"] is not None
assert b["host_hostname"] is None and b["host_ip"] is None, "suppressed fields were sent"
assert b["cloud_vendor_id"] == "aws" and b["cloud_account_id"] == "123456789012", b
assert all(c["auth_ok"] for c in calls)
took = fin["t"] - float(open(t + "/exit_t").read())
print("command exit to finish call: %.3f s" % took)
assert took < 5
PY
ok "wrapper mode streams and finishes its run"

# 7. the network is down when the command exits: the tracker still exits
#    with the command's code, within the bounded wait, and says what to do
kill $APIPID; wait $APIPID 2>/dev/null || true
kill $S3PID; wait $S3PID 2>/dev/null || true
set +e
TRACKER_UPLOAD_INTERVAL=0.3 "$RT" --quiet -i 0.05 -- sh -c "sleep 0.3; exit 4" 2> "$T/down.err"
rc=$?
set -e
[ $rc -eq 4 ] || fail "exit $rc with the network down"
grep -q "finish it later with: rt-export upload" "$T/down.err" || fail "message: $(cat "$T/down.err")"
start_api
start_s3
run=$("$EXP" runs | awk 'NR>1{id=$1} END{print id}')
TRACKER_UPLOAD_INTERVAL=0.3 "$EXP" upload "$run" || fail "finishing later"
ok "network down at exit: finished later by hand"

# 8. S3 says the session token expired (403 ExpiredToken, what S3 answers
#    when a session token ran out mid-run): the uploader asks Sentinel for
#    new credentials at once and puts the batch again with them
FAKEP=$(port)
cat > "$T/expired_s3.py" <<'PY'
import sys
from http.server import BaseHTTPRequestHandler, HTTPServer
port, log = int(sys.argv[1]), sys.argv[2]
first = [True]
class H(BaseHTTPRequestHandler):
    def do_PUT(self):
        n = int(self.headers.get("Content-Length", 0))
        self.rfile.read(n)
        tok = self.headers.get("x-amz-security-token", "")
        with open(log, "a") as f:
            f.write(tok + "\n")
        if first[0]:
            first[0] = False
            body = (b"<?xml version='1.0'?><Error><Code>ExpiredToken</Code>"
                    b"<Message>The provided token has expired.</Message></Error>")
            self.send_response(400)
        else:
            body = b""
            self.send_response(200)
        self.send_header("Content-Length", str(len(body)))
        self.end_headers()
        self.wfile.write(body)
    def log_message(self, *a):
        pass
srv = HTTPServer(("127.0.0.1", port), H)
print("ready", flush=True)
srv.timeout = 0.5
import time
end = time.time() + 60
while time.time() < end:
    srv.handle_request()
PY
serve expired python3 "$T/expired_s3.py" $FAKEP "$T/tokens.log"
rec_only --quiet -i 0.02 --count 10 -n expiry
run=$("$EXP" runs | awk 'NR>1{id=$1} END{print id}')
TRACKER_S3_ENDPOINT=http://127.0.0.1:$FAKEP TRACKER_UPLOAD_INTERVAL=0.01 "$EXP" upload "$run" 2> "$T/exp.err" ||
	fail "upload after an expired token: $(cat "$T/exp.err")"
[ "$(wc -l < "$T/tokens.log")" -ge 2 ] || fail "the batch was not put again"
[ "$(sed -n 1p "$T/tokens.log")" != "$(sed -n 2p "$T/tokens.log")" ] ||
	fail "put again with the same token: no new credentials"
grep -q '"kind": *"refresh-credentials"' "$T/api.log" || fail "Sentinel was not asked for new credentials"
ok "S3's ExpiredToken: new credentials from Sentinel, the batch put again"
