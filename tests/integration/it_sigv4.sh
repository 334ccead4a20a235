#!/bin/sh
# rt's SigV4 against botocore (AWS's own implementation, Debian's
# python3-botocore) on randomized S3 PUTs, keys with characters that need
# URI-encoding included.
. "$(dirname "$0")/lib.sh"
python3 -c "import botocore" 2>/dev/null || fail "python3-botocore is not installed (tools/setup.sh installs it)"
python3 - "$BUILD/sigv4-sign" "$T" <<'PY' || fail "botocore cross-check"
import datetime, os, random, string, subprocess, sys
import botocore.auth, botocore.awsrequest, botocore.credentials

class FixedClock:  # botocore reads the time itself; pin it
    def __init__(self, t): self.t = t
    def utcnow(self): return self.t
    def now(self, tz=None): return self.t.replace(tzinfo=tz) if tz else self.t
    def __getattr__(self, k): return getattr(datetime.datetime, k)

rnd = random.Random(20261121)
signer, tmp = sys.argv[1], sys.argv[2]
alphabet = string.ascii_letters + string.digits + "-._~ +=$&@!*'()[],;:%é"
for i in range(200):
    ak = "".join(rnd.choice(string.ascii_uppercase + string.digits) for _ in range(20))
    sk = "".join(rnd.choice(string.ascii_letters + string.digits + "/+") for _ in range(40))
    tok = "".join(rnd.choice(string.ascii_letters + string.digits + "/+=") for _ in range(rnd.randint(0, 300)))
    region = rnd.choice(["eu-central-1", "us-east-1", "ap-southeast-2"])
    when = datetime.datetime(2026, 1, 1) + datetime.timedelta(seconds=rnd.randint(0, 10**8))
    key = "/".join("".join(rnd.choice(alphabet) for _ in range(rnd.randint(1, 12)))
                   for _ in range(rnd.randint(1, 4)))
    host = "bucket-%d.s3.%s.amazonaws.com" % (i, region)
    body = os.urandom(rnd.randint(0, 4096))
    path = "/" + key
    req = botocore.awsrequest.AWSRequest(
        method="PUT", url="https://" + host + botocore.auth.quote(path.encode(), safe="/~"),
        data=body, headers={})
    creds = botocore.credentials.Credentials(ak, sk, tok or None)
    auth = botocore.auth.S3SigV4Auth(creds, "s3", region)
    saved = botocore.auth.datetime.datetime
    botocore.auth.datetime.datetime = FixedClock(when)
    try:
        auth.add_auth(req)
    finally:
        botocore.auth.datetime.datetime = saved
    want = req.headers["Authorization"]
    amz = req.headers["X-Amz-Date"]
    bf = os.path.join(tmp, "body")
    open(bf, "wb").write(body)
    if not tok:
        continue  # rt always sends a session token (Sentinel credentials have one)
    got = subprocess.run([signer, path, amz, region, ak, sk, tok, host, bf],
                         capture_output=True, text=True, check=True).stdout.strip()
    # AWS accepts "," or ", " between the parts; compare the parts
    assert got == want.replace(", ", ","), "request %d (key %r):\n rt       %s\n botocore %s" % (i, key, got, want)
print("200 randomized requests: rt == botocore")
PY
ok "SigV4 matches botocore"

# Amazon Managed Prometheus: rt-export push signs each remote write with
# SigV4 (service aps); a receiver checks it with botocore over the headers
# rt signed, and refuses (403) when it does not match
cat > "$T/aps.py" << 'PY'
import datetime, sys
import botocore.auth, botocore.awsrequest, botocore.credentials
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
port, secret = int(sys.argv[1]), sys.argv[2]
class FixedClock:
    def __init__(self, t): self.t = t
    def utcnow(self): return self.t
    def now(self, tz=None): return self.t.replace(tzinfo=tz) if tz else self.t
    def __getattr__(self, k): return getattr(datetime.datetime, k)
