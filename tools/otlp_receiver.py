#!/usr/bin/env python3
"""otlp_receiver.py - an OTLP/HTTP metrics receiver for rt's tests (stdlib only).

    otlp_receiver.py PORT DIR

POST /v1/metrics: the body (gzip-decoded when Content-Encoding says so) is
answered by the next word of DIR/script (consumed; "ok" when the file is
empty or missing):

    ok       200 {}
    partial  200 with a partialSuccess (3 data points rejected)
    400      400 with a reason (a bad request: never retried)
    429      429 with Retry-After: 1
    429long  429 with Retry-After: 999999999 (the push's own bound must win)
    503      503
    garbage  bytes that are not HTTP, then the connection closed
    silence  no answer at all (the connection is held for 120 s)

Every body answered 200 (ok, partial) is kept as DIR/accepted/N.json; every
other request's body as DIR/refused/N.json; each request's headers as one
JSON line in DIR/requests.log. Listens on 127.0.0.1 only; prints "ready".
"""
import gzip, json, os, sys, threading, time
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer

port, root = int(sys.argv[1]), sys.argv[2]
for sub in ("accepted", "refused"):
    os.makedirs(os.path.join(root, sub), exist_ok=True)
lock = threading.Lock()
count = [0]


def next_word():
    path = os.path.join(root, "script")
    with lock:
        try:
            words = open(path).read().split()
        except FileNotFoundError:
            words = []
        if not words:
            return "ok"
        with open(path, "w") as f:
            f.write(" ".join(words[1:]))
        return words[0]


class Handler(BaseHTTPRequestHandler):
    protocol_version = "HTTP/1.1"

    def log_message(self, *a):
        pass

    def do_POST(self):
        n = int(self.headers.get("Content-Length", 0))
        body = self.rfile.read(n)
        if self.headers.get("Content-Encoding") == "gzip":
            body = gzip.decompress(body)
        word = next_word()
        with lock:
            count[0] += 1
            k = count[0]
            with open(os.path.join(root, "requests.log"), "a") as f:
                f.write(json.dumps({"n": k, "path": self.path, "answer": word,
                                    "headers": dict(self.headers.items())}) + "\n")
        kept = "accepted" if word in ("ok", "partial") else "refused"
        with open(os.path.join(root, kept, "%06d.json" % k), "wb") as f:
            f.write(body)
        if word == "garbage":
            self.wfile.write(b"NOT HTTP AT ALL\r\n\r\n")
            self.close_connection = True
            return
        if word == "silence":
            time.sleep(120)
            self.close_connection = True
            return
        status, extra, reply = 200, {}, b"{}"
        if word == "partial":
            reply = json.dumps({"partialSuccess": {"rejectedDataPoints": "3",
                                                   "errorMessage": "test receiver rejects 3"}}).encode()
        elif word == "400":
            status, reply = 400, b'{"code":3,"message":"test receiver: bad request"}'
        elif word == "429":
            status, extra, reply = 429, {"Retry-After": "1"}, b"{}"
        elif word == "429long":
            status, extra, reply = 429, {"Retry-After": "999999999"}, b"{}"
        elif word == "503":
            status, reply = 503, b"{}"
        self.send_response(status)
        self.send_header("Content-Type", "application/json")
        self.send_header("Content-Length", str(len(reply)))
        for h, v in extra.items():
            self.send_header(h, v)
        self.end_headers()
        self.wfile.write(reply)


srv = ThreadingHTTPServer(("127.0.0.1", port), Handler)
srv.daemon_threads = True
print("ready", flush=True)
srv.serve_forever()
