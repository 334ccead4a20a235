#!/usr/bin/env python3
"""sentinel_server.py - a Sentinel API test server for rt's tests (stdlib only).

    sentinel_server.py PORT LOG [--bucket B] [--fail-start N] [--fail-finish N]
                                [--expire-secs S] [--secret SECRET]
                                [--faults KIND:MODE:N,...] [--down-secs S]

Implements POST /runs, /runs/{id}/refresh-credentials and /runs/{id}/finish
as the backend does (reference.md section 4), issues credentials accepted by
the S3 test peer (S3RVER/S3RVER, with a session token and a short expiry),
checks the bearer token (SENTINEL_TEST_TOKEN, default "test-token"), and
appends every request (method, path, headers it cares about, JSON body,
gzip-decoded) to LOG as one JSON line, for assertions. --fail-* answer 500
to the first N such calls. --faults injects, for the first N calls of KIND
(start, refresh-credentials, finish) in order: 500, 401, 422, garbage (200
with a body that is not JSON), badid (200 with an unsafe run id), slow
(answers after 3 s) or drop (closes the connection without answering).
--down-secs drops every request for S seconds after the first one.
Listens on 127.0.0.1 only; prints "ready".
"""
import datetime, gzip, json, sys, threading, uuid
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer

args = sys.argv[1:]
port, log = int(args[0]), args[1]
opts = dict(zip(args[2::2], args[3::2]))
bucket = opts.get("--bucket", "rt-test")
fails = {"start": int(opts.get("--fail-start", 0)), "finish": int(opts.get("--fail-finish", 0))}
expire = int(opts.get("--expire-secs", 3600))
secret = opts.get("--secret", "S3RVER")  # a wrong one proves S3 checks signatures
token = __import__("os").environ.get("SENTINEL_TEST_TOKEN", "test-token")
lock = threading.Lock()
faults = {}
for spec in filter(None, opts.get("--faults", "").split(",")):
    k, mode, n = spec.split(":")
    faults.setdefault(k, []).extend([mode] * int(n))
down_secs = float(opts.get("--down-secs", 0))
first_request = []


def creds():
    exp = datetime.datetime.now(datetime.timezone.utc) + datetime.timedelta(seconds=expire)
    return {"access_key": "S3RVER", "secret_key": secret,
            "session_token": "tok-" + uuid.uuid4().hex,
            "expiration": exp.strftime("%Y-%m-%dT%H:%M:%SZ")}


class H(BaseHTTPRequestHandler):
    def log_message(self, *a):
        pass

    def reply(self, code, obj):
        body = json.dumps(obj).encode()
        self.send_response(code)
        self.send_header("Content-Type", "application/json")
        self.send_header("Content-Length", str(len(body)))
        self.end_headers()
        self.wfile.write(body)

    def do_POST(self):
        raw = self.rfile.read(int(self.headers.get("Content-Length", 0)))
        if self.headers.get("Content-Encoding") == "gzip":
            raw = gzip.decompress(raw)
        try:
            body = json.loads(raw) if raw else None
        except ValueError:
            body = {"_unparsable": raw.decode("latin-1")}
        parts = self.path.strip("/").split("/")
        kind = "start" if parts == ["runs"] else parts[-1] if len(parts) == 3 else "?"
        fault = None
        with lock:
            if not first_request:
                first_request.append(__import__("time").time())
            if down_secs and __import__("time").time() - first_request[0] < down_secs:
                fault = "drop"
            elif faults.get(kind):
                fault = faults[kind].pop(0)
            with open(log, "a") as f:
                f.write(json.dumps({"kind": kind, "path": self.path, "body": body,
                                    "t": __import__("time").time(), "fault": fault,
                                    "auth_ok": self.headers.get("Authorization") == "Bearer " + token}) + "\n")
        if fault == "drop":
            self.close_connection = True
            self.connection.shutdown(__import__("socket").SHUT_RDWR)
            return
        if fault == "slow":
            __import__("time").sleep(3)
        if fault in ("500", "401", "422"):
            return self.reply(int(fault), {"detail": "injected " + fault})
        if fault == "garbage":
            body_ = b"<html>not json{"
            self.send_response(200)
            self.send_header("Content-Length", str(len(body_)))
            self.end_headers()
            self.wfile.write(body_)
            return
        with lock:
            if self.headers.get("Authorization") != "Bearer " + token:
                return self.reply(401, {"detail": "bad token"})
            if kind in fails and fails[kind] > 0:
                fails[kind] -= 1
                return self.reply(500, {"detail": "injected failure"})
        if kind == "start":
            if "pid" in (body or {}):
                return self.reply(422, {"detail": "pid is not accepted"})
            rid = "../../etc" if fault == "badid" else uuid.uuid4().hex[:12]
            return self.reply(200, {"run_id": rid, "upload_uri_prefix": "s3://%s/uploads" % bucket,
                                    "upload_credentials": creds()})
        if kind == "refresh-credentials":
            return self.reply(200, {"upload_credentials": creds()})
        if kind == "finish":
            return self.reply(200, {"status": "ok"})
        return self.reply(404, {"detail": "no such endpoint"})


srv = ThreadingHTTPServer(("127.0.0.1", port), H)
print("ready", flush=True)
srv.serve_forever()