class H(BaseHTTPRequestHandler):
    protocol_version = "HTTP/1.1"
    def log_message(self, *a): pass
    def do_POST(self):
        body = self.rfile.read(int(self.headers["Content-Length"]))
        auth = self.headers.get("Authorization", "")
        signed = auth.split("SignedHeaders=")[1].split(",")[0].split(";") if "SignedHeaders=" in auth else []
        region = auth.split("Credential=")[1].split("/")[2] if "Credential=" in auth else "?"
        hdrs = {k: self.headers[k] for k in self.headers if k.lower() in signed and k.lower() != "host"}
        req = botocore.awsrequest.AWSRequest(method="POST", url="https://%s%s" % (self.headers["Host"], self.path), data=body, headers=hdrs)
        creds = botocore.credentials.Credentials("AKIDTEST", secret, self.headers.get("X-Amz-Security-Token"))
        when = datetime.datetime.strptime(self.headers["X-Amz-Date"], "%Y%m%dT%H%M%SZ")
        saved = botocore.auth.datetime.datetime
        botocore.auth.datetime.datetime = FixedClock(when)
        try:
            botocore.auth.SigV4Auth(creds, "aps", region).add_auth(req)
        finally:
            botocore.auth.datetime.datetime = saved
        want = req.headers["Authorization"].replace(", ", ",")
        ok = auth.replace(", ", ",") == want and region == "eu-west-1" and "aps/aws4_request" in auth
        open(sys.argv[3], "a").write("%s\n rt       %s\n botocore %s\n" % (ok, auth, want))
        self.send_response(204 if ok else 403)
        self.send_header("Content-Length", "0")
        self.end_headers()
srv = ThreadingHTTPServer(("127.0.0.1", port), H)
print("ready", flush=True)
srv.serve_forever()
PY
APS=$(port)
serve aps python3 "$T/aps.py" "$APS" "SECRETKEYTEST" "$T/aps.log"
"$RT" -i 0.2 --quiet -- sleep 1 || fail "a run to push"
export TRACKER_REMOTE_WRITE_SIGV4_REGION=eu-west-1 AWS_ACCESS_KEY_ID=AKIDTEST \
	AWS_SECRET_ACCESS_KEY=SECRETKEYTEST AWS_SESSION_TOKEN=TOKEN/with+chars=
"$EXP" push latest --to prometheus --url "http://127.0.0.1:$APS/workspaces/ws-1/api/v1/remote_write" 2> "$T/aps.err" ||
	fail "a SigV4-signed remote write was refused: $(cat "$T/aps.err") $(tail -3 "$T/aps.log")"
grep -q '^True' "$T/aps.log" || fail "no request checked"
# a receiver with another secret refuses it: the check can fail
APS2=$(port)
serve aps2 python3 "$T/aps.py" "$APS2" "ANOTHERSECRET" "$T/aps2.log"
set +e
"$EXP" push latest --to prometheus --url "http://127.0.0.1:$APS2/api/v1/remote_write" > /dev/null 2>&1
rc=$?
set -e
[ $rc -eq 1 ] || fail "a wrongly signed write was not refused (exit $rc)"
# no credentials: one line, exit 2
set +e
env -u AWS_SECRET_ACCESS_KEY "$EXP" push latest --to prometheus --url "http://127.0.0.1:$APS/x" > /dev/null 2> "$T/aps3.err"
rc=$?
set -e
[ $rc -eq 2 ] && grep -q "AWS_SECRET_ACCESS_KEY" "$T/aps3.err" || fail "no credentials: exit $rc $(cat "$T/aps3.err")"
# a session token that would split the headers, one longer than rt sends
# whole (a 3000-byte one, as STS gives with session tags, is sent whole;
# a new run: the last one was delivered, exactly once)
"$RT" -i 0.2 --quiet -- sleep 0.5 || fail "a second run to push"
: > "$T/aps.log"
AWS_SESSION_TOKEN=$(head -c 3000 /dev/zero | tr '\0' T) "$EXP" push latest --to prometheus \
	--url "http://127.0.0.1:$APS/workspaces/ws-1/api/v1/remote_write" 2> "$T/aps4.err" ||
	fail "a 3000-byte session token: $(cat "$T/aps4.err")"
grep -q "^True" "$T/aps.log" || fail "a 3000-byte session token was not signed right: $(head -c 600 "$T/aps.log")"
for tok in "$(printf 'tok\r\nX-Evil: 1')" "$(head -c 5000 /dev/zero | tr '\0' T)"; do
	: > "$T/aps.log"
	set +e
	AWS_SESSION_TOKEN=$tok "$EXP" push latest --to prometheus --url "http://127.0.0.1:$APS/x" > /dev/null 2> "$T/aps3.err"
	rc=$?
	set -e
	[ $rc -eq 2 ] && [ "$(wc -l < "$T/aps3.err")" -eq 1 ] && grep -q "AWS_SESSION_TOKEN" "$T/aps3.err" ||
		fail "a bad session token: exit $rc $(cat "$T/aps3.err")"
	[ ! -s "$T/aps.log" ] || fail "a bad session token was sent"
done
ok "remote write signed with SigV4 (aps) matches botocore over the signed headers; a wrong secret is refused; no credentials, a token with CR LF or over 4096 bytes: one line, exit 2"
