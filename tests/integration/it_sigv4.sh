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
